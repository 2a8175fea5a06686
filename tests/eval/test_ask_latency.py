"""The `assistant ask` latency benchmark: each question in a fresh context, cold and with the saved system prompt."""

from __future__ import annotations

from pathlib import Path

from llm_fixtures import build_index, require_embedded_smollm2

from eval.perf.ask_latency import measure
from eval.perf.report import ask_latency
from eval.perf.sections import AskLatency


def test_cold_runs_read_the_whole_prompt_and_saved_runs_load_the_prefix(tmp_path: Path, minilm) -> None:
    require_embedded_smollm2()
    from retriever.index.report_index import ReportIndex

    index = ReportIndex.load(build_index(tmp_path / "index", minilm), minilm)
    query = "Blunting of the right costophrenic angle."
    data = measure(index, [query], "smollm2", 1, tmp_path / "states", max_tokens=8, prompt="diagnosis_evidence")
    assert data["prefix_sources"] == {"cold": ["none"], "saved_prefix": ["disk"]}
    assert len(list((tmp_path / "states").glob("*.kv"))) == 1
    assert data["cold_ttft_s"] <= data["cold_total_s"] and data["saved_prefix_ttft_s"] <= data["saved_prefix_total_s"]
    targets: list[str] = []
    stamp = {"queries": 1, "measured": "now", "threads": 1, "load_average_at_end": [0, 0, 0], "command": "x"}
    lines = ask_latency(AskLatency.from_json(stamp | data), targets)
    assert any("saved prefix" in line for line in lines) and len(targets) == 2


def test_the_default_answer_asks_no_model_so_its_first_token_is_the_whole_answer(tmp_path: Path, minilm) -> None:
    require_embedded_smollm2()
    from retriever.index.report_index import ReportIndex

    index = ReportIndex.load(build_index(tmp_path / "index", minilm), minilm)
    data = measure(
        index, ["Blunting of the right costophrenic angle."], "smollm2", 1, tmp_path / "states", prompt="evidence"
    )
    assert data["prompt"] == "evidence" and data["saved_prefix_ttft_s"] == data["saved_prefix_total_s"]
    assert data["prefix_sources"] == {"cold": ["none"], "saved_prefix": ["none"]}  # no model was asked
    targets: list[str] = []
    stamp = {"queries": 1, "measured": "now", "threads": 1, "load_average_at_end": [0, 0, 0], "command": "x"}
    ask_latency(AskLatency.from_json(stamp | data), targets)
    slowest = max(data["cold_total_s"], data["saved_prefix_total_s"])
    assert targets[-1].startswith("| the default answer (evidence, no model) median <= 0.1 s")  # issue 48's target
    assert f"| {slowest} s |" in targets[-1]
