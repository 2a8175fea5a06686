"""Comparing two diagnosis runs that differ only in the llama.cpp build (eval/diagnosis/build_agreement.py), by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from diagnosis_runs import diagnosis_run, verdict

from eval.diagnosis.build_agreement import compare, main
from eval.diagnosis.results import BuildAgreement, DiagnosisResults


def run(answers: dict[str, list[tuple[str, bool]]]) -> DiagnosisResults:
    return diagnosis_run({condition: [verdict(f"c{n}", ok, text) for n, (text, ok) in enumerate(rows)]
                          for condition, rows in answers.items()})  # fmt: skip


PORTABLE = run({"none": [("A", True), ("B", False), ("C", False), ("D", False)],
                "rag": [("A", True), ("B", True), ("C", True), ("D", False)]})  # fmt: skip
NATIVE = run({"none": [("A", True), ("b ", False), ("X", True), ("D", False)],
              "rag": [("A", True), ("B", True), ("Y", False), ("D", False)],
              "only-native": [("A", True), ("B", True), ("C", True), ("D", True)]})  # fmt: skip


def test_accuracy_agreement_and_gain_per_condition_both_runs_have() -> None:
    result = compare(PORTABLE, NATIVE, ("portable", "native"), "python -m eval.diagnosis.build_agreement a b")
    assert list(result.conditions) == ["none", "rag"]
    none, rag = result.conditions["none"], result.conditions["rag"]
    assert none.builds["portable"].k == 1 and none.builds["native"].k == 2 and none.cases == 4
    assert none.identical_answers.k == 3  # "B" and "b " are the same answer
    assert rag.only_first_right == 1 and rag.only_second_right == 0
    assert result.gain_over_none["rag"] == {"portable": 0.5, "native": 0.0}


def test_the_command_writes_both_files(tmp_path: Path) -> None:
    for name, data in (("a", PORTABLE), ("b", NATIVE)):
        (tmp_path / f"{name}.json").write_text(json.dumps(data.to_json()))
    assert main([str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--labels", "portable,native",
                 "--out", str(tmp_path), "--name", "agree"]) == 0  # fmt: skip
    text = (tmp_path / "agree.md").read_text()
    assert "| rag | 4 | 75.0 [" in text and "- rag: portable +50.0, native +0.0" in text
    assert BuildAgreement.read(tmp_path / "agree.json").labels == ["portable", "native"]
    with pytest.raises(SystemExit):
        main([str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--labels", "same,same"])
