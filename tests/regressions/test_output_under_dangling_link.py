"""Issue 51 (low): `--out` under a symbolic link that leads nowhere ended in a traceback once the build made its
folder. Such a path is refused before any work, naming the link and where it leads; `--rejects` too. The wording is
that of every path a folder cannot be made at (models.paths.unusable_folder), as for RADSEARCH_HOME
(test_cli_contract.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from retriever.index.output_paths import UnsafeOutput, check_outputs


def test_an_index_folder_under_a_dangling_link_is_refused_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "indexes").symlink_to(tmp_path / "mounted" / "indexes")  # an unmounted share
    with pytest.raises(UnsafeOutput, match=r"indexes is a symbolic link to .*mounted/indexes, which does not exist"):
        check_outputs([], tmp_path / "indexes" / "site")


def test_an_index_folder_that_is_itself_a_dangling_link_or_a_rejects_file_under_one_is_refused(tmp_path: Path) -> None:
    (tmp_path / "idx").symlink_to(tmp_path / "gone")
    with pytest.raises(UnsafeOutput, match=r"idx is a symbolic link to .*gone, which does not exist"):
        check_outputs([], tmp_path / "idx")
    (tmp_path / "logs").symlink_to("/nonexistent-radsearch-logs")
    with pytest.raises(UnsafeOutput, match="rejects file .*logs is a symbolic link"):
        check_outputs([], tmp_path / "out", tmp_path / "logs" / "rejects.jsonl")
    assert not (tmp_path / "out").exists()
