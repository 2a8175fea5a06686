"""The concepts an impression affirms: linked, minus what it negates, calls resolved or only asks to rule out.

Why position-based: an impression often names a concept twice ("Left effusion. No right effusion."), so each
mention is judged where it stands, by the negation scopes of retriever.negation (rules.negated_ranges, the rule
behind rules.is_negated). "Rule out X" is a hedge to the negation rules (X stays possible), but as evidence it is a
request to look for X, not a finding of X, so a mention it reaches is left out here; "cannot rule out X" and
"X cannot be excluded" keep X (possible, and the evidence may weigh it less).
"""

from __future__ import annotations

import re
from functools import lru_cache

from retriever.concepts.concept import Concept
from retriever.concepts.matcher import Mention, mentions, unique
from retriever.negation.rules import negated_ranges
from retriever.reports.impression import conclusion_items

#: What keeps the words after it, within the clause and REQUEST_WORDS words, from being a finding of this study: a
#: request to look for something ("rule out", "to determine if", CT-RATE's "recommended ... in terms of"), a condition
#: ("if there is"), the patient's history ("history of", "in a patient with", "operated HCC", "sequelae of prior
#: infection": the sequela is the finding), a diagnosis named as what the findings are not typical of ("atypical in
#: terms of Covid-19 pneumonia", "features reported in ..."), a suggestion ("consider") or look-alikes ("other
#: diseases such as").
_REQUEST = re.compile(
    r"(?<!not )(?<!cannot )\b(?:rule out|r/o|to exclude|exclude|evaluate for|evaluated for|assess for|evaluation for"
    r"|question of|query|screening for|to look for|to determine if|to determine whether|determine if|correlate for"
    r"|(?:recommend\w*|evaluat\w*|correlation|follow-up|followed)\b[^.;:]{0,60}\bin terms of"
    r"|if there is|if there are|history of|hx of|h/o|in a patient with|patient with a history|operated|resected"
    r"|sequelae? of|correlation for|consider|other \w+(?: \w+)? such as"
    r"|atypical (?:in terms of|for)|(?:features|findings) (?:reported|described) (?:in|for))\b",
    re.IGNORECASE,
)
#: A request that follows what it asks about: "organizing pneumonia should be considered in the differential" (a
#: modal "be considered"; a stated "are considered in the etiology" is not one), or a look-alike ("... can cause a
#: similar appearance"). docs/decisions/2026-11-29-linker-requests-and-longer-names.md
_REQUEST_AFTER = re.compile(
    r"\b(?:(?:should|must|can|could|may|might)\s+(?:also\s+|further\s+)?be\s+considered"
    r"|(?:can|could|may|might)\s+(?:also\s+)?cause\s+(?:a\s+)?similar\s+(?:appearance|finding|image)s?)\b",
    re.IGNORECASE,
)
REQUEST_WORDS = 8
_CLAUSE_END = re.compile(r"[.;:!?\n]")


def _requested(item: str, start: int, end: int) -> bool:
    """Whether a request reaches the mention at [start, end): one before it ("rule out", "consider") or a modal "be
    considered" after it, in its clause and within REQUEST_WORDS words."""
    for request in _REQUEST.finditer(item, 0, start):
        if _reaches(item[request.end() : start]):
            return True
    return any(_reaches(item[end : request.start()]) for request in _REQUEST_AFTER.finditer(item, end))


def _reaches(between: str) -> bool:
    return not _CLAUSE_END.search(between) and len(between.split()) <= REQUEST_WORDS


@lru_cache(maxsize=65536)
def affirmed_in(item: str) -> tuple[Concept, ...]:
    """The concepts one impression item affirms, in order (a concept may recur). Cached: conclusions repeat their
    items ("No pneumothorax.", "Mild cardiomegaly.") across thousands of reports."""
    return tuple(m.concept for m, neg in _judged(item) if not neg and not _requested(item, m.start, m.end))


def _judged(item: str) -> list[tuple[Mention, bool]]:
    """Each concept mention of one item, with whether the negation scopes reach it."""
    found = mentions(item)
    negated = negated_ranges(item, [(m.start, m.end) for m in found]) if found else []
    return list(zip(found, negated, strict=True))


def affirmed_concepts(impression: str) -> list[Concept]:
    """The concepts the impression affirms, in order, each once (negated, resolved and rule-out mentions left out)."""
    return list(_affirmed(impression))


@lru_cache(maxsize=16384)
def _affirmed(impression: str) -> tuple[Concept, ...]:
    return tuple(unique([concept for item in conclusion_items(impression) for concept in affirmed_in(item)]))


def ruled_out_concepts(text: str) -> frozenset[str]:
    """The ids of the concepts `text` names only as negated or resolved ("No pleural effusion or pneumothorax."):
    what a question's own findings rule out. A concept it also affirms elsewhere ("Left effusion. No right
    effusion.") is not ruled out."""
    negated, affirmed = set(), set()
    for item in conclusion_items(text):
        for mention, is_negated in _judged(item):
            (negated if is_negated else affirmed).add(mention.concept.id)
    return frozenset(negated - affirmed)
