"""The evidence-coverage measure's parts (eval/diagnosis/evidence_coverage.py): what the first five become, and the
model alone's answers read from a prediction cache."""

from __future__ import annotations

import json
from pathlib import Path

from eval.diagnosis.evidence_coverage import MODEL_ALONE, _placed, model_answers


def test_the_closest_reports_candidates_take_the_last_of_the_first_five_only_when_missing() -> None:
    listed = ["a", "b", "c", "d", "e", "f"]
    assert _placed(listed, ["c"]) == listed  # already among the first five
    assert _placed(listed, ["f"]) == ["a", "b", "c", "d", "f"]
    assert _placed(listed, ["x", "y"]) == ["a", "b", "c", "x", "y"]
    assert _placed(["a"], ["x"]) == ["a", "x"]


def test_the_model_alones_answers_come_from_its_cache_rows_only(tmp_path: Path) -> None:
    cache = tmp_path / "cache.jsonl"
    rows = [
        {"case_id": "c1", "condition": MODEL_ALONE, "diagnosis": "pneumonia", "differential": ["atelectasis"]},
        {"case_id": "c1", "condition": "evidence:x", "diagnosis": "effusion", "differential": []},
        {"case_id": "c2", "condition": MODEL_ALONE, "diagnosis": None, "differential": None},
        {"case_id": "c3", "condition": MODEL_ALONE, "diagnosis": "edema"},
    ]
    cache.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert model_answers(cache, {"c1", "c2"}) == {"c1": ["pneumonia", "atelectasis"], "c2": []}
