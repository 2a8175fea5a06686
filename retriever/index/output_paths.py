"""Where `assistant index` may write: never over its inputs, never over a folder that is not an index.

Why: the index folder is replaced as a whole and the rejects file is rewritten, so a mistyped `--out` or
`--rejects` used to delete report files (`assistant index reports/ --out reports/` removed the corpus). Paths are
compared after resolving symlinks, so a link to the corpus is the corpus; an input is never written over, even with
`--overwrite`, which only allows replacing a folder that holds something other than an index. A place where
nothing can be written (under a file, a read-only mount, `/proc`) is refused before any work too, so a mistyped
path leaves no build folder behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from models.paths import unusable_folder
from retriever.index.manifest import Manifest, written_by_radsearch


class UnsafeOutput(ValueError):
    """Writing this output could destroy data the user did not ask to replace, or cannot be written at all; the
    message says what to do."""


def named_path(path: Path) -> Path:
    """The path an `--out`, `--index` or `--rejects` names: `~` expanded (a quoted `'~'` too), absolute (so `.`
    has a name for the build folder and lock beside it), a symlink followed (what it leads to is replaced, the link
    kept)."""
    absolute = Path(os.path.abspath(path.expanduser()))
    return absolute.resolve() if absolute.is_symlink() else absolute


def _check_writable(output: Path, what: str) -> None:
    """Raise UnsafeOutput unless a file can be created where `output` goes (probed with a temporary file in its
    nearest existing folder: permissions alone do not tell a read-only mount or /proc)."""
    # An existing output is replaced: only a new one needs every part of its path to be a folder it can be made in.
    if not output.exists() and (problem := unusable_folder(output)) is not None:
        raise UnsafeOutput(f"cannot write the {what} {output}: {problem}; choose another path")
    folder = next(p for p in output.parents if p.exists())
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".radsearch-probe-"):
            pass
    except OSError as exc:
        raise UnsafeOutput(f"cannot write the {what} {output}: {exc.strerror or exc} ({folder})") from exc
    if output.is_file() and not os.access(output, os.W_OK):
        raise UnsafeOutput(f"cannot write the {what} {output}: it exists and cannot be replaced")


def check_outputs(inputs: Iterable[Path], out: Path, rejects: Path | None = None, *, overwrite: bool = False) -> None:
    """Raise UnsafeOutput unless the index folder `out` and the `rejects` file are safe to write.

    Refused: an output that is, is inside or contains an input (or a file a symlink in an input folder leads to);
    a rejects file that is a folder or inside the index folder (replacing the folder would delete it); an `out`
    that exists and is not an index, unless `overwrite`. Call before any work, so a mistake costs nothing.
    """
    roots = _input_roots(inputs)
    _check_apart(out, "index folder", roots)
    _check_writable(out, "index folder")
    if rejects is not None:
        _check_apart(rejects, "rejects file", roots)
        _check_writable(rejects, "rejects file")
        if relation := _relation(rejects.resolve(), out.resolve()):
            raise UnsafeOutput(
                f"refusing to write the rejects file {rejects}: it {relation} the index folder {out}, which is "
                "replaced as a whole; choose a --rejects path outside it"
            )
        if rejects.is_dir():
            raise UnsafeOutput(f"refusing to write the rejects file {rejects}: it is a folder; name a file")
    check_replaceable(out, overwrite=overwrite)


def check_replaceable(folder: Path, *, overwrite: bool) -> None:
    """Raise UnsafeOutput if `folder` holds something other than an index (or is a file), unless `overwrite`.

    Nothing, an empty folder and a folder with a readable manifest (even a damaged index: rebuilding is how it is
    repaired; or one of an older format version: rebuilding is how it is upgraded) are replaced freely. A file is
    never replaced: an index is a folder, so a file there is a mistake.
    """
    if not folder.exists():
        return
    if not folder.is_dir():
        raise UnsafeOutput(f"refusing to write an index to {folder}: it exists and is not a folder; choose another")
    if overwrite or not any(folder.iterdir()) or written_by_radsearch(folder):
        return
    try:
        Manifest.read(folder)
    except ValueError as exc:
        raise UnsafeOutput(
            f"refusing to replace {folder}: it is not a RadSearch index ({exc}). Choose another output folder, or "
            "pass --overwrite to delete everything in it and write the index there"
        ) from exc


def build_hint(folder: Path, reports: str = "CORPUS...") -> str:
    """The `assistant index` command that builds an index at `folder`, for a message that says there is none. It
    names `folder` only where that command would write: a hint once said `--out /etc` for `--index /etc` and
    `--out reports.csv` for `--index reports.csv`, which would replace the system folder or is refused (issue 51)."""
    try:
        if unusable_folder(folder) is not None:
            raise UnsafeOutput(str(folder))
        check_replaceable(folder, overwrite=False)
    except UnsafeOutput:
        return f"`assistant index {reports} --out INDEX_FOLDER` (a new or empty folder)"
    return f"`assistant index {reports} --out {folder}`"


def _input_roots(inputs: Iterable[Path]) -> list[Path]:
    """Resolved inputs, plus the resolved targets of symlinks inside input folders (the reader may follow them)."""
    roots = []
    for given in inputs:
        root = given.expanduser().resolve()
        roots.append(root)
        if root.is_dir():
            for parent, dirs, files in os.walk(root):
                links = (Path(parent, name) for name in [*dirs, *files])
                roots += [link.resolve() for link in links if link.is_symlink()]
    return roots


def _check_apart(output: Path, what: str, roots: list[Path]) -> None:
    resolved = output.expanduser().resolve()
    for root in roots:
        if relation := _relation(resolved, root):
            raise UnsafeOutput(
                f"refusing to write the {what} {output}: it {relation} the input {root}; choose a {what} outside "
                "your report files (inputs are never written over, even with --overwrite)"
            )


def _relation(output: Path, other: Path) -> str:
    """How two resolved paths overlap ('is', 'is inside', 'contains'), or '' if they do not."""
    if output == other:
        return "is"
    if output.is_relative_to(other):
        return "is inside"
    if other.is_relative_to(output):
        return "contains"
    return ""
