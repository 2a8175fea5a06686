"""What a resident reads instead of codes and raw scores: modality words and one relevance scale.

Why: four search methods give scores on four scales (cosine, BM25, rank fusion, min-max mix), so a raw number means
nothing across methods or to a resident, and index codes such as "OT" mean nothing either. `ask`, `search` and the
chat show the same words; the raw score stays available beside them (a table column, a card's details).
"""

from __future__ import annotations

from collections.abc import Sequence

#: The index's modality codes (retriever.reports.sources.base.normalize_modality) as words.
MODALITY_WORDS = {
    "XR": "X-ray",
    "CT": "CT",
    "MR": "MRI",
    "US": "ultrasound",
    "NM": "nuclear medicine",
    "MG": "mammography",
    "FL": "fluoroscopy",
    "OT": "other",
}
#: A hit's strength, by where its score lies between the weakest and the best hit of the same list.
STRONG, FAIR, WEAK = "strong match", "fair match", "weak match"


def modality_word(code: str) -> str:
    """The modality as a word ("MR" -> "MRI"); an unknown code as it is, a missing one as ""."""
    return MODALITY_WORDS.get(code.strip().upper(), code.strip())


def strengths(scores: Sequence[float]) -> list[str]:
    """One strength word per hit of a ranked list: its score's place between the list's weakest and best hit, in
    thirds. Relative to the list because no threshold means the same on every method's scale; a list whose scores
    are all equal (or of one hit) is all strong."""
    if not scores:
        return []
    best, worst = max(scores), min(scores)
    spread = best - worst
    words = []
    for score in scores:
        share = 1.0 if spread <= 0 else (score - worst) / spread
        words.append(STRONG if share >= 2 / 3 else FAIR if share >= 1 / 3 else WEAK)
    return words
