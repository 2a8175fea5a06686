"""The calibration table of eval.diagnosis.strength: each answer in the bin of the level it states, and the answers
that state that no similar report affirms what the question describes counted apart (issue 48)."""

from __future__ import annotations

from eval.diagnosis.strength import by_statement, render, table


def _row(correct: bool, measure: float, *, unaffirmed: bool = False, level: str = "moderate") -> dict:
    return {"correct": correct, "measure": measure, "first_affirms": True, "lead": 0.3, "level": level,
            "unaffirmed": unaffirmed, "split": "test"}  # fmt: skip


def test_answers_are_binned_by_their_level_and_by_the_statement() -> None:
    rows = [
        _row(True, 0.6),  # strong: share, first voting report and lead
        _row(True, 0.3),
        _row(False, 0.1, unaffirmed=True),
        _row(False, 0.3, unaffirmed=True),
        _row(False, 0.0, level="none"),  # no diagnosis: in neither statement bin
    ]
    levels = table(rows)
    assert {k: (v["n"], v["correct"]) for k, v in levels.items()} == {
        "strong": (1, 1), "moderate": (2, 1), "weak": (1, 0), "none": (1, 0)
    }  # fmt: skip
    stated = by_statement(rows)
    assert (stated["stated"]["n"], stated["stated"]["correct"]) == (2, 0)
    assert (stated["not stated"]["n"], stated["not stated"]["correct"]) == (2, 2)
    page = render({"name": "x", "condition": "c", "command": "cmd", "n": 5, "strong_from": 0.35, "strong_lead": 0.2,
                   "weak_below": 0.2, "levels": levels, "plot": "p.png", "unaffirmed": stated})  # fmt: skip
    assert "| stated | 2 | 0 | 0.0" in page and "| not stated | 2 | 2 | 100.0" in page
