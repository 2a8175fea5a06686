"""How much each retrieved report counts in the evidence differential: by its rank, or by how similar it is.

Why by similarity (issue 48): weighed only by rank, forty weakly similar reports outvote the one that matches: on
teaching cases whose diagnosis the archive holds once or twice, the vote was right in 33% and the first report alone
in 49%. `similarity:T` weighs report i by exp(-(s_1 - s_i) / (T * (s_1 - s_n))), its score's distance below the best
one in units of the spread of the n scores read: the best report counts 1, the weakest exp(-1/T), and a report that
matches far better than the rest outweighs them. Measured against the spread rather than on the score's own scale,
because the scale depends on the search method (cosine, BM25, a fused score: retriever.search.hit.Hit.score).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from models.preset import PRESET

#: A weighting's name: "rank" (1/rank), "sqrt" (1/sqrt(rank)), "uniform", or "similarity:T" (T > 0, module doc).
Weighting = str
RANK_WEIGHTINGS: tuple[Weighting, ...] = ("uniform", "rank", "sqrt")
SIMILARITY = "similarity"
#: The weightings as a usage message lists them.
WEIGHTINGS: tuple[Weighting, ...] = (*RANK_WEIGHTINGS, f"{SIMILARITY}:T")


def weighting_named(name: str) -> Weighting:
    """`name` as a Weighting (ValueError listing the known ones)."""
    if name in RANK_WEIGHTINGS:
        return name
    kind, _, value = name.partition(":")
    try:
        if kind == SIMILARITY and float(value) > 0:
            return name
    except ValueError:
        pass
    raise ValueError(f"unknown evidence weighting {name!r}: use one of {', '.join(WEIGHTINGS)} (T > 0)")


#: The product's weighting (models/preset.json).
WEIGHTING: Weighting = weighting_named(PRESET.answer.evidence_weighting)


def rank_weights(n: int, weighting: Weighting) -> list[float]:
    """How much each of `n` reports, best-ranked first, counts under a rank weighting."""
    exponent = {"uniform": 0.0, "sqrt": 0.5, "rank": 1.0}[weighting]
    return [1.0 / rank**exponent for rank in range(1, n + 1)]


def report_weights(scores: Sequence[float], weighting: Weighting) -> list[float]:
    """How much each report counts, given the scores of the reports read, best-ranked first."""
    if weighting in RANK_WEIGHTINGS:
        return rank_weights(len(scores), weighting)
    temperature = float(weighting.partition(":")[2])
    if not scores:
        return []
    best, spread = scores[0], scores[0] - min(scores)
    if spread <= 0:
        return [1.0] * len(scores)
    return [math.exp(-max(0.0, best - score) / (temperature * spread)) for score in scores]
