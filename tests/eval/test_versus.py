"""eval.diagnosis.versus compares two committed results files, and with --cases grades both sides' stored answers
again by today's grader, so a grader fix counts alike on both sides."""

from __future__ import annotations

import json
from pathlib import Path

from eval.common.shared_data import RESULTS
from eval.diagnosis.results import DiagnosisResults
from eval.diagnosis.versus import compare

OLD, NEW = RESULTS / "diagnosis_evidence.json", RESULTS / "diagnosis_modality48.json"
OLD_DEFAULT = "evidence:hybrid-weighted:radsearch[report,k=40,weighting=sqrt]"
DEFAULT = "evidence:hybrid-weighted:radsearch[report,k=40,weighting=similarity:0.5]"


def test_stored_verdicts_are_compared_on_the_shared_cases() -> None:
    result = compare(OLD, OLD_DEFAULT, NEW, DEFAULT)
    assert result["n"] == 306 and result["only_b"] > result["only_a"]
    assert abs(result["difference_points"] - 100 * (result["b_top1"] - result["a_top1"])) < 1e-9


def test_with_cases_both_sides_are_graded_again_against_that_file(tmp_path: Path) -> None:
    """Two cases whose reference is rewritten: one to the new side's own answer (now right on that side), one to a
    diagnosis neither answered (now wrong on both); only the cases the file holds are compared."""
    rows = {v.case_id: v for v in DiagnosisResults.read(NEW).cases[DEFAULT]}
    answered = next(v for v in rows.values() if v.prediction and not v.correct)
    other = next(i for i, v in rows.items() if v.correct and i != answered.case_id)
    cases = tmp_path / "cases.jsonl"
    lines = [
        {"id": answered.case_id, "findings": "x", "diagnosis": answered.prediction},
        {"id": other, "findings": "x", "diagnosis": "Kikuchi-Fujimoto disease"},
    ]
    cases.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = compare(NEW, DEFAULT, NEW, DEFAULT, cases)
    assert result["n"] == 2 and result["a_top1"] == result["b_top1"] == 0.5
