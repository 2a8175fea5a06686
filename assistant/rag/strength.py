"""How strong an answer's evidence is, in words that mean the same in `ask`, `ask --markdown` and the chat.

Why (issue 48): an answer drawn from two weakly similar reports read exactly like one drawn from thirty, and when the
archive held no similar case (a meniscal tear among brain reports) nothing said so. The measure is the share of the
voting reports' weight that affirms the answer (its candidate's `score` in the evidence differential: similarity-
weighted when the weighting is, assistant/rag/weighting.py); the cut points between the words were chosen on the dev
cases so that each word predicts how often such answers are right (docs/decisions/2026-11-28-evidence-strength.md,
the calibration table and plot in eval/results/diagnosis_strength.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

Level = Literal["strong", "moderate", "weak"]
#: Share of the voting weight at and above which the evidence is strong, and below which it is weak, chosen on the
#: dev cases by the rule of docs/decisions/2026-11-28-evidence-strength.md: no share from 0.30 to 0.80 made 80% of
#: the dev answers above it right, so no answer is called strong (above any share); below 0.20, 25% were right.
STRONG_FROM = 1.01
WEAK_BELOW = 0.2
#: The words of each level, shown after "Evidence:".
WORDS: dict[Level, str] = {
    "strong": "strong: most of the similar reports affirm it",
    "moderate": "moderate: some of the similar reports affirm it",
    "weak": "weak: few similar cases in this archive",
}


def level_of(measure: float) -> Level:
    """The level of a share of the voting weight."""
    if measure >= STRONG_FROM:
        return "strong"
    return "weak" if measure < WEAK_BELOW else "moderate"


def strength(evidence: Mapping[str, Any], diagnosis: str | None) -> dict[str, Any]:
    """The strength of `diagnosis` given the answer's evidence (EvidenceDifferential.to_dict): {"level", "measure",
    "words"}; a diagnosis no similar report affirms (the model's own) is weak with measure 0. Empty without a
    diagnosis or without retrieval."""
    if not diagnosis or not evidence:
        return {}
    scores = {c["diagnosis"].lower(): c["score"] for c in evidence.get("candidates", [])}
    measure = float(scores.get(diagnosis.lower(), 0.0))
    level = level_of(measure)
    return {"level": level, "measure": round(measure, 4), "words": WORDS[level]}


def strength_line(answer_strength: Mapping[str, Any]) -> str:
    """The line every view shows ("Evidence: weak: few similar cases in this archive"), "" when there is none."""
    return f"Evidence: {answer_strength['words']}" if answer_strength else ""
