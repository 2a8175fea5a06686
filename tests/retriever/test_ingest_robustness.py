"""Ingestion must never corrupt, lose or silently skip a record (issue 15, defects 3, 6 and 8).

Each test builds the bad input the issue describes and checks that every record and every skipped path is
accounted for by name and reason, and that the records that are kept carry their own fields.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from retriever.reports.ingest import Exclusions, IngestResult, ingest
from retriever.reports.sources import iter_corpus

KEEP_ALL = Exclusions(require_findings=False, require_impression=False, drop_duplicate_findings=False)


def rejected(result: IngestResult) -> dict[str, tuple[str, str]]:
    """ref -> (reason, detail) of every rejection."""
    return {r.ref: (r.reason, r.detail) for r in result.rejections}


def kept(result: IngestResult) -> dict[str, tuple[str, str]]:
    """id -> (findings, impression) of every kept report."""
    return {r.id: (r.findings, r.impression) for r in result.reports}


# --- defect 3: CSV rows that do not fit the header, unterminated quotes -------------------------------------------


def test_csv_row_with_extra_cells_is_rejected_not_shifted(tmp_path: Path) -> None:
    path = tmp_path / "site.csv"
    path.write_text(
        "id,findings,impression,modality\n"
        "A1,Clear lungs, no effusion.,Normal chest.,XR\n"  # unquoted comma: 5 cells, the impression would shift
        "A2,Cardiomegaly.,Enlarged heart.,XR\n"
        "A3,Edema.\n",  # 2 cells: cannot tell which columns are missing
        encoding="utf-8",
    )
    result = ingest([str(path)], KEEP_ALL)
    assert kept(result) == {"site:A2": ("Cardiomegaly.", "Enlarged heart.")}
    assert rejected(result) == {
        f"{path}:2": ("row has more cells than the header", "5 cells, header has 4"),
        f"{path}:4": ("row has fewer cells than the header", "2 cells, header has 4"),
    }
    assert result.records_in == 3


def test_public_format_row_with_extra_cells_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "indiana_reports.csv"
    path.write_text(
        "uid,MeSH,Problems,image,indication,comparison,findings,impression\n"
        "1,normal,normal,Chest,TB test,None.,Clear lungs.,Normal.\n"
        "2,normal,normal,Chest,Cough, fever,None.,Clear lungs.,No pneumonia.\n",
        encoding="utf-8",
    )
    result = ingest([str(path)], KEEP_ALL)
    assert [r.id for r in result.reports] == ["openi:1"]
    assert rejected(result) == {f"{path}:3": ("row has more cells than the header", "9 cells, header has 8")}


def test_unterminated_quote_rejects_its_row_and_reads_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "site.csv"
    path.write_text(
        "id,findings,impression\n"
        'A1,"Small effusion.,Effusion.\n'  # the quote is never closed
        "A2,Clear lungs.,Normal.\n"
        "A3,Nodule.,Granuloma.\n",
        encoding="utf-8",
    )
    result = ingest([str(path)], KEEP_ALL)
    assert kept(result) == {"site:A2": ("Clear lungs.", "Normal."), "site:A3": ("Nodule.", "Granuloma.")}
    ((ref, (reason, _)),) = rejected(result).items()
    assert (ref, reason) == (f"{path}:2", "unterminated quote")
    assert result.records_in == 3


def test_quote_closed_by_a_later_row_is_not_taken_as_one_field(tmp_path: Path) -> None:
    path = tmp_path / "site.csv"
    path.write_text(
        "id,findings,impression\n"
        'A1,"Small effusion.,Effusion.\n'  # closed only by the next row's opening quote
        'A2,"Clear lungs.",Normal.\n'
        'A3,"Wrapped\nfindings.",Granuloma.\n',  # a legitimate quoted newline is still one field
        encoding="utf-8",
    )
    result = ingest([str(path)], KEEP_ALL)
    assert kept(result) == {"site:A2": ("Clear lungs.", "Normal."), "site:A3": ("Wrapped findings.", "Granuloma.")}
    assert [r.ref for r in result.rejections] == [f"{path}:2"]
    assert result.rejections[0].reason and result.records_in == 3


# --- defect 6: ids unique across files, stable across runs ---------------------------------------------------------


def write_reports(path: Path, year: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"id,findings,impression\n1,Effusion {year}.,Effusion.\n2,Nodule {year}.,Granuloma.\n",
        encoding="utf-8",
    )
    return path


def test_same_file_name_in_two_folders_gives_distinct_ids(tmp_path: Path) -> None:
    write_reports(tmp_path / "site" / "2023" / "reports.csv", "2023")
    write_reports(tmp_path / "site" / "2024" / "reports.csv", "2024")
    result = ingest([str(tmp_path / "site")], KEEP_ALL)
    assert not result.rejections
    assert sorted(kept(result)) == ["2023/reports:1", "2023/reports:2", "2024/reports:1", "2024/reports:2"]
    assert kept(ingest([str(tmp_path / "site")], KEEP_ALL)) == kept(result)  # stable across runs


def test_same_file_name_as_two_arguments_gives_distinct_ids(tmp_path: Path) -> None:
    first = write_reports(tmp_path / "2023" / "reports.csv", "2023")
    second = write_reports(tmp_path / "2024" / "reports.csv", "2024")
    result = ingest([str(first), str(second)], KEEP_ALL)
    assert not result.rejections
    # The first keeps the single-file id it has alone; the second is told apart by its folder.
    assert [r.id for r in result.reports] == ["reports:1", "reports:2", "2024/reports:1", "2024/reports:2"]
    assert [r.id for r in ingest([str(first)], KEEP_ALL).reports] == ["reports:1", "reports:2"]
    assert [r.id for r in ingest([str(first), str(second)], KEEP_ALL).reports] == [r.id for r in result.reports]


def test_same_text_folder_name_as_two_arguments_gives_distinct_ids(tmp_path: Path) -> None:
    for hospital in ("north", "south"):
        folder = tmp_path / hospital / "site"
        folder.mkdir(parents=True)
        (folder / "r1.txt").write_text(f"FINDINGS: Effusion {hospital}.\nIMPRESSION: Effusion.", encoding="utf-8")
    result = ingest([str(tmp_path / "north" / "site"), str(tmp_path / "south" / "site")], KEEP_ALL)
    assert [r.id for r in result.reports] == ["site:r1", "south/site:r1"]


def test_same_file_twice_is_still_a_duplicate(tmp_path: Path) -> None:
    path = write_reports(tmp_path / "reports.csv", "2023")
    result = ingest([str(path), str(tmp_path)], KEEP_ALL)
    assert [r.id for r in result.reports] == ["reports:1", "reports:2"]
    assert result.reasons() == {"repeated record": 2}  # the same version of a study read twice


def test_table_and_jsonl_with_the_same_stem_do_not_collide(tmp_path: Path) -> None:
    write_reports(tmp_path / "site" / "reports.csv", "csv")
    rows = [{"id": "1", "findings": "Edema.", "impression": "CHF."}]
    (tmp_path / "site" / "reports.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    result = ingest([str(tmp_path / "site")], KEEP_ALL)
    assert not result.rejections and len(set(kept(result))) == 3


# --- defect 8: silent skips, missing inputs, JSON lists -----------------------------------------------------------


def test_every_skipped_path_in_a_folder_is_counted_and_named(tmp_path: Path) -> None:
    corpus = tmp_path / "site"
    corpus.mkdir()
    write_reports(corpus / "good.csv", "2023")
    (corpus / "empty.csv").write_text("", encoding="utf-8")
    (corpus / "header.csv").write_text("id,findings,impression\n\n", encoding="utf-8")
    (corpus / "empty.jsonl").write_text("\n  \n", encoding="utf-8")
    (corpus / ".hidden.csv").write_text("id,findings\n1,x\n", encoding="utf-8")
    (corpus / ".git").mkdir()
    (corpus / ".git" / "config.txt").write_text("FINDINGS: x", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    write_reports(elsewhere / "more.csv", "2024")
    (corpus / "linked").symlink_to(elsewhere, target_is_directory=True)
    (corpus / "gone.csv").symlink_to(tmp_path / "deleted.csv")
    os.mkfifo(corpus / "pipe.csv")
    result = ingest([str(corpus)], KEEP_ALL)
    assert sorted(kept(result)) == ["good:1", "good:2"]
    reasons = {Path(ref).name: reason for ref, (reason, _) in rejected(result).items()}
    assert reasons == {
        "empty.csv": "empty file",
        "header.csv": "header only, no records",
        "empty.jsonl": "empty file",
        ".hidden.csv": "hidden file skipped",
        ".git": "hidden folder skipped",
        "linked": "symlinked folder not followed",
        "gone.csv": "dangling symlink",
        "pipe.csv": "not a regular file (FIFO)",
    }
    assert result.records_in == 2 + len(reasons)


def test_fifo_argument_is_not_reported_as_missing(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (rejection,) = list(iter_corpus(str(tmp_path / "pipe")))
    assert rejection.reason == "not a regular file (FIFO)"


def test_jsonl_lists_are_joined_not_stored_as_python_repr(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    row = {
        "id": 7,
        "findings": ["Small left effusion.", "No pneumothorax."],
        "impression": "Effusion.",
        "labels": ["effusion", "pleural"],
        "modality": None,
    }
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    (report,) = ingest([str(path)], KEEP_ALL).reports
    assert report.id == "r:7"
    assert report.labels == ("effusion", "pleural")
    assert report.findings == "Small left effusion. No pneumothorax."
    assert "[" not in report.full_text and "'" not in report.full_text


def run_index(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assistant.cli", "index", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env, "COLUMNS": "200"},
    )


@pytest.mark.parametrize("bad", ["missing", "fifo"])
def test_index_refuses_a_missing_or_special_input_before_any_work(tmp_path: Path, bad: str) -> None:
    good = write_reports(tmp_path / "reports.csv", "2023")
    wrong = tmp_path / ("repotrs" if bad == "missing" else "pipe")
    if bad == "fifo":
        os.mkfifo(wrong)
    default_index = tmp_path / "default-index"
    default_index.mkdir()
    (default_index / "keep.txt").write_text("the user's index", encoding="utf-8")
    out = tmp_path / "out"
    result = run_index(str(good), str(wrong), "--out", str(out), env={"RADSEARCH_INDEX": str(default_index)})
    assert result.returncode == 2, result.stderr
    assert str(wrong) in result.stderr
    assert ("no such file or folder" if bad == "missing" else "not a regular file (FIFO)") in result.stderr
    assert "Ingestion" not in result.stderr  # refused before reading anything
    assert not out.exists() and (default_index / "keep.txt").is_file()
