"""What the paths of a corpus are: files to read, or entries skipped with the reason, so none is skipped silently.

A corpus folder is walked in path order. Hidden entries (a name starting with a dot: `.git`, `.DS_Store`, editor
backups) are skipped, and so are symlinked folders (they can loop or lead outside the corpus, and would read the
same reports twice); symlinked files are read. FIFOs, sockets and devices are never opened: reading a FIFO would
block. Each skipped entry is yielded as `Skipped`, so it is counted and named like a rejected record.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
)


@dataclass(frozen=True)
class Skipped:
    """A path in a corpus that is not read, and why."""

    path: Path
    reason: str


def path_problem(path: Path) -> str | None:
    """Why `path` cannot be read as a file or walked as a folder (symlinks followed), or None if it can."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "dangling symlink" if path.is_symlink() else "no such file or folder"
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kind = next((name for is_kind, name in _SPECIAL_KINDS if is_kind(mode)), "special file")
    return f"not a regular file ({kind})"


def walk_corpus(root: Path) -> Iterator[Path | Skipped]:
    """The regular files under `root` in path order, and a `Skipped` for every entry that is not read."""
    try:
        with os.scandir(root) as entries:
            ordered = sorted(entries, key=lambda entry: entry.name)
    except OSError as exc:
        yield Skipped(root, f"cannot read folder: {exc.strerror or exc}")
        return
    for entry in ordered:
        path = Path(entry.path)
        if entry.name.startswith("."):
            yield Skipped(path, "hidden folder skipped" if entry.is_dir() else "hidden file skipped")
        elif entry.is_dir(follow_symlinks=False):
            yield from walk_corpus(path)
        elif entry.is_symlink() and entry.is_dir():
            yield Skipped(path, "symlinked folder not followed")
        elif (problem := path_problem(path)) is not None:
            yield Skipped(path, problem)
        else:
            yield path
