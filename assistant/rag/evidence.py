"""The evidence differential: which diagnoses the reports most similar to a finding affirm, ranked by how many
(and how similar) of them affirm each.

Why: one retrieved report is too little evidence and a 1.5B model cannot be trusted to read negations in free text.
On the 306 held-out cases the model given the top report was right 37% of the time, the model alone 32%, and a
perfect choice between the two would have reached 48% (eval/results/diagnosis_native.md): the right report is often
among the first few, not first. So every answer reads the conclusions of the top N reports and counts what they
*affirm*: a diagnosis a conclusion negates, calls resolved, or only asks to rule out is no evidence for it.

A candidate is a concept of the diagnosis vocabulary (retriever/concepts: a radiology layer over ICD-10-CM), never a
fragment of text (issue 48: "ct scan", "grade 3" and "electronically signed" were candidates when a regular
expression cut conclusions into parts): each conclusion item is linked to the concepts it affirms, and one disease
written two ways ("effusion", "pleural effusions") is one candidate under its preferred radiology name. An item that
only asks ("? fracture") affirms nothing; one that offers a diagnosis as a possibility counts half
(retriever/concepts/conclusion.py). An index stores what each report affirms when it is built or updated, and its
hits carry it (`Hit.concepts`): an answer then only adds them up, and links a conclusion itself only for a hit
without them (an older index, or one linked by another vocabulary), with the same function. Each report
counts once per concept, weighed by its rank or its similarity (assistant/rag/weighting.py); reports whose texts are
near-duplicates of one another share one vote (near_duplicates.py: a planted copy cannot outvote the archive, issue
51). Candidates are ranked by the summed weight, an appearance that names no disease (opacity, lesion, mass) at
APPEARANCE of it, so a specific diagnosis fewer reports affirm can come first. A concept the question itself rules
out ("No pleural effusion") is left out (`rules_out`, from assistant/rag/question.py), and named in `ruled_out`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from assistant.rag.injection import addresses_a_model, plain
from assistant.rag.weighting import WEIGHTING, Weighting, report_weights
from models.preset import PRESET
from retriever.concepts import Concept, gives_way
from retriever.concepts.conclusion import Stored, affirmed_diagnoses, from_stored

#: Most candidates an answer lists.
MAX_CANDIDATES = 8

_WORD = re.compile(r"\w+")
#: How much an appearance (a concept of kind "appearance": opacity, lesion, mass) counts against a specific concept:
#: chosen on the dev cases (docs/decisions/2026-11-28-concept-candidates.md, eval/diagnosis/evidence_ranking.py).
APPEARANCE = PRESET.answer.evidence_appearance_weight


@dataclass(frozen=True)
class Candidate:
    """One diagnosis of the differential with the reports that affirm it."""

    #: The concept's preferred radiology name.
    diagnosis: str
    #: Share of the read reports' weight that affirms it (0-1).
    score: float
    report_ids: tuple[str, ...]
    #: The concept's id in the vocabulary ("rad:pleural_effusion", "icd10:K80.20").
    concept: str = ""
    #: How many distinct texts affirm it: near-duplicate reports are one (near_duplicates.py).
    texts: int = 0

    @property
    def count(self) -> int:
        return len(self.report_ids)


@dataclass(frozen=True)
class EvidenceDifferential:
    """Candidates, best first, drawn from `read` retrieved reports."""

    candidates: tuple[Candidate, ...] = ()
    read: int = 0
    weighting: Weighting = WEIGHTING
    #: Report id -> the diagnoses its impression affirms (what every candidate's count rests on).
    affirmed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Retrieved reports that did not vote: of another body region or modality than the question's.
    excluded: int = 0
    #: Diagnoses the reports affirm that the question's own findings rule out: never candidates.
    ruled_out: tuple[str, ...] = ()
    #: Reports read as no evidence because they address a model (issue 51), in rank order.
    set_aside: tuple[str, ...] = ()
    #: The diagnoses and findings the question describes when no voting report affirms any of them (assistant/rag/
    #: votes.py): the similar reports are not about what was asked (docs/decisions/2026-11-29-what-no-similar-report-
    #: affirms.md).
    unaffirmed: tuple[str, ...] = ()

    def support(self, candidate: Candidate) -> str:
        """ "6 of 15 similar reports"; said when it rests on a single report, or on near-identical copies of one."""
        said = f"{candidate.count} of {self.read} similar report{'s' if self.read != 1 else ''}"
        if candidate.count == 1:
            return f"{said} (it rests on a single report)"
        if candidate.texts == 1:
            return f"{said} (near-identical copies of a single report: it rests on one text)"
        return said

    def to_dict(self) -> dict:
        return {
            "read": self.read,
            "weighting": self.weighting,
            "set_aside": list(self.set_aside),
            "excluded": self.excluded,
            "ruled_out": list(self.ruled_out),
            "first_voter": next(iter(self.affirmed), ""),
            "unaffirmed": list(self.unaffirmed),
            "candidates": [
                {
                    "diagnosis": c.diagnosis,
                    "concept": c.concept,
                    "score": round(c.score, 4),
                    "count": c.count,
                    "texts": c.texts,
                    "report_ids": list(c.report_ids),
                }
                for c in self.candidates
            ],
        }


@dataclass
class _Votes:
    concept: Concept
    reports: dict[str, float] = field(default_factory=dict)  # report id -> weight, in rank order


def evidence_differential(
    reports: Sequence[tuple[str, str]],
    *,
    weighting: Weighting = WEIGHTING,
    limit: int = MAX_CANDIDATES,
    set_aside: Collection[str] = (),
    scores: Sequence[float] | None = None,
    rules_out: Callable[[Concept], bool] | None = None,
    fits: Callable[[Concept], bool] | None = None,
    excluded: int = 0,
    groups: Sequence[int] | None = None,
    stored: Sequence[Stored | None] | None = None,
) -> EvidenceDifferential:
    """The differential of `reports`, (report id, conclusion) pairs best-ranked first, with their search `scores`
    (needed by a similarity weighting; without them every report scores alike). `rules_out(concept)`: the
    question's own findings rule it out, so it is no candidate (named in `ruled_out`). `fits(concept)`: it occurs in
    the question's body region; one that does not is no candidate. `excluded`: retrieved reports that did not vote.
    `groups`: each report's near-duplicate group (near_duplicates.py; default: each its own): a group casts one vote
    (`_shared`), and a candidate says how many distinct texts affirm it. A report in `set_aside` (judged on all its
    fields by the caller: assistant.rag.injection.set_aside), or whose conclusion addresses a model, is no evidence:
    it is left out and named in the differential's `set_aside`. `stored`: each one's stored concepts (Hit.concepts)."""
    scores = list(scores) if scores is not None else [1.0] * len(reports)
    groups = list(groups) if groups is not None else list(range(len(reports)))
    linked = _linked(reports, stored)
    aside = tuple(i for i, conclusion in reports if i in set_aside or addresses_a_model(conclusion))
    voting = [(p, s, g) for p, s, g in zip(reports, scores, groups, strict=True) if p[0] not in aside]
    reports = [pair for pair, _, _ in voting]
    group_of = {pair[0]: g for pair, _, g in voting}
    weights = _shared(report_weights([s for _, s, _ in voting], weighting), [(g, c) for (_, c), _, g in voting])
    total = sum(weights) or 1.0
    votes: dict[Concept, _Votes] = {}
    for (report_id, _), weight in zip(reports, weights, strict=True):
        for concept, certainty in linked[report_id]:
            if fits is not None and not fits(concept):
                continue
            votes.setdefault(concept, _Votes(concept)).reports[report_id] = weight * certainty
    candidates = [
        Candidate(
            v.concept.name,
            sum(v.reports.values()) / total,
            tuple(v.reports),
            v.concept.id,
            len({group_of[i] for i in v.reports}),
        )
        for v in votes.values()
    ]
    concepts = {concept.id: concept for concept in votes}
    candidates.sort(key=lambda c: (-c.score * _rank_factor(concepts[c.concept].kind), -c.count, len(c.diagnosis)))
    ruled = {concept.id for concept in votes if rules_out is not None and rules_out(concept)}
    kept = _named_once([c for c in candidates if c.concept not in ruled], concepts, limit)
    affirmed = {report_id: tuple(c.name for c, _ in linked[report_id]) for report_id, _ in reports}
    return EvidenceDifferential(
        kept,
        len(reports),
        weighting,
        affirmed,
        set_aside=aside,
        excluded=excluded,
        ruled_out=tuple(c.diagnosis for c in candidates if c.concept in ruled),
    )


def _named_once(candidates: list[Candidate], concepts: dict[str, Concept], limit: int) -> tuple[Candidate, ...]:
    """The first `limit` candidates without those a candidate ranked before them names more specifically
    ("effusion" after "pleural effusion"): one finding is listed once, by its most specific name
    (docs/decisions/2026-11-29-one-name-per-finding.md)."""
    kept: list[Candidate] = []
    for candidate in candidates:
        if len(kept) == limit:
            break
        concept = concepts[candidate.concept]
        if not any(gives_way(concept, concepts[before.concept]) for before in kept):
            kept.append(candidate)
    return tuple(kept)


def _linked(
    reports: Sequence[tuple[str, str]], stored: Sequence[Stored | None] | None
) -> dict[str, list[tuple[Concept, float]]]:
    """Report id -> the concepts its conclusion affirms: as its index stored them, or linked here (no stored ones,
    or one whose concept the vocabulary no longer has)."""
    stored = list(stored) if stored is not None else [None] * len(reports)
    linked = {}
    for (report_id, conclusion), pairs in zip(reports, stored, strict=True):
        found = from_stored(pairs) if pairs is not None else None
        linked[report_id] = found if found is not None else affirmed_diagnoses(conclusion)
    return linked


def _rank_factor(kind: str) -> float:
    """An appearance ranks as if it had APPEARANCE of its share (its `score` stays the share: the strength)."""
    return APPEARANCE if kind == "appearance" else 1.0


def _shared(weights: Sequence[float], members: Sequence[tuple[int, str]]) -> list[float]:
    """Each report's weight once near-duplicates share one vote: a group (`members`: each report's group and
    conclusion) weighs as its best-weighted member, split evenly among its distinct conclusions (compared as judged
    text, word by word), and each conclusion's part evenly among the reports that state it. So three planted copies
    of "Miliary tuberculosis." beside the genuine report they copy weigh as much as it does, not three times."""
    best: dict[int, float] = {}
    for weight, (group, _) in zip(weights, members, strict=True):
        best[group] = max(best.get(group, 0.0), weight)
    said = [(group, " ".join(_WORD.findall(plain(conclusion).casefold()))) for group, conclusion in members]
    stating = Counter(said)
    conclusions = Counter(group for group, _ in stating)
    return [best[group] / conclusions[group] / stating[(group, text)] for group, text in said]
