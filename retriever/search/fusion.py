"""Combine rankings from several retrievers (BM25 + dense): reciprocal rank fusion and weighted scores.

RRF (Cormack et al., 2009) needs no score calibration: score(d) = sum over rankings of 1 / (k + rank(d)), ranks
1-based, k = 60 by convention. The weighted variant min-max normalizes each ranking's scores to [0, 1] and mixes them
(a document missing from a ranking contributes 0 there), for when one retriever deserves more trust.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

from models.preset import PRESET
from retriever.search.methods import Method

Key = TypeVar("Key", bound=Hashable)
RRF_K = 60
#: Candidates each retriever contributes to a BM25 + dense fusion.
FUSION_DEPTH = 100
#: The dense share of the weighted mix: the weight `python -m eval.retrieval.fusion_sweep` picks on the dev split for
#: the default model with the default second stage (eval/results/fusion_sweep.md: the best mean of per-source findings
#: -> impression match@5 and label P@10), as the preset records it (models/preset.json), kept equal to it by
#: tests/retriever/test_fusion.py.
DENSE_WEIGHT = PRESET.default_search.dense_weight


def reciprocal_rank_fusion(rankings: Sequence[Sequence[tuple[Key, float]]], k: int = RRF_K) -> list[tuple[Key, float]]:
    """Fused (key, RRF score) best first; ties keep the order of first appearance."""
    fused: dict[Key, float] = {}
    for ranking in rankings:
        for rank, (key, _) in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(fused.items(), key=lambda item: -item[1])


def weighted_fusion(
    rankings: Sequence[Sequence[tuple[Key, float]]], weights: Sequence[float]
) -> list[tuple[Key, float]]:
    """Fused (key, sum of weight x min-max normalized score) best first."""
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    fused: dict[Key, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        if not ranking:
            continue
        scores = [score for _, score in ranking]
        low, span = min(scores), max(scores) - min(scores)
        for key, score in ranking:
            normalized = (score - low) / span if span > 0 else 1.0
            fused[key] = fused.get(key, 0.0) + weight * normalized
    return sorted(fused.items(), key=lambda item: -item[1])


def fuse_dense_and_bm25(
    method: Method,
    dense: Sequence[tuple[Key, float]],
    lexical: Sequence[tuple[Key, float]],
    dense_weight: float = DENSE_WEIGHT,
) -> list[tuple[Key, float]]:
    """The product's fused search methods: `hybrid` = RRF, `hybrid-weighted` = the dense_weight score mix. The
    index and the retrieval benchmark both fuse here, so the benchmark measures what users get; the weight is a
    parameter only so that the dev-split sweep can try others."""
    rankings = (dense, lexical)
    if method == "hybrid":
        return reciprocal_rank_fusion(rankings)
    if method == "hybrid-weighted":
        return weighted_fusion(rankings, (dense_weight, 1 - dense_weight))
    raise ValueError(f"{method!r} is not a fused search method")
