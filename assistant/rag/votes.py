"""Which retrieved reports vote in the evidence differential, and how much: the reports of the question's body region
and modality, weighed by their search scores, near-duplicates sharing one vote, counting only diagnoses of the
question's region that the question does not rule out; and, when none votes for anything, the reason the answer gives.

Why one function: `ask`, the chat and the diagnosis benchmark must read the same evidence from the same hits
(eval/diagnosis/benchmark.py checks a cached answer against it).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from assistant.rag.evidence import MAX_CANDIDATES, EvidenceDifferential, evidence_differential
from assistant.rag.near_duplicates import near_duplicate_groups
from assistant.rag.question import Question
from assistant.rag.weighting import WEIGHTING, Weighting
from retriever.concepts import affirmed_concepts
from retriever.reports.judged_text import plain
from retriever.search.hit import Hit


def evidence_for(
    question: Question,
    hits: Sequence[Hit],
    weighting: Weighting = WEIGHTING,
    *,
    set_aside: Collection[str] = (),
    limit: int = MAX_CANDIDATES,
    share_near_duplicates: bool = True,
) -> EvidenceDifferential:
    """The evidence differential of `hits` (best-ranked first) for `question`. A report without an impression
    affirms nothing (its section labels and history, "MOTOR:", "PMH:", would count as diagnoses); a report reads
    by its conclusion (impression and addendum). `set_aside`: reports that address a model (assistant.rag.injection).
    `share_near_duplicates` off: each near-duplicate votes in full (the comparison of evidence_ranking.py)."""
    voting = [h for h in hits if question.admits(h.report.labelled_text(), h.report.modality)]
    evidence = evidence_differential(
        [(h.report.id, h.report.conclusion) for h in voting],
        set_aside=set_aside,
        weighting=weighting,
        scores=[h.score for h in voting],
        groups=near_duplicate_groups([h.report.findings or h.report.full_text for h in voting])
        if share_near_duplicates
        else None,
        rules_out=question.rules_out,
        fits=question.fits,
        excluded=len(hits) - len(voting),
        limit=limit,
        stored=[h.concepts for h in voting],
    )
    return replace(evidence, unaffirmed=unaffirmed(question, evidence, voting))


def unaffirmed(question: Question, evidence: EvidenceDifferential, voting: Sequence[Hit]) -> tuple[str, ...]:
    """The names of the diagnoses and findings `question` describes when no report that voted affirms any of them,
    in its conclusion or in its findings (empty when one does, when it describes none, or when no report voted):
    then the similar reports are about something else, whatever share of them agrees on the answer. Their findings
    are read only when no conclusion affirms one: an impression concludes "cholecystitis" over findings that
    describe the thickened wall the question describes (docs/decisions/2026-11-29-what-no-similar-report-affirms.md)."""
    described = question.described()
    if not described or not evidence.affirmed:
        return ()
    concluded = {name for names in evidence.affirmed.values() for name in names}
    if any(c.name in concluded for c in described):
        return ()
    wanted = {c.id for c in described}
    findings = (h.report.findings for h in voting if h.report.id in evidence.affirmed and h.report.findings)
    if any(wanted & {c.id for c in affirmed_concepts(plain(text))} for text in findings):
        return ()
    return tuple(c.name for c in described)


def no_evidence_reason(read: int, excluded: int) -> str:
    """Why the evidence names no diagnosis: "no similar case in this archive" when most of the reports read are of
    another body region or modality (a liver question over an archive of knees), else what the reports say."""
    if excluded * 2 > read:
        return (
            f"no similar case in this archive: {excluded} of the {read} most similar reports are of another body "
            f"region or modality, and the other {read - excluded} affirm no diagnosis of the question's region"
        )
    return f"none of the {read} most similar reports affirms a diagnosis (they read as normal, or rule findings out)"
