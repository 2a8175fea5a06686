"""Rank fusion against hand-computed values."""

from __future__ import annotations

import pytest

from retriever.search.fusion import fuse_dense_and_bm25, reciprocal_rank_fusion, weighted_fusion


def test_rrf_hand_computed() -> None:
    dense = [("a", 0.9), ("b", 0.8), ("c", 0.1)]
    bm25 = [("c", 12.0), ("a", 3.0)]
    fused = dict(reciprocal_rank_fusion([dense, bm25], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert [key for key, _ in reciprocal_rank_fusion([dense, bm25], k=60)] == ["a", "c", "b"]


def test_rrf_small_k_and_empty_rankings() -> None:
    assert reciprocal_rank_fusion([[("x", 1.0)], []], k=1) == [("x", 0.5)]
    assert reciprocal_rank_fusion([]) == []


def test_weighted_fusion_normalizes_each_ranking() -> None:
    dense = [("a", 0.9), ("b", 0.7), ("c", 0.5)]  # normalized 1, 0.5, 0
    bm25 = [("c", 10.0), ("b", 5.0)]  # normalized 1, 0
    fused = dict(weighted_fusion([dense, bm25], [0.25, 0.75]))
    assert fused == pytest.approx({"a": 0.25, "b": 0.125, "c": 0.75})
    assert weighted_fusion([[("only", 3.0)]], [1.0]) == [("only", 1.0)]
    with pytest.raises(ValueError):
        weighted_fusion([dense], [0.5, 0.5])


def test_product_fusion_uses_the_dense_weight() -> None:
    dense = [("a", 0.9), ("b", 0.7), ("c", 0.5)]  # normalized 1, 0.5, 0
    bm25 = [("c", 10.0), ("b", 5.0)]  # normalized 1, 0
    # dense weight 0.5: a 0.5, b 0.25, c 0.5 -> a and c tie, first appearance (a) first
    assert [k for k, _ in fuse_dense_and_bm25("hybrid-weighted", dense, bm25, 0.5)] == ["a", "c", "b"]
    # dense weight 0.8: a 0.8, b 0.4, c 0.2
    fused = dict(fuse_dense_and_bm25("hybrid-weighted", dense, bm25, dense_weight=0.8))
    assert fused == pytest.approx({"a": 0.8, "b": 0.4, "c": 0.2})
    assert fuse_dense_and_bm25("hybrid", dense, bm25) == reciprocal_rank_fusion([dense, bm25])
    with pytest.raises(ValueError):
        fuse_dense_and_bm25("dense", dense, bm25)


def test_the_products_dense_weight_is_the_one_the_committed_dev_sweep_picked() -> None:
    """DENSE_WEIGHT is a measured choice (eval/results/fusion_sweep.md), made with the product's default encoder and
    second stage on the dev split: a change to any of them, or to the weight, must come with a new sweep."""
    from eval.common.shared_data import RESULTS
    from eval.retrieval.benchmark import DEFAULT_MODEL
    from eval.retrieval.fusion_sweep import FusionSweep
    from retriever.search.fusion import DENSE_WEIGHT
    from retriever.search.methods import DEFAULT_SECOND_STAGE

    committed = FusionSweep.read(RESULTS / "fusion_sweep.json")
    assert committed.best_dense_weight == DENSE_WEIGHT
    assert (committed.split, committed.encoder) == ("dev", DEFAULT_MODEL)
    assert committed.reranker == (DEFAULT_SECOND_STAGE or "off")
