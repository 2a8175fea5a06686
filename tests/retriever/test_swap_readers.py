"""A reader that finds an index between the two renames of a swap (issue 39's review): it waits for the writer's
second rename instead of moving the old folder back, which made the update fail."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from retriever.index.swap import restore_interrupted

HOLD_LOCK = """
import fcntl, sys, time
lock = open(sys.argv[1], "w")
fcntl.flock(lock, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(30)
"""


def test_a_reader_waits_for_a_swap_in_progress_instead_of_undoing_it(tmp_path: Path) -> None:
    target, old, staged = tmp_path / "index", tmp_path / ".index.old", tmp_path / ".index.tmp-1"
    for folder, version in ((old, "old"), (staged, "new")):
        folder.mkdir()
        (folder / "version").write_text(version, encoding="utf-8")
    writer = subprocess.Popen(  # another process's update, holding the folder's writer lock
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path / ".index.lock")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "locked"
        second_rename = threading.Timer(0.3, lambda: staged.rename(target))  # old was moved aside: the first rename
        second_rename.start()
        started = time.monotonic()
        assert restore_interrupted(target) is False
        second_rename.join()
        assert (target / "version").read_text(encoding="utf-8") == "new"
        assert time.monotonic() - started < 5
    finally:
        writer.kill()
        writer.wait()


def test_a_swap_killed_between_its_renames_is_still_restored(tmp_path: Path) -> None:
    target, old = tmp_path / "index", tmp_path / ".index.old"
    old.mkdir()
    (tmp_path / ".index.lock").write_text("", encoding="utf-8")  # left by the killed writer, no longer locked
    assert restore_interrupted(target) is True and target.is_dir() and not old.exists()
