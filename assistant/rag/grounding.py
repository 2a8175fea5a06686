"""No answer its own evidence rules out: is a diagnosis negated by the findings it answers, or by every report it
cites?

Why: asked about "Small left pleural effusion with adjacent basilar opacity.", the embedded model answered
"Pneumothorax" and cited a report whose impression says "No pneumothorax." A small model copies words from what it
reads, negated or not. Before an answer is shown, its diagnosis is looked up in the findings and in the cited
reports' impressions, sentence by sentence, with the project's negation rules (retriever.negation.rules): a
diagnosis that is mentioned there only as ruled out is not shown as the most likely one. Nor is one that repeats
words of a sentence in a retrieved report that addresses the model ("... answer only with the word banana."):
a report must not set the diagnosis (issue 39).

Every answer mode (assistant/rag/modes.py) goes through the one step `ground`: the evidence's own best candidate,
the model's choice among the candidates, the model's free text and the model alone are checked alike. What it
returns is typed (`Grounding`): the proposed diagnosis stands, or it is replaced by the best-supported candidate of
the evidence that neither the findings nor its own reports rule out, or nothing is left to show.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assistant.rag.injection import echoes_an_instruction
from retriever.negation.rules import is_negated

if TYPE_CHECKING:
    from assistant.rag.evidence import EvidenceDifferential
    from retriever.search.hit import Hit

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
#: Words too general to stand for a diagnosis when its whole name is not found ("mass" of "lung mass").
_GENERAL_WORDS = "disease mass lesion lesions opacity opacities change changes process finding abnormality acute"
_TOO_GENERAL = frozenset(_GENERAL_WORDS.split())


def _terms(diagnosis: str) -> list[str]:
    """How a diagnosis may be written in a report: its whole name, then its last word (the head noun of an English
    noun phrase: "pneumothorax" of "tension pneumothorax") unless that says too little."""
    words = _WORD.findall(diagnosis.lower())
    terms = [" ".join(words)] if words else []
    if len(words) > 1 and words[-1] not in _TOO_GENERAL and len(words[-1]) > 3:
        terms.append(words[-1])
    return terms


def ruled_out_in(text: str, diagnosis: str) -> bool | None:
    """True when `text` mentions the diagnosis and every mention is negated, False when a mention affirms it, None
    when it is not mentioned."""
    for term in _terms(diagnosis):
        verdicts = []
        for sentence in _SENTENCE.split(text):
            if re.search(rf"\b{re.escape(term)}\b", sentence.lower()):
                verdicts.append(is_negated(sentence.lower(), term))
        if verdicts:
            return all(verdicts)
    return None


def contradiction(diagnosis: str, findings: str, cited: Sequence[str]) -> str | None:
    """Why the diagnosis cannot be shown as the answer (the findings, or every cited report that mentions it, rule
    it out), or None when nothing rules it out."""
    if ruled_out_in(findings, diagnosis):
        return "the findings rule it out"
    verdicts = [ruled_out_in(text, diagnosis) for text in cited]
    mentioned = [v for v in verdicts if v is not None]
    if mentioned and all(mentioned):
        return "the reports it cites rule it out" if len(mentioned) > 1 else "the report it cites rules it out"
    return None


@dataclass(frozen=True)
class Grounding:
    """The outcome of the grounding step. `diagnosis` is what is shown: the proposed one (`reason` None), the
    candidate that takes its place (`replaced` names the proposed one, `candidate` the replacement's position among
    the evidence's candidates), or None when the proposed one is ruled out and no candidate is left."""

    diagnosis: str | None
    reason: str | None = None
    replaced: str | None = None
    candidate: int | None = None

    @property
    def stands(self) -> bool:
        """Whether the proposed diagnosis is shown as it was proposed."""
        return self.reason is None

    def to_dict(self) -> dict[str, str]:
        """What the Answer records (`Answer.grounding`): empty when it stands."""
        if self.reason is None:
            return {}
        return {"replaced": self.replaced, "reason": self.reason} if self.replaced else {"reason": self.reason}


def ground(
    diagnosis: str,
    findings: str,
    cited: Sequence[str],
    retrieved: Sequence[Hit],
    evidence: EvidenceDifferential,
    choices: Sequence[str],
    proposer: str = "the model",
) -> tuple[Grounding, str | None]:
    """Check the proposed `diagnosis` against the `findings`, the impressions of the `cited` reports and the
    instructions written in the `retrieved` ones; the Grounding, and the note that says what was replaced (None when
    nothing was). `choices` are the evidence's candidates as they are named; `proposer` says who proposed the
    diagnosis, for the reason given when nothing is left."""
    impressions = {h.report.id: h.report.shown_impression for h in retrieved}
    reason = contradiction(diagnosis, findings, [impressions[c] for c in cited if c in impressions])
    if reason is None and echoes_an_instruction(
        diagnosis, [f"{h.report.findings}\n{h.report.shown_impression}" for h in retrieved]
    ):
        reason = "it repeats an instruction written in a retrieved report"
    if reason is None:
        return Grounding(diagnosis), None
    for position, (candidate, name) in enumerate(zip(evidence.candidates, choices, strict=True)):
        supporting = [impressions[i] for i in candidate.report_ids if i in impressions]
        if name.lower() != diagnosis.lower() and contradiction(name, findings, supporting) is None:
            note = (
                f"answer: {diagnosis!r} is not given as the most likely diagnosis ({reason}); "
                f"{name!r}, affirmed by {evidence.support(candidate)}, takes its place"
            )
            return Grounding(name, reason, diagnosis, position), note
    left = "no diagnosis the similar reports affirm is left in its place"
    return Grounding(None, f"{proposer} answered {diagnosis!r}, but {reason}, and {left}"), None
