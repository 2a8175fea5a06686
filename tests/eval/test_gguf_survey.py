"""The offline chat-model survey (eval/diagnosis/llm_survey.py): its data file matches the model table, measurements
survive.

No model is loaded: verification is replaced by "not installed here", as on a machine without the candidates.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.diagnosis import llm_survey
from models.gguf import MODELS


def candidates() -> list[dict]:
    return json.loads(llm_survey.CANDIDATES.read_text(encoding="utf-8"))["candidates"]


def test_every_usable_model_is_in_the_survey_and_every_verdict_has_a_reason() -> None:
    named = [c["name"] for c in candidates() if c.get("name")]
    assert sorted(named) == sorted(MODELS)
    for candidate in candidates():
        assert candidate["verdict"] == ("verified" if candidate.get("name") else "rejected")
        assert candidate["packages"] and candidate["model"] and candidate["reason"] and candidate["evidence"]


@pytest.fixture
def not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Results written to a temporary file; no model counts as installed."""
    results = tmp_path / "llm_models.json"
    monkeypatch.setattr(llm_survey, "RESULTS_JSON", results)
    monkeypatch.setattr(llm_survey, "verify", lambda name: None)
    return results


def test_measurements_of_the_same_file_are_carried_over(not_installed: Path) -> None:
    run = {"threads": 2, "prompt_tok_s": 90.0, "gen_tok_s": 25.0, "load_average_before": [0.5, 0.5, 0.5]}
    speed = [run | {"measured": "2026-11-23T09:00", "answer": "Left pleural effusion."}]
    old = {
        "name": "qwen1.5b",
        "verification": {"sha256": MODELS["qwen1.5b"].sha256, "checksum_ok": True, "checked": "d", "header": {}},
        "speed": speed,
        "diagnosis": {"accuracy": 0.4, "seconds_per_answer": 9.5},
    }
    stale = {"name": "qwen0.5b", "verification": {"sha256": "0" * 64}, "speed": speed}
    not_installed.write_text(json.dumps({"models": [old, stale]}))
    results = llm_survey.build(speed=False)
    models = {e.get("name"): e for e in results["models"]}
    assert models["qwen1.5b"]["speed"] == speed and models["qwen1.5b"]["diagnosis"]["accuracy"] == 0.4
    assert models["qwen0.5b"]["speed"] is None and models["qwen0.5b"]["verification"] is None
    assert not models["qwen1.5b"]["installed_here"]
    markdown = llm_survey.render_markdown(results)
    assert "| 90 | 25 | 0.5 | 0.4 | 9.5 |" in markdown and "2 threads): Left pleural effusion." in markdown


def test_the_table_lists_every_package_and_leaves_benchmark_columns_pending(not_installed: Path) -> None:
    markdown = llm_survey.render_markdown(llm_survey.build(speed=False))
    for candidate in candidates():
        assert f"`{candidate['packages']}`" in markdown
    assert "| `qwen0.5b` |" in markdown and "not installed here" in markdown and "| pending | pending |" in markdown


def test_a_models_diagnosis_run_fills_its_accuracy_columns(not_installed: Path, monkeypatch) -> None:
    import eval.diagnosis.default

    chosen = "hybrid-weighted:enc[report,k=3,prompt=diagnosis_candidates]"
    monkeypatch.setattr(eval.diagnosis.default, "read_choice", lambda: {"condition": chosen})
    run = {
        "n_cases": 44,
        "summary": {
            "accuracy": {
                "none": {"overall": {"accuracy": 0.2}, "mean_seconds_per_case": 4.0},
                chosen: {"overall": {"accuracy": 0.3}, "mean_seconds_per_case": 7.5},
            }
        },
    }
    (not_installed.parent / "diagnosis_model_qwen0.5b.json").write_text(json.dumps(run))
    models = {e.get("name"): e for e in llm_survey.build(speed=False)["models"]}
    assert models["qwen0.5b"]["diagnosis"]["condition"] == chosen and models["qwen0.5b"]["diagnosis"]["cases"] == 44
    markdown = llm_survey.render_markdown({**llm_survey.build(speed=False)})
    assert "| 0.3 (alone 0.2) | 7.5 |" in markdown
    del run["summary"]["accuracy"]["none"]
    (not_installed.parent / "diagnosis_model_qwen0.5b.json").write_text(json.dumps(run))
    with pytest.raises(SystemExit, match="runs no `none`"):
        llm_survey.build(speed=False)
