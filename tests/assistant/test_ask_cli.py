"""`assistant ask` end to end: the real CLI process, a real index, the embedded SmolLM2 GGUF."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fault_server import FaultServer, fault_server
from llm_fixtures import build_index, require_embedded_smollm2
from report_fixtures import hit

import prompts
from retriever.search.hit import Hit

pytestmark = pytest.mark.models  # real CLI processes or a real model: not the fast tier

REPO = Path(__file__).resolve().parents[2]
#: The model choosing among the evidence, whichever way `ask` answers by default (models/preset.json).
MODEL_CHOOSES = ("--mode", "choice")


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory, minilm) -> Path:
    return build_index(tmp_path_factory.mktemp("ask") / "index", minilm)


def _ask(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`assistant ask` with the model asked (`--mode choice`: the model chooses among the evidence) unless the test
    says how to answer: these tests exercise the LLM path and its failures; the default, which asks no model
    (models/preset.json), has tests of its own below."""
    if not {"--prompt", "--mode", "--preset", "--no-retrieval"} & set(args):
        args = (*args, *MODEL_CHOOSES)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RADSEARCH_LLM_")}
    environment |= {"RADSEARCH_LLM_GGUF": "smollm2", "RADSEARCH_LLM_CONTEXT": "2048", **env}
    return subprocess.run(
        [sys.executable, "-m", "assistant.cli", "ask", *args],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_ask_prints_diagnosis_and_cited_reports(index_dir: Path) -> None:
    require_embedded_smollm2()
    run = _ask(
        "Blunting of the right costophrenic angle with a meniscus sign",
        "--index",
        str(index_dir),
        "--field",
        "findings",
        "-k",
        "2",
    )
    assert run.returncode == 0, run.stderr
    assert "Most likely diagnosis:" in run.stdout and "cxr-001" in run.stdout
    assert "Small right pleural effusion." in run.stdout and "smollm2-135m-instruct-q4_1" in run.stdout


def test_ask_json(index_dir: Path) -> None:
    require_embedded_smollm2()
    run = _ask("Enlarged cardiac silhouette", "--index", str(index_dir), "--json", "--model", "smollm2", *MODEL_CHOOSES)
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["diagnosis"] and answer["degraded"] is False
    assert answer["prompt_id"] == prompts.load("diagnosis_evidence").id
    # issue 37: the answer reads the k most similar reports (the fixture has fewer) and chooses among what they affirm
    # issue 48: a report of another body region or modality than the question's does not vote; issue 51: nor does
    # one that addresses a model (the fixture's cxr-003)
    evidence = answer["evidence"]
    voted = evidence["read"] + evidence["excluded"] + len(evidence["set_aside"])
    assert voted == len(answer["retrieved"]) and evidence["candidates"]
    assert answer["retrieved"][0]["score"] > 0 and evidence["excluded"] >= 0
    assert len(answer["configuration_hash"]) == 16  # issue 42: what produced the answer, and one hash over it
    assert answer["configuration"]["retrieval"]["encoder"]["name"] == "minilm"
    assert answer["configuration"]["llm"]["model"] == "smollm2-135m-instruct-q4_1"


def test_ask_answers_from_the_evidence_alone_without_loading_a_model(index_dir: Path) -> None:
    """`--mode evidence`: the best-supported diagnosis of the evidence differential, no model (a missing one is
    never loaded); `--prompt evidence`, the old spelling, answers the same and warns."""
    args = ("Enlarged cardiac silhouette", "--index", str(index_dir), "--json", "--model", "no-such-model.gguf")
    run = _ask(*args, "--mode", "evidence")
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["prompt_id"] == "evidence" and answer["model_id"] is None and answer["configuration"]["llm"] is None
    assert answer["diagnosis"] == answer["evidence"]["candidates"][0]["diagnosis"]
    assert answer["configuration"]["mode"] == "evidence"
    old = _ask(*args, "--prompt", "evidence")
    assert old.returncode == 0 and "--prompt evidence is now --mode evidence" in old.stderr
    assert json.loads(old.stdout)["diagnosis"] == answer["diagnosis"]


def test_a_bad_mode_or_a_prompt_that_does_not_fit_the_mode_exits_2(index_dir: Path) -> None:
    assert _ask("Cardiomegaly", "--index", str(index_dir), "--mode", "guess").returncode == 2
    run = _ask("Cardiomegaly", "--index", str(index_dir), "--mode", "choice", "--prompt", "diagnosis_rag")
    assert run.returncode == 2 and "references: evidence" in run.stderr


def test_the_paper_preset_answers_with_the_papers_setting(index_dir: Path) -> None:
    """`--preset paper`: dense search, the top report's impression, the free-text prompt (models/presets/paper.json);
    a dead server shows the setting without a model."""
    dead = {"RADSEARCH_LLM_BASE_URL": "http://127.0.0.1:9/v1", "RADSEARCH_LLM_RETRIES": "0"}
    run = _ask("Cardiomegaly", "--index", str(index_dir), "--json", "--preset", "paper", "--model", "m", **dead)
    assert run.returncode == 3, run.stderr
    answer = json.loads(run.stdout)
    search = answer["configuration"]["retrieval"]["search"]
    assert (search["method"], search["field"], search["k"], search["second_stage"]) == ("dense", "impression", 1, None)
    assert answer["configuration"]["mode"] == "free-text" and answer["prompt_id"] == prompts.load("diagnosis_rag").id
    assert len(answer["retrieved"]) == 1


def test_ask_without_retrieval_needs_no_index(tmp_path: Path) -> None:
    require_embedded_smollm2()
    run = _ask("Air bronchograms in the right lower lobe", "--no-retrieval", "--json", "--index", str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["prompt_id"] == "diagnosis_norag@1"


@pytest.mark.parametrize("query", ["", "   "])
def test_empty_query_exits_2(index_dir: Path, query: str) -> None:
    run = _ask(query, "--index", str(index_dir))
    assert run.returncode == 2 and "empty" in run.stderr and "Traceback" not in run.stderr


def test_missing_index_exits_2_and_says_how_to_build_one(tmp_path: Path) -> None:
    run = _ask("Cardiomegaly", "--index", str(tmp_path / "none"))
    assert run.returncode == 2 and "assistant index" in run.stderr and "Traceback" not in run.stderr


def test_server_down_exits_3_with_retrieval_only_result(index_dir: Path) -> None:
    run = _ask(
        "Meniscus sign at the right costophrenic angle",
        "--index",
        str(index_dir),
        "--field",
        "findings",
        "--backend",
        "openai",
        "--model",
        "m",
        RADSEARCH_LLM_BASE_URL="http://127.0.0.1:9/v1",
        RADSEARCH_LLM_RETRIES="0",
    )
    assert run.returncode == 3, run.stderr
    assert "degraded" in run.stdout and "Small right pleural effusion." in run.stdout
    assert "Traceback" not in run.stdout + run.stderr


def test_server_down_json_names_the_degradation(index_dir: Path) -> None:
    run = _ask(
        "Cardiomegaly",
        "--index",
        str(index_dir),
        "--json",
        "--backend",
        "openai",
        "--model",
        "m",
        RADSEARCH_LLM_BASE_URL="http://127.0.0.1:9/v1",
        RADSEARCH_LLM_RETRIES="0",
    )
    assert run.returncode == 3
    answer = json.loads(run.stdout)
    assert answer["degraded_kind"] == "backend_unavailable" and answer["retrieved"][0]["report_id"] == "cxr-004"
    assert answer["model_id"] == "m" and answer["configuration_hash"]  # a failed answer still names its model


# ------------------------------------------------------------- a real server that answers wrongly or slowly
@pytest.fixture
def server() -> Iterator[FaultServer]:
    with fault_server() as srv:
        yield srv


def _ask_server(server: FaultServer, index_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return _ask(
        "Meniscus sign at the right costophrenic angle",
        "--index",
        str(index_dir),
        "--field",
        "findings",
        "--json",
        "--backend",
        "openai",
        "--model",
        "m",
        RADSEARCH_LLM_BASE_URL=server.url,
        RADSEARCH_LLM_CONTEXT="2048",
        **env,
    )


@pytest.mark.parametrize(
    "reply",
    [
        ("text/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>"),
        ("application/json", b'{"result": "ok"}'),
        ("application/json", b'{"id": "c", "object": "chat.completion", "choices": [{"index": 0, "mess'),
    ],
    ids=["html", "other json", "truncated json"],
)
def test_a_reply_that_is_not_a_completion_exits_5_with_retrieval_only(
    server: FaultServer, index_dir: Path, reply: tuple[str, bytes]
) -> None:
    server.behaviour, server.reply = "reply", reply
    run = _ask_server(server, index_dir)
    assert run.returncode == 5, run.stderr
    answer = json.loads(run.stdout)
    assert answer["degraded_kind"] == "unparseable" and "not with a chat completion" in answer["degraded_reason"]
    assert answer["retrieved"][0]["report_id"] == "cxr-001"


def test_a_trickling_server_exits_4_at_the_timeout(server: FaultServer, index_dir: Path) -> None:
    server.behaviour = "trickle"  # a byte every 0.3 s: 9 s in all, every read well within the timeout
    run = _ask_server(server, index_dir, RADSEARCH_LLM_TIMEOUT="2")
    assert run.returncode == 4, run.stderr
    answer = json.loads(run.stdout)
    assert answer["degraded_kind"] == "timeout" and answer["retrieved"][0]["report_id"] == "cxr-001"
    assert answer["timings"]["total"] - answer["timings"]["retrieval"] < 3.0


def _printed(reports: list[Hit], query: str = "pneumothorax") -> str:
    """What `ask` prints for these reports (before any answer), as plain text."""
    from rich.console import Console

    from assistant.commands.ask_output import print_retrieval
    from assistant.rag.pipeline import Retrieval

    out = Console(record=True, width=200, color_system=None)
    print_retrieval(Retrieval(reports, {}), query, out)
    return out.export_text()


def test_printed_reports_mark_the_one_that_contradicts_the_query() -> None:
    """Issue 17: as in `assistant search`, a YES under "contradicts" and a note saying what it means."""
    reports = [
        hit("r-1", 1, 0.9, "impression", "Left pneumothorax."),
        hit("r-2", 2, 0.8, "impression", "No pneumothorax.", contradicts=True),
    ]
    text = _printed(reports)
    rows = {r.report.id: line for line in text.splitlines() for r in reports if f" {r.report.id} " in line}
    assert "contradicts" in text and "YES" in rows["r-2"] and "YES" not in rows["r-1"]
    assert "say the opposite of the query" in " ".join(text.split())
    assert "partly" not in text  # no mixed report: no partly note

    mixed = hit("r-3", 1, 0.9, "impression", "No left effusion. Left effusion.", partly_contradicts=True)
    text = _printed([mixed], "left effusion")
    assert any("partly" in line for line in text.splitlines() if " r-3 " in line)
    assert "read them before taking them as support" in " ".join(text.split())
    assert "say the opposite of the query" not in " ".join(text.split())


def test_printed_reports_show_the_matching_sentence_marked_a_strength_and_the_modality_in_words() -> None:
    """Issue 41: the sentence that matched, not the report's first 200 characters; query words marked, a negated one
    marked so; a strength word beside the raw score; "MR" as MRI."""
    opening = "Postoperative changes of the cervical spine with hardware in expected position. " * 4
    reports = [
        hit("r-1", 1, 0.9, "findings", "Imp.", findings=opening + "A small joint effusion.", modality="MR"),
        hit("r-2", 2, 0.1, "findings", "Imp.", findings=opening + "No joint effusion.", modality="OT"),
    ]
    text = _printed(reports, "knee joint effusion")
    rows = {r.report.id: line for line in text.splitlines() for r in reports if f" {r.report.id} " in line}
    assert "A small «joint» «effusion»." in rows["r-1"] and "strong" in rows["r-1"] and "MRI" in rows["r-1"]
    assert "No «joint (negated)» «effusion (negated)»." in rows["r-2"]
    assert "weak" in rows["r-2"] and "other" in rows["r-2"]
    assert "0.900" in rows["r-1"] and "assistant show ID" in text


def test_printed_reports_list_the_first_ten_and_say_the_evidence_read_the_rest() -> None:
    """The evidence reads every retrieved report (k = 40 by default); a terminal lists the best ten."""
    reports = [hit(f"r-{n}", n, 1 - n / 100, "impression", "Left effusion.") for n in range(1, 26)]
    text = _printed(reports)
    listed = [r.report.id for r in reports if any(f" {r.report.id} " in line for line in text.splitlines())]
    assert listed == [f"r-{n}" for n in range(1, 11)]
    assert "the first 10 of 25 similar reports" in text and "the other 15 are read by the evidence" in text
    assert "the other" not in _printed(reports[:10]) and "10 similar reports" in _printed(reports[:10])


def test_ask_names_an_index_tokenized_under_older_negation_rules(index_dir: Path, tmp_path: Path) -> None:
    """The same note `assistant search` gives, with the command that fixes it (the LLM down: retrieval only)."""
    import shutil

    old = tmp_path / "old-index"
    shutil.copytree(index_dir, old)
    manifest = json.loads((old / "manifest.json").read_text())
    manifest.pop("lexical_rules")
    (old / "manifest.json").write_text(json.dumps(manifest))
    run = _ask(
        "Meniscus sign at the right costophrenic angle",
        "--index",
        str(old),
        "--backend",
        "openai",
        "--model",
        "m",
        RADSEARCH_LLM_BASE_URL="http://127.0.0.1:9/v1",
        RADSEARCH_LLM_RETRIES="0",
    )
    assert run.returncode == 3, run.stderr
    assert f"assistant update --index {old} --retokenize" in " ".join(run.stderr.split())


# ------------------------------------------------------------------------- streaming to the terminal (issue 41)
def _read_timed(process: subprocess.Popen[bytes]) -> list[tuple[float, bytes]]:
    """Everything the process writes to stdout, each chunk with the moment it was read."""
    chunks: list[tuple[float, bytes]] = []
    assert process.stdout is not None
    while chunk := os.read(process.stdout.fileno(), 4096):
        chunks.append((time.monotonic(), chunk))
    return chunks


def _first_seen(chunks: list[tuple[float, bytes]], text: str) -> float:
    """When `text` had been printed in full."""
    seen = b""
    for moment, chunk in chunks:
        seen += chunk
        if text.encode() in seen:
            return moment
    raise AssertionError(f"{text!r} never printed in {seen.decode()!r}")


def test_ask_prints_the_reports_then_streams_the_answer_as_it_is_written(server: FaultServer, index_dir: Path) -> None:
    """A server writing one piece a second: the reports are printed before the first piece, and the diagnosis is on
    the terminal before the server has sent its last piece."""
    server.behaviour, server.trickle_s = "slow_stream", 1.0
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RADSEARCH_LLM_")}
    environment |= {"RADSEARCH_LLM_BASE_URL": server.url, "RADSEARCH_LLM_CONTEXT": "2048", "COLUMNS": "160"}
    args = ["Meniscus sign at the right costophrenic angle", "--index", str(index_dir), "--field", "findings"]
    args += ["--backend", "openai", "--model", "m", "--prompt", "diagnosis_evidence"]
    process = subprocess.Popen(
        [sys.executable, "-m", "assistant.cli", "ask", *args],
        cwd=REPO,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    chunks = _read_timed(process)
    assert process.wait(timeout=60) == 0
    assert len(server.sent_at) == len(server.stream_pieces) and server.requests[0]["stream"] is True
    reports = _first_seen(chunks, "cxr-001")
    draft = _first_seen(chunks, "diagnosis: pleural")
    assert reports < server.sent_at[0] < draft < server.sent_at[-1]
    output = b"".join(chunk for _, chunk in chunks).decode()
    assert "Most likely diagnosis:" in output and output.index("cxr-001") < output.index("Most likely diagnosis:")


def test_ask_markdown_is_the_answer_with_its_reports_and_configuration(index_dir: Path) -> None:
    """Issue 41: the answer exported as Markdown (the chat's Export), from the default answer (no model)."""
    run = _ask("Enlarged cardiac silhouette", "--index", str(index_dir), "--prompt", "evidence", "--markdown")
    assert run.returncode == 0, run.stderr
    document = run.stdout
    assert document.startswith("# RadSearch Assistant answer\n") and "**Most likely diagnosis:**" in document
    assert "## Similar reports" in document and "### #1 cxr-004 (" in document and "## Configuration " in document
    both = _ask("Enlarged cardiac silhouette", "--index", str(index_dir), "--markdown", "--json")
    assert both.returncode == 2 and "choose one" in both.stderr
