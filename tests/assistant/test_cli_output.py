"""What the commands print is data, never rich markup: report text, queries, paths, option values and error
messages appear exactly as they are (real processes, a real MiniLM index), and a missing index is exit 2 for
every command that needs one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chat_fixtures import free_port

from retriever.reports.record import Report

pytestmark = pytest.mark.models  # real CLI processes or a real model: not the fast tier

REPO = Path(__file__).resolve().parents[2]
# Rich would read these as a style, a closing tag (MarkupError), a hyperlink and an emoji code.
MARKUP_PIECES = ["[LLL]", "[/bold]", "[link=http://x]y[/link]", ":pill:", "[red]Fluid[/red]"]
MARKUP_REPORTS = [
    Report(
        id="scan-[1]",
        findings="[red]Fluid[/red] at the [LLL] base :pill: blunting the right costophrenic angle.",
        impression="Effusion [LLL] resolved [/bold] :pill: [link=http://x]y[/link]",
        modality="XR",
        source="site[2]",
    ),
    Report(id="scan-2", findings="Enlarged cardiac silhouette.", impression="Cardiomegaly.", modality="XR"),
]


@pytest.fixture(scope="module")
def markup_index(tmp_path_factory: pytest.TempPathFactory, minilm) -> Path:
    from retriever.index.report_index import ReportIndex

    folder = tmp_path_factory.mktemp("markup") / "index"
    ReportIndex.build(MARKUP_REPORTS, encoder=minilm).save(folder)
    return folder


def _run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RADSEARCH_LLM_")}
    return subprocess.run(
        [sys.executable, "-m", "assistant.cli", *args],
        cwd=REPO,
        env={**environment, "COLUMNS": "250", **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def _no_traceback(run: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in run.stdout + run.stderr, run.stderr


def test_search_prints_report_text_literally(markup_index: Path) -> None:
    run = _run("search", "fluid [LLL] :pill:", "--index", str(markup_index), "-k", "2", "--field", "findings")
    _no_traceback(run)
    assert run.returncode == 0
    shown = run.stdout.replace("«", "").replace("»", "")  # the query's words are marked in the matching sentence
    for piece in [*MARKUP_PIECES, "scan-[1]", "site[2], X-ray"]:
        assert piece in shown, piece
    assert "«Fluid»" in run.stdout and "\N{PILL}" not in run.stdout


def test_search_json_gives_the_matching_sentence_and_its_marked_words(markup_index: Path) -> None:
    """Issue 41: the sentence that matched and where the query's words are in it (negated ones flagged)."""
    run = _run("search", "enlarged cardiac silhouette", "--index", str(markup_index), "--field", "findings", "--json")
    assert run.returncode == 0, run.stderr
    hit = next(h for h in json.loads(run.stdout)["hits"] if h["id"] == "scan-2")
    sentence = hit["matching_sentence"]
    marked = [sentence["text"][m["start"] : m["end"]] for m in sentence["marks"]]
    assert sentence["text"] == "Enlarged cardiac silhouette." and marked == ["Enlarged", "cardiac", "silhouette"]
    assert not any(m["negated"] for m in sentence["marks"])


def test_ask_prints_report_text_literally_in_the_retrieval_only_result(markup_index: Path) -> None:
    run = _run(
        "ask",
        "fluid [LLL] :pill:",
        "--index",
        str(markup_index),
        "--field",
        "findings",
        "-k",
        "2",
        "--prompt",
        "diagnosis_evidence",  # the model is asked (the default asks none), and it is down
        "--backend",
        "openai",
        "--model",
        "[/bold]m",
        RADSEARCH_LLM_BASE_URL=f"http://127.0.0.1:{free_port()}/v1",
        RADSEARCH_LLM_RETRIES="0",
    )
    _no_traceback(run)
    assert run.returncode == 3
    for piece in ["[LLL]", "[/bold]", ":pill:", "scan-[1]"]:
        assert piece in run.stdout, piece
    assert "\N{PILL}" not in run.stdout


@pytest.mark.parametrize("command", ["search", "ask"])
def test_missing_index_is_exit_2_with_the_path_printed_literally(command: str, tmp_path: Path) -> None:
    missing = tmp_path / "[/bold][red]not-here"
    run = _run(command, "effusion", "--index", str(missing))
    _no_traceback(run)
    assert run.returncode == 2 and str(missing) in " ".join(run.stderr.split()).replace(" ", "")
    assert "assistant index" in run.stderr


@pytest.mark.parametrize("command", ["ask", "chat"])
def test_a_bad_setting_is_printed_literally(command: str, markup_index: Path) -> None:
    args = ["effusion", "--index", str(markup_index)] if command == "ask" else ["--port", str(free_port())]
    run = _run(command, *args, RADSEARCH_LLM_BACKEND="[/bold]x")
    _no_traceback(run)
    assert run.returncode == 2 and "'[/bold]x'" in run.stderr


def test_train_prints_rejection_reasons_and_errors_literally(tmp_path: Path) -> None:
    corpus = tmp_path / "reports.jsonl"
    corpus.write_text(json.dumps({"id": "1", "findings": "Effusion.", "impression": "Effusion."}) + "\n")
    run = _run(
        "train",
        str(corpus),
        "--out",
        "a/[/bold]",
        "--map",
        "findings=[/red]Befund",
        RADSEARCH_HOME=str(tmp_path / "home"),
    )
    _no_traceback(run)
    assert run.returncode == 1
    assert "'[/red]Befund'" in run.stderr and "'a/[/bold]'" in run.stderr
