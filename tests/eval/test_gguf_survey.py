"""The offline chat-model survey (eval/diagnosis/llm_survey.py): its data file matches the model table, measurements
survive.

No model is loaded: verification is replaced by "not installed here", as on a machine without the candidates.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from diagnosis_runs import accuracy_run

from eval.common.machine import describe
from eval.diagnosis import llm_survey
from eval.diagnosis.results import ModelAccuracy, ModelSurvey, SurveyedModel, Timing, Verification
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
    load = [0.5, 0.5, 0.5]
    speed = [Timing("2026-11-23T09:00", 2, 1.0, 100, 90.0, 20, 25.0, load, load, "Left pleural effusion.")]

    def entry(name: str, sha256: str) -> SurveyedModel:
        return SurveyedModel(
            "p",
            "m",
            "verified",
            "r",
            "e",
            name=name,
            verification=Verification(sha256, 1, "d", True, {}),
            speed=speed,
            diagnosis=ModelAccuracy(0.4, 0.3, 9.5, "c", 44, f"diagnosis_model_{name}.json"),
        )

    previous = [entry("qwen1.5b", MODELS["qwen1.5b"].sha256), entry("qwen0.5b", "0" * 64)]
    not_installed.write_text(json.dumps(ModelSurvey("s", "m", "d", describe(), previous).to_json()))
    results = llm_survey.build(speed=False)
    models = {e.name: e for e in results.models}
    assert models["qwen1.5b"].speed == speed and models["qwen1.5b"].diagnosis == previous[0].diagnosis
    assert models["qwen0.5b"].speed is None and models["qwen0.5b"].verification is None
    assert not models["qwen1.5b"].installed_here
    markdown = llm_survey.render_markdown(results)
    assert "| 90 | 25 | 0.5 | 0.4 (alone 0.3) | 9.5 |" in markdown and "2 threads): Left pleural effusion." in markdown


def test_the_table_lists_every_package_and_leaves_benchmark_columns_pending(not_installed: Path) -> None:
    markdown = llm_survey.render_markdown(llm_survey.build(speed=False))
    for candidate in candidates():
        assert f"`{candidate['packages']}`" in markdown
    assert "| `qwen0.5b` |" in markdown and "not installed here" in markdown and "| pending | pending |" in markdown


def test_a_models_diagnosis_run_fills_its_accuracy_columns(not_installed: Path, monkeypatch) -> None:
    import eval.diagnosis.default

    chosen = "hybrid-weighted:enc[report,k=3,prompt=diagnosis_candidates]"
    monkeypatch.setattr(eval.diagnosis.default, "read_choice", lambda: {"condition": chosen})
    run = accuracy_run({"none": 0.2, chosen: 0.3}, n_cases=44, seconds={"none": 4.0, chosen: 7.5})
    (not_installed.parent / "diagnosis_model_qwen0.5b.json").write_text(json.dumps(run.to_json()))
    diagnosis = {e.name: e for e in llm_survey.build(speed=False).models}["qwen0.5b"].diagnosis
    assert diagnosis is not None and (diagnosis.condition, diagnosis.cases) == (chosen, 44)
    markdown = llm_survey.render_markdown(llm_survey.build(speed=False))
    assert "| 0.3 (alone 0.2) | 7.5 |" in markdown
    run = accuracy_run({chosen: 0.3}, n_cases=44)
    (not_installed.parent / "diagnosis_model_qwen0.5b.json").write_text(json.dumps(run.to_json()))
    with pytest.raises(SystemExit, match="runs no `none`"):
        llm_survey.build(speed=False)
