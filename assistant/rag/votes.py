"""Which retrieved reports vote in the evidence differential, and how much: the reports of the question's body region
and modality, weighed by their search scores, counting only diagnoses the question does not rule out.

Why one function: `ask`, the chat and the diagnosis benchmark must read the same evidence from the same hits
(eval/diagnosis/benchmark.py checks a cached answer against it).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from assistant.rag.evidence import EvidenceDifferential, evidence_differential
from assistant.rag.question import Question
from assistant.rag.weighting import WEIGHTING, Weighting
from retriever.search.hit import Hit


def evidence_for(
    question: Question, hits: Sequence[Hit], weighting: Weighting = WEIGHTING, *, set_aside: Collection[str] = ()
) -> EvidenceDifferential:
    """The evidence differential of `hits` (best-ranked first) for `question`. A report without an impression
    affirms nothing (its section labels and history, "MOTOR:", "PMH:", would count as diagnoses); a report reads
    by its conclusion (impression and addendum). `set_aside`: reports that address a model (assistant.rag.injection)."""
    voting = [h for h in hits if question.admits(h.report.labelled_text(), h.report.modality)]
    return evidence_differential(
        [(h.report.id, h.report.conclusion) for h in voting],
        set_aside=set_aside,
        weighting=weighting,
        scores=[h.score for h in voting],
        rules_out=question.rules_out,
        excluded=len(hits) - len(voting),
    )
