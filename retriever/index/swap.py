"""Replacing an index folder as a whole: staged beside it, swapped in by two renames, recoverable after a crash.

A new index is written to `.NAME.tmp-*` next to NAME. The swap moves NAME to `.NAME.old`, moves the temp folder to
NAME, then deletes `.NAME.old`. Between the two renames NAME does not exist, so:
- an error there (disk full, permissions) moves `.NAME.old` back before the error is raised;
- a process killed there leaves `.NAME.old`; `restore_interrupted` moves it back, which loading and saving do first.
  A reader that finds NAME missing while a writer of another process holds the folder's lock is between the renames
  of a live swap: it waits for the second rename instead (moving `.NAME.old` back made that rename, and the update,
  fail).
  The old index, not the finished temp folder, is restored: the build that was killed never reported success, and
  a temp folder may belong to a build still running, which will rename it itself.
A reader that checks and reads the files of NAME while a swap replaces it would mix two indexes (a manifest of one,
files of the other, which fail its checksums): it compares `generation` before and after and reads again when they
differ.
Temp folders of killed runs are removed by the next `stage` beside them: each records its owner (host and pid), and
it is removed once that process is gone, or after STALE_AFTER seconds for a temp folder without a readable owner
(an older release's, or another host's, whose processes cannot be checked) or with a reused pid.

Why not a symlink NAME -> versioned folder switched with one atomic rename: copying, moving or deleting an index
with ordinary tools would then act on the link, and every listing of index folders would show the versions too.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)

#: How long a reader waits for a live swap's second rename (it follows the first at once).
SWAP_WAIT_S = 10.0
#: The index folders whose writer's lock this process holds (a lock of our own is not another writer's).
_WRITING: set[Path] = set()

OWNER_FILE = ".owner.json"
#: Age after which a temp folder is stale whoever owns it: writing an index takes minutes at most (encoding is
#: done before the folder is created).
STALE_AFTER = 24 * 3600


def stage(target: Path) -> Path:
    """A new empty temp folder beside `target`, recorded as this process's; stale ones are removed first."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(target)
    staged = Path(tempfile.mkdtemp(dir=target.parent, prefix=_temp_prefix(target)))
    owner = {"host": socket.gethostname(), "pid": os.getpid()}
    (staged / OWNER_FILE).write_text(json.dumps(owner), encoding="utf-8")
    return staged


class IndexBusy(Exception):
    """Another build or update of the same index folder is running."""


@contextmanager
def one_writer(target: Path) -> Iterator[None]:
    """Held while a build or update writes `target`: a second one is refused (IndexBusy), because the later swap
    would drop the earlier's changes and both would share a resumable build's work folder. The lock is the kernel's
    (flock on `.NAME.lock`), so a killed process never leaves it held."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(_lock_path(target), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise IndexBusy(f"another build or update of {target} is running; try again when it has finished") from exc
        _WRITING.add(target.absolute())
        try:
            yield
        finally:
            _WRITING.discard(target.absolute())


def _lock_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.lock")


def _another_writer(target: Path) -> bool:
    """Whether another process holds `target`'s writer lock (a build or update is running on it)."""
    if target.absolute() in _WRITING:
        return False
    try:
        fd = os.open(_lock_path(target), os.O_RDONLY)
    except OSError:  # no lock file: no writer has run here
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # releases the shared lock if it was taken
    return False


@contextmanager
def replacing(target: Path) -> Iterator[Path]:
    """A staged folder to write the new index into; swapped in for `target` when the block ends without an error,
    removed otherwise. Why one helper: a full build and an update must both leave either the old or the new index."""
    staged = stage(target)
    try:
        yield staged
        swap_in(staged, target)
    except BaseException:
        discard(staged)
        raise


def swap_in(staged: Path, target: Path) -> None:
    """Replace `target` (if any) by the folder `staged`; on an error `target` is left as it was.

    The owner record goes with the folder and is removed from it last: until the swap is done, a temp folder left by
    a killed run must still say whose it was."""
    old = _backup(target)
    moved = os.path.lexists(target)
    if moved:
        discard(old)  # left by a run killed after its second rename: the index at target replaced it
        os.replace(target, old)
    try:
        os.replace(staged, target)
    except BaseException:
        if moved and not target.exists():
            os.replace(old, target)
        raise
    (target / OWNER_FILE).unlink()
    discard(old)


def generation(target: Path, manifest: str) -> tuple[int, ...] | None:
    """What a swap changes about the index folder `target`: its inode and its `manifest` file's inode and modification
    time (None while either is missing). The folder alone could be a reused inode after two swaps; a new manifest
    has a later modification time too."""
    try:
        folder, listing = os.stat(target), os.stat(target / manifest)
    except OSError:
        return None
    return folder.st_dev, folder.st_ino, listing.st_ino, listing.st_mtime_ns


def restore_interrupted(target: Path) -> bool:
    """Move `.NAME.old` back to NAME if a swap was killed between its renames; True if it did.

    Raises OSError, saying which command repairs it, if the rename fails (e.g. a read-only location)."""
    old = _backup(target)
    if os.path.lexists(target) or not os.path.lexists(old):
        return False
    deadline = time.monotonic() + SWAP_WAIT_S
    while _another_writer(target) and time.monotonic() < deadline:  # a live swap: its second rename is due
        if os.path.lexists(target):
            return False
        time.sleep(0.02)
    if os.path.lexists(target):
        return False
    try:
        os.replace(old, target)
    except OSError as exc:
        if target.exists():  # another process restored or saved it meanwhile
            return False
        raise OSError(
            f"no index at {target}, but an interrupted build left the previous one in {old} and it cannot be "
            f"moved back ({exc}): run `mv {old} {target}`"
        ) from exc
    log.warning("restored %s from %s, left by a build that was interrupted while replacing it", target, old)
    return True


def _remove_stale(target: Path) -> None:
    prefix = _temp_prefix(target)
    for path in target.parent.iterdir():
        if path.name.startswith(prefix) and _is_stale(path):
            log.info("removing %s, left by a build that did not finish", path)
            discard(path)


def _is_stale(staged: Path) -> bool:
    try:
        if time.time() - staged.lstat().st_mtime > STALE_AFTER:
            return True
        owner = json.loads((staged / OWNER_FILE).read_text(encoding="utf-8"))
        host, pid = owner["host"], owner["pid"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return host == socket.gethostname() and isinstance(pid, int) and not _running(pid)


def _running(pid: int) -> bool:
    """Whether process `pid` exists (signal 0 checks without signalling; EPERM means it exists, owned by another)."""
    if os.name != "posix":  # os.kill would terminate the process on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def discard(path: Path) -> None:
    """Remove a folder, file or symlink (the link, not its target), if present."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _backup(target: Path) -> Path:
    return target.with_name(f".{target.name}.old")


def _temp_prefix(target: Path) -> str:
    return f".{target.name}.tmp-"
