"""`assistant search` with query-side abbreviation expansion, as a user runs it (real processes, real MiniLM)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ASSISTANT = [sys.executable, "-m", "assistant.cli"]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RADSEARCH_ABBREVIATION")}
    return subprocess.run(
        [*ASSISTANT, *args], capture_output=True, text=True, timeout=600, env={**clean, **(env or {}), "COLUMNS": "200"}
    )


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, minilm) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    rows = [
        {"id": "1", "findings": "Moderate right pleural effusion.", "impression": "Right pleural effusion."},
        {"id": "2", "findings": "Apical pleural line without lung markings.", "impression": "Large pneumothorax."},
        {"id": "3", "findings": "Enlarged cardiac silhouette.", "impression": "Cardiomegaly."},
    ]
    (folder / "site.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("out") / "index"
    result = run("index", str(folder), "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


def search(index: Path, *flags: str, env: dict[str, str] | None = None) -> dict:
    result = run("search", "ptx", "--index", str(index), "--method", "bm25", "--json", *flags, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_search_expands_shorthand_unless_told_not_to(index: Path) -> None:
    on = search(index)
    assert on["searched_as"] == "pneumothorax" and [h["id"] for h in on["hits"]] == ["site:2"]
    off = search(index, "--no-expand")
    assert off["searched_as"] == "ptx" and off["hits"] == []
    by_env = search(index, env={"RADSEARCH_ABBREVIATION_EXPANSION": "off"})
    assert by_env["hits"] == []
    flag_wins = search(index, "--expand", env={"RADSEARCH_ABBREVIATION_EXPANSION": "off"})
    assert [h["id"] for h in flag_wins["hits"]] == ["site:2"]


def test_search_uses_the_users_table(index: Path, tmp_path: Path) -> None:
    table = tmp_path / "site.csv"
    table.write_text("abbr,expansion\nptx,cardiomegaly\n", encoding="utf-8")
    hits = search(index, env={"RADSEARCH_ABBREVIATIONS": str(table)})["hits"]
    assert [h["id"] for h in hits] == ["site:3"]  # the user's row wins over the built-in one


def test_a_malformed_table_stops_the_command_with_its_name(index: Path, tmp_path: Path) -> None:
    table = tmp_path / "broken.csv"
    table.write_text("short,long\nptx,pneumothorax\n", encoding="utf-8")
    result = run("search", "ptx", "--index", str(index), env={"RADSEARCH_ABBREVIATIONS": str(table)})
    assert result.returncode == 2
    assert "broken.csv" in result.stderr and "abbr" in result.stderr and "Traceback" not in result.stderr
