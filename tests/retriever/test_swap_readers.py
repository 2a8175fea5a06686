"""Readers of an index that an update swaps meanwhile (issue 39's review). One that finds it between the two renames
of a swap waits for the writer's second rename instead of moving the old folder back, which made the update fail
(R2). One that is checking or reading the files when the swap happens reads the new index again instead of calling
the healthy index corrupt (R1): the swap is injected at a point of the read, so the interleaving is not left to
chance."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from report_fixtures import REPORTS

from retriever.index import folder as index_folder
from retriever.index.errors import IndexLoadError
from retriever.index.manifest import Manifest
from retriever.index.report_index import ReportIndex
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


@pytest.fixture(scope="module")
def two_versions(minilm) -> tuple[ReportIndex, ReportIndex]:
    """An index of every fixture report, and the version an update leaves: two of them."""
    return ReportIndex.build(REPORTS, minilm), ReportIndex.build(REPORTS[:2], minilm)


#: Where in a reader's load the update's swap happens: after the manifest is read (while the files are checked against
#: it), and after the files were checked (while they are read).
SWAP_POINTS = {"checking": (Manifest, "verify"), "reading": (index_folder, "read_vector_index")}


@pytest.mark.parametrize("point", SWAP_POINTS)
def test_a_swap_while_an_index_is_read_is_not_corruption(
    two_versions: tuple[ReportIndex, ReportIndex], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    first, updated = two_versions
    folder = tmp_path / "index"
    first.save(folder)
    owner, name = SWAP_POINTS[point]
    original: Callable[..., Any] = getattr(owner, name)
    swaps: list[str] = []

    def swap_then_continue(*args: Any, **kwargs: Any) -> Any:
        if not swaps:  # the update swaps its new index in once, at this point of the read
            swaps.append(point)
            updated.save(folder)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, swap_then_continue)
    index = ReportIndex.load(folder)
    assert swaps == [point]
    assert index.manifest.reports == 2 and index.manifest.corpus_sha256 == updated.manifest.corpus_sha256
    found = index.search("effusion pneumonia nodule cardiomegaly", k=10, method="bm25")
    assert {hit.report.id for hit in found} == {"t:1", "t:2"}  # the new index's files, all of them
    monkeypatch.undo()
    data = bytearray((folder / "impression.faiss").read_bytes())
    data[-10] ^= 0xFF  # a truly corrupt index is still reported as such
    (folder / "impression.faiss").write_bytes(bytes(data))
    with pytest.raises(IndexLoadError, match="SHA-256"):
        ReportIndex.load(folder)
