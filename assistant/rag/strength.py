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
#: When the evidence is strong: share of the voting weight at least STRONG_FROM, the first voting report (the best-
#: ranked retrieved report that votes) affirms the answer, and its share leads the runner-up's by at least
#: STRONG_LEAD. Chosen on the dev cases by the rule of docs/decisions/2026-11-29-strong-evidence.md (30 dev answers
#: strong, 80% right); a share alone made no strong level (docs/decisions/2026-11-28-evidence-strength.md).
STRONG_FROM = 0.35
STRONG_LEAD = 0.2
#: Share below which the evidence is weak (25% of such dev answers were right).
WEAK_BELOW = 0.2
#: The words of each level, shown after "Evidence:".
WORDS: dict[Level, str] = {
    "strong": "strong: the closest similar report affirms it, well ahead of any other diagnosis",
    "moderate": "moderate: some of the similar reports affirm it",
    "weak": "weak: few similar cases in this archive",
}


def level_of(
    measure: float,
    first_affirms: bool = False,
    lead: float = 0.0,
    strong_from: float = STRONG_FROM,
    strong_lead: float = STRONG_LEAD,
) -> Level:
    """The level of a share of the voting weight, given whether the first voting report affirms the answer and by
    how much its share leads the runner-up's (`strong_from`, `strong_lead`: other cut points, as the rule tries)."""
    if measure >= strong_from and first_affirms and lead >= strong_lead:
        return "strong"
    return "weak" if measure < WEAK_BELOW else "moderate"


def measures(evidence: Mapping[str, Any], diagnosis: str) -> tuple[float, bool, float]:
    """What the level of `diagnosis` rests on, from the answer's evidence (EvidenceDifferential.to_dict): its share of
    the voting weight (0 when no similar report affirms it), whether the first voting report affirms it, and its
    share's lead over the runner-up candidate's."""
    candidates = evidence.get("candidates", [])
    mine = next((c for c in candidates if c["diagnosis"].lower() == diagnosis.lower()), None)
    measure = float(mine["score"]) if mine else 0.0
    lead = measure - max((c["score"] for c in candidates if c is not mine), default=0.0)
    return measure, mine is not None and evidence.get("first_voter") in mine.get("report_ids", ()), round(lead, 4)


def strength(evidence: Mapping[str, Any], diagnosis: str | None) -> dict[str, Any]:
    """The strength of `diagnosis` given the answer's evidence (EvidenceDifferential.to_dict): {"level", "measure",
    "words"}; a diagnosis no similar report affirms (the model's own) is weak with measure 0. Empty without a
    diagnosis or without retrieval."""
    if not diagnosis or not evidence:
        return {}
    measure, first_affirms, lead = measures(evidence, diagnosis)
    level = level_of(measure, first_affirms, lead)
    found = {"level": level, "measure": round(measure, 4), "words": WORDS[level]}
    return found | ({"unaffirmed": list(evidence["unaffirmed"])} if evidence.get("unaffirmed") else {})


def strength_line(answer_strength: Mapping[str, Any]) -> str:
    """The line every view shows ("Evidence: weak: few similar cases in this archive"), "" when there is none; and
    when no similar report affirms what the question describes, that too ("...; none of the similar reports affirms
    pulmonary embolism, which the question describes"): a statement, not a level
    (docs/decisions/2026-11-29-what-no-similar-report-affirms.md)."""
    if not answer_strength:
        return ""
    line = f"Evidence: {answer_strength['words']}"
    if names := answer_strength.get("unaffirmed"):
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
        line += f"; none of the similar reports affirms {listed}, which the question describes"
    return line
