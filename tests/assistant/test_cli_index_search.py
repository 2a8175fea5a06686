"""`assistant index` and `assistant search` as a user runs them (real processes, real MiniLM)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_fixtures import run

pytestmark = pytest.mark.models  # real CLI processes or a real model: not the fast tier


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    rows = [
        {"id": "1", "findings": "Moderate right pleural effusion.", "impression": "Right pleural effusion."},
        {"id": "2", "findings": "Patchy left lower lobe airspace disease.", "impression": "Left lower lobe pneumonia."},
        {"id": "3", "findings": "Apical pleural line without lung markings.", "impression": "Pneumothorax."},
        {"id": "4", "findings": "", "impression": "No findings section."},
    ]
    (folder / "site.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    (folder / "junk.bin").write_bytes(b"\x00\x01")
    return folder


@pytest.fixture(scope="module")
def built(corpus: Path, tmp_path_factory: pytest.TempPathFactory, minilm) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("out") / "index"
    result = run("index", str(corpus), "--out", str(out), "--rejects", str(out.parent / "rejects.jsonl"))
    assert result.returncode == 0, result.stderr
    return out, result.stderr


def test_index_prints_counts_that_add_up(built: tuple[Path, str]) -> None:
    out, log = built
    assert "records in" in log and "missing findings" in log and "unsupported file type" in log
    assert "DEBUG" not in log  # bm25s's own debug logger stays quiet
    total_line = next(line for line in log.splitlines() if "total" in line)
    numbers = [int(x) for x in total_line.replace("│", " ").split() if x.isdigit()]
    assert numbers == [5, 3, 2]
    rejects = [json.loads(line) for line in (out.parent / "rejects.jsonl").read_text().splitlines()]
    assert {r["reason"] for r in rejects} == {"missing findings", "unsupported file type (use .csv, .jsonl or .txt)"}
    # the rejected record itself, to fix and import again (issue 39); a file that was not read has none
    (missing,) = [r for r in rejects if r["reason"] == "missing findings"]
    assert (missing["row"]["id"], missing["row"]["impression"]) == ("site:4", "No findings section.")
    assert "row" not in next(r for r in rejects if r["reason"].startswith("unsupported"))


def test_index_without_encoder_builds_with_the_shipped_one(built: tuple[Path, str]) -> None:
    from models.preset import PRESET

    manifest = json.loads((built[0] / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["encoder"]["name"] == PRESET.encoder == "radsearch"
    assert manifest["encoder"]["backend"] == "onnx-int8"


def test_search_table_and_json(built: tuple[Path, str]) -> None:
    out, _ = built
    table = run("search", "air in the pleural space, collapsed lung", "--index", str(out), "-k", "2")
    assert table.returncode == 0, table.stderr
    assert "site:3" in table.stdout and "Pneumothorax" in table.stdout
    as_json = run("search", "fluid right hemithorax", "--index", str(out), "--field", "findings", "--json")
    payload = json.loads(as_json.stdout)
    assert payload["hits"][0]["id"] == "site:1" and payload["hits"][0]["rank"] == 1
    assert payload["encoder"] == "radsearch"
    bm25 = run("search", "pneumonia", "--index", str(out), "--method", "bm25", "--json")
    assert json.loads(bm25.stdout)["hits"][0]["id"] == "site:2"


def test_search_names_the_second_stage_only_where_it_ran(built: tuple[Path, str]) -> None:
    """The default support check re-scores impression searches of 15+ words; the JSON and the table title name it
    for those and for nothing else (a short query, or findings and whole reports, keep the first stage's order)."""
    out, _ = built
    long = (
        "Moderate right pleural effusion with adjacent compressive atelectasis of the right lower lobe and no left "
        "effusion"
    )
    assert len(long.split()) >= 15

    def stage(query: str, *options: str) -> str | None:
        result = run("search", query, "--index", str(out), "--json", *options)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["reranker"]

    assert stage(long) == "support"
    assert stage("right pleural effusion") is None
    assert stage(long, "--field", "findings") is None
    assert stage(long, "--reranker", "off") is None
    table = run("search", "right pleural effusion", "--index", str(out))
    assert table.returncode == 0 and "re-ranked by" not in table.stdout


def test_search_bad_inputs(built: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = built
    empty = run("search", "   ", "--index", str(out))
    assert empty.returncode == 2 and "query is empty" in empty.stderr
    missing = run("search", "effusion", "--index", str(tmp_path / "none"))
    assert missing.returncode == 2 and "assistant index" in missing.stderr  # as `assistant ask`
    wrong = run("search", "effusion", "--index", str(out), "--encoder", "mpnet")
    assert wrong.returncode == 2 and "built with encoder 'radsearch'" in wrong.stderr
    long = run("search", "effusion " * 12000, "--index", str(out), "-k", "1")
    assert long.returncode == 0 and "reads only the first 256 tokens" in long.stderr


def test_help_is_fast_and_lists_commands() -> None:
    result = run("--help")
    assert result.returncode == 0 and "index" in result.stdout and "search" in result.stdout


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_index_never_writes_over_its_inputs(corpus: Path, tmp_path: Path) -> None:
    """Issue 15, defect 1: `--out` equal to, inside or around the corpus deleted it; `--rejects` on an input file
    overwrote it. Refused before any report is read or encoded, even with --overwrite; exit 2."""
    reports = tmp_path / "reports"
    shutil.copytree(corpus, reports)
    before = _snapshot(reports)
    link = tmp_path / "link-to-reports"
    link.symlink_to(reports, target_is_directory=True)
    elsewhere = str(tmp_path / "new-index")
    cases = {
        "the corpus itself": ["--out", str(reports)],
        "inside the corpus": ["--out", str(reports / "index")],
        "a folder holding the corpus": ["--out", str(tmp_path)],
        "a symlink to the corpus": ["--out", str(link)],
        "rejects over an input file": ["--out", elsewhere, "--rejects", str(reports / "site.jsonl")],
        "rejects inside the index": ["--out", elsewhere, "--rejects", str(Path(elsewhere) / "rejects.jsonl")],
    }
    for case, options in cases.items():
        result = run("index", str(reports), *options, "--overwrite")
        assert result.returncode == 2, (case, result.stderr)
        assert "refusing" in result.stderr and "Ingestion" not in result.stderr, (case, result.stderr)
        assert "encoding" not in result.stdout, case
        assert _snapshot(reports) == before, case
    assert not Path(elsewhere).exists()


def test_index_refuses_to_replace_a_folder_that_is_not_an_index(corpus: Path, tmp_path: Path) -> None:
    """Issue 15, defect 1: a folder without a valid manifest is replaced only with --overwrite."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "keep.txt").write_text("mine", encoding="utf-8")
    refused = run("index", str(corpus), "--out", str(notes))
    assert refused.returncode == 2 and "not a RadSearch index" in refused.stderr and "--overwrite" in refused.stderr
    assert "Ingestion" not in refused.stderr and "encoding" not in refused.stdout
    assert (notes / "keep.txt").read_text(encoding="utf-8") == "mine"
    replaced = run("index", str(corpus), "--out", str(notes), "--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    assert (notes / "manifest.json").is_file() and not (notes / "keep.txt").exists()


def test_index_prints_file_names_and_paths_as_text_not_markup(tmp_path: Path, minilm) -> None:
    folder = tmp_path / "[red]corpus"
    folder.mkdir()
    (folder / "[bold]site[:pill:].csv").write_text(
        "id,findings,impression\n1,Blunted angle.,Effusion.\n", encoding="utf-8"
    )
    out = tmp_path / "[i]index"
    result = run("index", str(folder), "--out", str(out), "--source", "[bold]site[pill]")  # the site names its ids
    assert result.returncode == 0, result.stderr
    assert "[bold]site[pill]" in result.stderr and f"-> {out}" in result.stderr.replace("\n", "")


def test_terminal_escape_sequences_in_reports_never_reach_the_terminal(tmp_path: Path) -> None:
    """Issue 39: a report holding ESC sequences (clear the screen, set the window title) had them printed raw by
    `search` and `show`; they are shown as visible escapes instead."""
    reports = tmp_path / "esc.csv"
    reports.write_text(
        "id,findings,impression\n1,Left effusion \x1b[2J\x1b]0;owned\x07 large.,Effusion \x1b[31mred \x9b1m.\n",
        encoding="utf-8",
    )
    out = tmp_path / "index"
    assert run("index", str(reports), "--out", str(out)).returncode == 0
    for args in (["search", "left effusion", "--index", str(out)], ["show", "1", "--index", str(out)]):
        result = run(*args)
        assert result.returncode == 0, result.stderr
        printed = result.stdout + result.stderr
        assert not any(ch in printed for ch in "\x1b\x07\x9b"), printed
        shown = printed.replace("\n", "").replace(" ", "")
        # search shows the impression's matching sentence, show the whole report: each escape written out
        assert "\\x1b[31m" in shown and ("\\x1b[2J" in shown or args[0] == "search")


def test_a_failed_write_is_a_clear_error_not_a_traceback(tmp_path: Path, minilm, monkeypatch) -> None:
    from typer.testing import CliRunner

    from assistant.cli import app
    from retriever.index import swap as index_swap

    def disk_full(staged, target):  # fault injection: the disk fills while the index is written
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(index_swap, "swap_in", disk_full)
    corpus = tmp_path / "site.csv"
    corpus.write_text("id,findings,impression\n1,Blunted angle.,Effusion.\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["index", str(corpus), "--out", str(tmp_path / "index")])
    assert result.exit_code == 1 and "No space left on device" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "index").exists()


@pytest.fixture(scope="module")
def negation_index(tmp_path_factory: pytest.TempPathFactory, minilm) -> Path:
    """Issue 17: one report affirms a pneumothorax, one rules it out, one is about something else."""
    from retriever.index.report_index import ReportIndex
    from retriever.reports.record import Report

    reports = [
        Report(id="site:affirmed", findings="Small left apical pneumothorax.", impression="Left pneumothorax."),
        Report(id="site:negated", findings="Lungs are clear.", impression="No pneumothorax."),
        Report(id="site:other", findings="Blunted right costophrenic angle.", impression="Right pleural effusion."),
        Report(
            id="site:mixed",
            findings="Left base opacity.",
            impression="No left pleural effusion. Small left pleural effusion, unchanged.",
        ),
    ]
    out = tmp_path_factory.mktemp("negation") / "index"
    ReportIndex.build(reports, encoder=minilm).save(out)
    return out


def _contradicts_by_id(index: Path, query: str) -> dict[str, bool]:
    result = run("search", query, "--index", str(index), "-k", "4", "--json")
    assert result.returncode == 0, result.stderr
    return {h["id"]: h["contradicts"] for h in json.loads(result.stdout)["hits"]}


def test_search_marks_hits_that_say_the_opposite_of_the_query(negation_index: Path) -> None:
    """Issue 17: a hit whose text rules out the query's finding (or affirms what a negated query rules out) is
    marked in the table, with a note saying what the mark means, and flagged in the JSON; the others are not."""
    assert _contradicts_by_id(negation_index, "pneumothorax") == {
        "site:affirmed": False,
        "site:negated": True,
        "site:other": False,
        "site:mixed": False,
    }
    assert _contradicts_by_id(negation_index, "no pneumothorax") == {
        "site:affirmed": True,
        "site:negated": False,
        "site:other": False,
        "site:mixed": False,
    }
    table = run("search", "pneumothorax", "--index", str(negation_index), "-k", "4")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    rows = {i: line for line in lines for i in ("affirmed", "negated", "other") if f"site:{i}" in line}
    assert "contradicts" in table.stdout and "YES" in rows["negated"]
    assert "YES" not in rows["affirmed"] and "YES" not in rows["other"]
    assert "say the opposite of the query" in " ".join(table.stdout.split())
    plain = run("search", "pleural effusion", "--index", str(negation_index), "-k", "3", "--field", "findings")
    assert plain.returncode == 0 and "contradicts" not in plain.stdout  # nothing to mark: no column, no note


def test_search_marks_a_mixed_hit_partly(negation_index: Path) -> None:
    """A report that rules the query's finding out in one sentence and affirms it in another is ranked as usual and
    marked `partly`, with its own note and JSON flag."""
    result = run("search", "small left pleural effusion", "--index", str(negation_index), "-k", "4", "--json")
    assert result.returncode == 0, result.stderr
    flags = {h["id"]: (h["contradicts"], h["partly_contradicts"]) for h in json.loads(result.stdout)["hits"]}
    assert flags["site:mixed"] == (False, True) and flags["site:other"] == (False, False)
    table = run("search", "small left pleural effusion", "--index", str(negation_index), "-k", "4")
    rows = {line for line in table.stdout.splitlines() if "site:mixed" in line}
    assert any("partly" in row for row in rows) and "read them before taking them as support" in " ".join(
        table.stdout.split()
    )


def test_show_prints_a_whole_report_and_refuses_unknown_ids(built: tuple[Path, str], tmp_path: Path) -> None:
    """Issue 41: the whole report one command away (search and ask show its first 200 characters)."""
    out, _ = built
    shown = run("show", "site:1", "--index", str(out))
    assert shown.returncode == 0, shown.stderr
    assert "Moderate right pleural effusion." in shown.stdout and "Right pleural effusion." in shown.stdout
    as_json = json.loads(run("show", "site:3", "--index", str(out), "--json").stdout)
    assert as_json["id"] == "site:3" and as_json["impression"] == "Pneumothorax."
    unknown = run("show", "site:99", "--index", str(out))
    assert unknown.returncode == 2 and "no report 'site:99'" in unknown.stderr
    missing = run("show", "site:1", "--index", str(tmp_path / "none"))
    assert missing.returncode == 2 and "assistant index" in missing.stderr
