"""The evidence differential: which diagnoses the reports most similar to a finding affirm, ranked by how many
(and how similar) of them affirm each.

Why: one retrieved report is too little evidence and a 1.5B model cannot be trusted to read negations in free text.
On the 306 held-out cases the model given the top report was right 37% of the time, the model alone 32%, and a
perfect choice between the two would have reached 48% (eval/results/diagnosis_native.md): the right report is often
among the first few, not first. So every answer reads the conclusions of the top N reports and counts what they
*affirm*: a diagnosis an impression negates, calls resolved, or only asks to rule out is no evidence for it
(retriever.negation.rules), and a normal study's impression names nothing.

How a conclusion becomes candidates: its abnormal items (retriever.reports.impression.positive_items) are cut at
list and linking words ("with", "and", "consistent with"), and each part is stripped of hedges, severity, laterality
and measurements ("Small left pleural effusion" -> "pleural effusion"). Parts are compared by their content words
(shorthand expanded, plurals folded), so "pleural effusions" and "effusion, pleural" meet; a part whose words are all
found in a longer one ("pneumonia" in "right lower lobe pneumonia") also counts the longer one's reports. Each report
counts once per candidate, weighed by its rank or its similarity (assistant/rag/weighting.py), and candidates are
ranked by the summed weight. A candidate the question itself rules out ("No pleural effusion") is left out
(`rules_out`, from assistant/rag/question.py), and named in `ruled_out`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from assistant.rag.injection import addresses_a_model, reads_as_instruction
from assistant.rag.weighting import WEIGHTING, Weighting, report_weights
from retriever.negation.rules import is_negated
from retriever.reports.impression import positive_items
from retriever.search.shorthand import RADIOLOGY

#: Most candidates an answer lists.
MAX_CANDIDATES = 8

#: Where an impression item is cut into parts that may each name a diagnosis.
_SPLIT = re.compile(
    r"\s*(?:[;,:]|\s-\s|\b(?:and|with|without|along with|as well as|consistent with|compatible with|suggestive of"
    r"|suggesting|representing|likely representing|concerning for|suspicious for|due to|secondary to|related to"
    r"|in keeping with|most likely|likely|probably|versus|vs\.?|or|however|which|who|that|but|although|whereas"
    r"|while)\b)\s*",
    re.IGNORECASE,
)
#: Words that say how sure, how big, which side or when, not what: dropped from a part's ends.
_QUALIFIER_WORDS = """a an the this these there is are was were be been of in on at to for by from as again also
    findings finding impression evidence appearance appearances features picture
    consistent compatible suggestive likely probable probably possible possibly suspected suspicious concerning
    adjacent associated most mild mildly moderate moderately severe small large minimal minor slight slightly
    tiny marked markedly
    significant extensive diffuse focal patchy subtle trace few multiple several numerous scattered
    left right bilateral bilaterally unilateral both side sided new newly known redemonstrated persistent
    continued unchanged stable improved improving worsening worsened increased increasing decreased decreasing
    interval early late acute subacute chronic old residual underlying presumed probable noted seen present
    identified demonstrated visualized shown"""
_QUALIFIERS = frozenset(_QUALIFIER_WORDS.split())
#: Words that never make a candidate on their own.
_GENERIC_WORDS = """lung lungs heart chest abdomen pelvis lobe upper lower middle base bases basilar apex apical
    bibasilar zone region
    area disease process abnormality abnormalities change changes lesion lesions mass opacity opacities density
    densities tissue soft fluid structure study exam examination image images status post"""
_GENERIC = frozenset(_GENERIC_WORDS.split())
#: An item that only asks for a diagnosis ("rule out pneumonia", "? fracture"): no evidence for what it names.
_QUESTION = re.compile(r"\b(?:rule out|r/o|to exclude|evaluate for|assess for|question of)\b|\?", re.IGNORECASE)
#: An item that offers a diagnosis as a possibility: half the evidence of one that states it (`HEDGED`).
_HEDGE = re.compile(
    r"\b(?:possible|possibly|may|might|could|cannot be (?:excluded|ruled out)|not excluded|questionable|versus|vs"
    r"|differential|suspicious|concerning|equivocal|indeterminate)\b",
    re.IGNORECASE,
)
HEDGED = 0.5
#: Where a part's naming ends and what is said of it begins ("Pneumothorax | has resolved"): the verb.
_PREDICATE = re.compile(
    r"\s+\b(?:is|are|was|were|has|have|had|appears?|seems?|remains?|measures?|extends?)\b.*$", re.IGNORECASE
)
#: Parts that are about the report, the study or the patient, not a diagnosis ("clinical correlation", "otherwise
#: clear", "patient underwent surgery", "unremarkable MRI").
_NOT_DIAGNOSIS = re.compile(
    r"\b(?:report|patient|correlat\w*|clinical(?:ly)?|recommend\w*|comparison|compared|unremarkable|normal|otherwise"
    r"|clear|worse|better|than|underwent|follow[- ]?up|dictated|technique|contrast|study|exam|examination"
    r"|limited|please|refer|following|further|results?|symptoms?|nature|time|course|reveal\w*|show\w*|daughter|son"
    r"|wife|husband|family|he|she|her|his|him|it|its|they|their|we|you|who|which|however|may|might|could|would"
    r"|should|cannot|can)\b",
    re.IGNORECASE,
)
#: A part that opens with its own negation ("no osteochondral defect" after a split at "and").
_NEGATED_PART = re.compile(r"(?:no|not|without|negative|none|absent|free of)\b", re.IGNORECASE)
_EXISTENTIAL = re.compile(r"^\s*there\s+(?:is|are|was|were|has been|have been)\s+", re.IGNORECASE)
_MEASURE = re.compile(
    r"\b\d+(?:[.,]\d+)?\s*(?:x\s*\d+(?:[.,]\d+)?\s*)*(?:mm|cm|m|ml|cc|hu|%)(?:\W|$)"
    r"|\b\d+\s*%?\s*to\s*\d+\s*%|\bmeasuring\b.*$",
    re.IGNORECASE,
)
_PAREN = re.compile(r"\([^()]*\)")
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True)
class Candidate:
    """One diagnosis of the differential with the reports that affirm it."""

    diagnosis: str
    #: Share of the read reports' weight that affirms it (0-1).
    score: float
    report_ids: tuple[str, ...]

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

    def support(self, candidate: Candidate) -> str:
        """ "6 of 15 similar reports"."""
        return f"{candidate.count} of {self.read} similar report{'s' if self.read != 1 else ''}"

    def to_dict(self) -> dict:
        return {
            "read": self.read,
            "weighting": self.weighting,
            "set_aside": list(self.set_aside),
            "excluded": self.excluded,
            "ruled_out": list(self.ruled_out),
            "candidates": [
                {
                    "diagnosis": c.diagnosis,
                    "score": round(c.score, 4),
                    "count": c.count,
                    "report_ids": list(c.report_ids),
                }
                for c in self.candidates
            ],
        }


def _stem(word: str) -> str:
    """Plural folded: effusions -> effusion, opacities -> opacity (not "abscess", "metastasis")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "is", "us")):
        return word[:-1]
    return word


def content_key(text: str) -> frozenset[str]:
    """A part's content words: shorthand expanded, qualifiers dropped, plurals folded."""
    words: list[str] = []
    for word in _WORD.findall(text.lower()):
        words += _WORD.findall(RADIOLOGY.get(word, word))
    return frozenset(_stem(w) for w in words if w not in _QUALIFIERS)


def _trim(part: str) -> str:
    """A part without parentheses, measurements and qualifier words at its ends."""
    words = _MEASURE.sub(" ", _PAREN.sub(" ", _PREDICATE.sub("", _EXISTENTIAL.sub("", part)))).split()
    while words and words[0].lower().strip(".,") in _QUALIFIERS:
        words.pop(0)
    while words and words[-1].lower().strip(".,") in _QUALIFIERS:
        words.pop()
    return " ".join(words).strip(" .,;:-")


def affirmed_diagnoses(impression: str) -> list[tuple[str, float]]:
    """The diagnoses an impression affirms, in its order, each with its certainty (1, or HEDGED when offered as a
    possibility): parts of its abnormal items that are not negated, resolved or only asked about, and say more than
    generic words."""
    return list(_affirmed(impression))


@functools.lru_cache(maxsize=16384)
def _affirmed(impression: str) -> tuple[tuple[str, float], ...]:
    """affirmed_diagnoses, read once per impression text (an archive repeats its conclusions, and an answer reads
    each retrieved report's twice: for the counts and for `affirmed`)."""
    found: list[tuple[str, float]] = []
    for item in positive_items(impression):
        if _QUESTION.search(item):
            continue
        certainty = HEDGED if _HEDGE.search(item) else 1.0
        for part in _SPLIT.split(item):
            phrase = _trim(part or "")
            key = content_key(phrase)
            if not key or key <= _GENERIC or not re.search(r"[a-z]{3}", phrase.lower()):
                continue
            if _NOT_DIAGNOSIS.search(phrase) or _NEGATED_PART.match(phrase) or reads_as_instruction(part or ""):
                continue
            try:
                if is_negated(item, phrase):
                    continue
            except ValueError:  # the trimmed phrase is not found as whole words (hyphen or punctuation inside)
                pass
            if phrase.lower() not in (f.lower() for f, _ in found):
                found.append((phrase, certainty))
    return tuple(found)


@dataclass
class _Group:
    key: frozenset[str]
    forms: dict[str, int] = field(default_factory=dict)
    reports: dict[str, float] = field(default_factory=dict)  # report id -> weight, in rank order


def evidence_differential(
    reports: Sequence[tuple[str, str]],
    *,
    weighting: Weighting = WEIGHTING,
    limit: int = MAX_CANDIDATES,
    set_aside: Collection[str] = (),
    scores: Sequence[float] | None = None,
    rules_out: Callable[[str], bool] | None = None,
    excluded: int = 0,
) -> EvidenceDifferential:
    """The differential of `reports`, (report id, impression) pairs best-ranked first, with their search `scores`
    (needed by a similarity weighting; without them every report scores alike). `rules_out(diagnosis)`: the
    question's own findings rule it out, so it is no candidate. `excluded`: retrieved reports that did not vote. A
    report in `set_aside` (judged on all its fields by the caller: assistant.rag.injection.set_aside), or whose
    impression addresses a model, is no evidence: it is left out and named in the differential's `set_aside`."""
    scores = list(scores) if scores is not None else [1.0] * len(reports)
    aside = tuple(i for i, impression in reports if i in set_aside or addresses_a_model(impression))
    voting = [(pair, score) for pair, score in zip(reports, scores, strict=True) if pair[0] not in aside]
    reports = [pair for pair, _ in voting]
    weights = report_weights([score for _, score in voting], weighting)
    groups = _groups(reports, weights)
    total = sum(weights) or 1.0
    order = {report_id: n for n, (report_id, _) in enumerate(reports)}
    candidates = [
        Candidate(
            diagnosis=min(g.forms, key=lambda form: (-g.forms[form], len(form))),
            score=sum(g.reports.values()) / total,
            report_ids=tuple(sorted(g.reports, key=order.__getitem__)),
        )
        for g in groups.values()
    ]
    candidates.sort(key=lambda c: (-c.score, -c.count, len(c.diagnosis)))
    ruled = [c.diagnosis for c in candidates if rules_out is not None and rules_out(c.diagnosis)]
    kept = tuple(c for c in candidates if c.diagnosis not in ruled)[:limit]
    affirmed = {report_id: tuple(phrase for phrase, _ in affirmed_diagnoses(text)) for report_id, text in reports}
    return EvidenceDifferential(
        kept, len(reports), weighting, affirmed, set_aside=aside, excluded=excluded, ruled_out=tuple(ruled)
    )


def _groups(reports: Sequence[tuple[str, str]], weights: Sequence[float]) -> dict[frozenset[str], _Group]:
    """The reports' affirmed phrases grouped by content words, each group with the weight of every report that
    affirms it; a group also counts the reports of the longer groups containing its words."""
    groups: dict[frozenset[str], _Group] = {}
    for (report_id, impression), weight in zip(reports, weights, strict=True):
        for phrase, certainty in affirmed_diagnoses(impression):
            key = content_key(phrase)
            group = groups.get(key) or groups.setdefault(key, _Group(key))
            group.forms[phrase.lower()] = group.forms.get(phrase.lower(), 0) + 1
            group.reports[report_id] = max(group.reports.get(report_id, 0.0), weight * certainty)
    for group in groups.values():  # "pneumonia" also counts the reports of "right lower lobe pneumonia"
        for other in groups.values():
            if other is not group and group.key < other.key and not group.key <= _GENERIC:
                for report_id, weight in other.reports.items():
                    group.reports[report_id] = max(group.reports.get(report_id, 0.0), weight)
    return groups
