"""The diagnoses a report's conclusion affirms, each with its certainty: what the evidence differential counts
(assistant/rag/evidence.py) and what an index stores for every report when it is built or updated
(retriever/index/concept_rows.py), so an answer only adds them up.

Why one function for both: stored concepts must be exactly those an answer would link from the same text (an index
linked by other rules is detected by `concept_rules` in its manifest, retriever/concepts/fingerprint.py, and its
answers link as they read). An item that only asks for a diagnosis ("? fracture", "question of pneumonia") affirms
nothing; one that reads as an order or markup (retriever/reports/judged_text.py) neither; one that offers a
diagnosis as a possibility counts HEDGED.
"""

from __future__ import annotations

import functools
import re

from retriever.concepts.affirmed import affirmed_in
from retriever.concepts.concept import Concept
from retriever.concepts.vocabulary import default_vocabulary
from retriever.reports.impression import conclusion_items
from retriever.reports.judged_text import plain, reads_as_instruction

#: An item that only asks for a diagnosis ("? fracture", "question of pneumonia"): no evidence for what it names.
_QUESTION = re.compile(r"\b(?:rule out|r/o|to exclude|evaluate for|assess for|question of)\b|\?", re.IGNORECASE)
#: An item that offers a diagnosis as a possibility: half the evidence of one that states it (`HEDGED`).
_HEDGE = re.compile(
    r"\b(?:possible|possibly|may|might|could|cannot be (?:excluded|ruled out)|not excluded|questionable|versus|vs"
    r"|differential|suspicious|concerning|equivocal|indeterminate)\b",
    re.IGNORECASE,
)
HEDGED = 0.5
#: (concept id, certainty) pairs: how an index stores what a conclusion affirms.
Stored = tuple[tuple[str, float], ...]


def affirmed_diagnoses(conclusion: str) -> list[tuple[Concept, float]]:
    """The concepts a conclusion affirms, in its order, each once with its certainty (1, or HEDGED when every item
    naming it offers it as a possibility). Read as judged text (retriever.reports.judged_text.plain): full-width
    and look-alike letters and invisible characters cannot split one diagnosis into two."""
    return list(_affirmed(plain(conclusion)))


@functools.lru_cache(maxsize=16384)
def _affirmed(conclusion: str) -> tuple[tuple[Concept, float], ...]:
    """affirmed_diagnoses, read once per conclusion text (an archive repeats its conclusions)."""
    found: dict[Concept, float] = {}
    for item in conclusion_items(conclusion):
        if _QUESTION.search(item) or reads_as_instruction(item):
            continue
        certainty = HEDGED if _HEDGE.search(item) else 1.0
        for concept in affirmed_in(item):
            found[concept] = max(found.get(concept, 0.0), certainty)
    return tuple(found.items())


def stored_form(conclusion: str) -> Stored:
    """What an index stores of a conclusion: `affirmed_diagnoses` as (concept id, certainty) pairs, in order."""
    return tuple((concept.id, certainty) for concept, certainty in affirmed_diagnoses(conclusion))


def from_stored(pairs: Stored) -> list[tuple[Concept, float]] | None:
    """`affirmed_diagnoses` again from what an index stored, or None when an id is not in the vocabulary (then the
    caller links the text itself: stored concepts are never guessed at)."""
    concepts = default_vocabulary().concepts
    if any(concept_id not in concepts for concept_id, _ in pairs):
        return None
    return [(concepts[concept_id], certainty) for concept_id, certainty in pairs]
