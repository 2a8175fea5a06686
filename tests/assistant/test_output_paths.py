"""Output-path safety of `assistant index` (issue 15, defect 1): outputs never replace inputs or foreign folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from retriever.index.output_paths import UnsafeOutput, check_outputs


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "reports"
    (folder / "2023").mkdir(parents=True)
    (folder / "2023" / "reports.csv").write_text("id,findings,impression\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("out", "rejects", "reason"),
    [
        ("reports", None, "is the input"),
        ("reports/index", None, "inside the input"),
        (".", None, "contains the input"),
        ("reports-link", None, "is the input"),  # symlinks are resolved before comparing
        ("index", "reports/2023/reports.csv", "inside the input"),
        ("index", "reports/rejects.jsonl", "inside the input"),
        ("index", "index/rejects.jsonl", "inside the index folder"),
        ("index", "index", "is the index folder"),
        ("index", "reports", "is the input"),
    ],
)
def test_outputs_on_inputs_are_refused_even_with_overwrite(
    corpus: Path, tmp_path: Path, out: str, rejects: str | None, reason: str
) -> None:
    (tmp_path / "reports-link").symlink_to(corpus, target_is_directory=True)
    rejects_path = tmp_path / rejects if rejects else None
    with pytest.raises(UnsafeOutput, match=f"refusing.*{reason}"):
        check_outputs([corpus], tmp_path / out, rejects_path, overwrite=True)


def test_a_symlink_inside_the_corpus_makes_its_target_an_input(corpus: Path, tmp_path: Path) -> None:
    """A corpus folder may link to reports kept elsewhere; those are inputs too."""
    elsewhere = tmp_path / "archive"
    elsewhere.mkdir()
    (elsewhere / "old.csv").write_text("id,findings,impression\n", encoding="utf-8")
    (corpus / "archive").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UnsafeOutput, match="inside the input"):
        check_outputs([corpus], tmp_path / "index", elsewhere / "old.csv")


def test_safe_outputs_pass(corpus: Path, tmp_path: Path) -> None:
    check_outputs([corpus], tmp_path / "index", tmp_path / "rejects.jsonl")
    check_outputs([corpus / "2023" / "reports.csv"], corpus / "index")  # beside a file input: not over it
    (tmp_path / "empty").mkdir()
    check_outputs([corpus], tmp_path / "empty")


def test_a_foreign_folder_needs_overwrite(corpus: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "a.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(UnsafeOutput, match="not a RadSearch index.*--overwrite"):
        check_outputs([corpus], foreign)
    check_outputs([corpus], foreign, overwrite=True)
    (tmp_path / "rejects-folder").mkdir()
    with pytest.raises(UnsafeOutput, match="is a folder"):
        check_outputs([corpus], tmp_path / "index", tmp_path / "rejects-folder")


def test_an_index_of_an_older_format_is_replaced_without_overwrite(corpus: Path, tmp_path: Path) -> None:
    """After an upgrade that no longer reads an index (format version bump), rebuilding it in place must not need
    --overwrite: it is still an index, not someone's folder."""
    old = tmp_path / "old-index"
    old.mkdir()
    (old / "manifest.json").write_text('{"version": 1, "encoder": {"name": "minilm"}, "fields": ["impression"]}')
    check_outputs([corpus], old)
    (old / "manifest.json").write_text('{"version": "one"}')  # not an index's manifest
    with pytest.raises(UnsafeOutput, match="not a RadSearch index"):
        check_outputs([corpus], old)
