"""Issue 51 (low): `--rejects` could write over the abbreviation table that RADSEARCH_ABBREVIATIONS names, an input
of every search. The files the settings read are inputs too: `index` and `update` refuse such a --rejects before
reading a single report (exit 2), and the table is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_fixtures import run

TABLE = "abbr,expansion\nrll,right lower lobe\n"
REPORTS = "AccessionNumber,Findings,Impression\nA1,Small left pleural effusion.,Pleural effusion.\n"


def _files(tmp_path: Path) -> tuple[Path, Path]:
    table, reports = tmp_path / "abbreviations.csv", tmp_path / "site.csv"
    table.write_text(TABLE, encoding="utf-8")
    reports.write_text(REPORTS, encoding="utf-8")
    return table, reports


@pytest.mark.models
def test_rejects_named_as_the_abbreviation_table_is_refused(tmp_path: Path) -> None:
    table, reports = _files(tmp_path)
    env = {"RADSEARCH_ABBREVIATIONS": str(table), "RADSEARCH_HOME": str(tmp_path / "home")}
    done = run("index", str(reports), "--out", str(tmp_path / "idx"), "--rejects", str(table), env=env)
    assert done.returncode == 2, done.stderr
    assert "abbreviations.csv" in done.stderr and "input" in done.stderr
    assert table.read_text(encoding="utf-8") == TABLE and not (tmp_path / "idx").exists()


@pytest.mark.models
def test_rejects_through_a_link_to_the_table_is_refused_by_update_too(tmp_path: Path) -> None:
    table, reports = _files(tmp_path)
    (tmp_path / "rejects.jsonl").symlink_to(table)
    env = {"RADSEARCH_ABBREVIATIONS": str(table), "RADSEARCH_HOME": str(tmp_path / "home")}
    for command in ("index", "update"):
        target = ["--out" if command == "index" else "--index", str(tmp_path / "idx")]
        done = run(command, str(reports), *target, "--rejects", str(tmp_path / "rejects.jsonl"), env=env)
        assert done.returncode == 2, (command, done.stderr)
        assert table.read_text(encoding="utf-8") == TABLE
