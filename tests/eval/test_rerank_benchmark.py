"""The re-ranker benchmark's rule and report (eval/robustness/rerank_benchmark.py) on hand-made results."""

from __future__ import annotations

import argparse
from dataclasses import replace

import pytest

from eval.common.shared_data import RESULTS
from eval.retrieval.results import MatchQueries, MatchScores
from eval.robustness.corrupt import ERROR_TYPES
from eval.robustness.rerank_benchmark import decide, render, side_label, sides, weight_list
from eval.robustness.results import (
    CodeScores,
    ErrorScores,
    IcdScores,
    QueryScores,
    RerankResults,
    RerankSide,
    Share,
    VariantScores,
)
from eval.robustness.variants import VARIANTS
from retriever.search.rerank import RERANK_WEIGHT, split_weight


def side(errors: float, match5: float, exact: float, drop: float, ranks: list[int | None]) -> RerankSide:
    share = Share(errors, 10, [0.0, 1.0])
    metrics = {"n": len(ranks), "match@5": match5}
    per_query = MatchQueries([str(n) for n in range(len(ranks))], ranks, [True] * len(ranks))
    match = MatchScores("D", 4, metrics, metrics, metrics)
    variant = VariantScores(4, match5, match5, match5, match5, changed=1, drop_at_5=0.0, p_vs_clean_at_5=None)
    variants = {v: variant for v in VARIANTS} | {"abbreviated": replace(variant, drop_at_5=drop)}
    code = CodeScores(Share(exact, 10, [0.0, 1.0]), Share(exact, 10, [0.0, 1.0]), 0.1)
    return RerankSide(
        retrieval={"openi": match, "pooled": replace(match, per_query=per_query)},
        errors=ErrorScores("D", share, {t: share for t in ERROR_TYPES}),
        icd=IcdScores(code.exact_at_1, code.category_at_1, code.cer, ranker="D", queries=10, rules_only=code),
        queries=QueryScores("D", 4, variants),
    )


def results(*with_: RerankSide, weights: tuple[float, ...] = (1.0,)) -> RerankResults:
    card = {
        "base_model": {"ref": "enc"},
        "loss": "bce",
        "data": {"pairs": {"train": 5}, "examples": {"train": {}}},
        "train_seconds_per_epoch": [1.0],
        "dev_pairwise_accuracy": {"before": {}, "after": {}},
    }
    refs = {"without": "D+expand"} | {side_label(w): f"D+expand+rerank=rr@{w:g}" for w in weights}
    sides = {"without": side(0.6, 0.5, 0.8, 0.01, [1, 6, None, 2])}
    sides |= {side_label(w): made for w, made in zip(weights, with_, strict=True)}
    return RerankResults("rerank_dev", "now", "cmd", "dev", "rr", card, refs, 4, 10, "1 1 1", sides=sides)


def test_the_reranker_is_adopted_only_when_every_check_holds() -> None:
    assert decide(results(side(0.9, 0.5, 0.8, 0.01, [1, 2, None, 2]))).adopt is True
    lower_match = decide(results(side(0.9, 0.45, 0.8, 0.01, [1, 6, None, 9])))
    assert lower_match.adopt is False and lower_match.checks["weight 1"]["pooled match@5 not lower"] is False
    rises = decide(results(side(0.6, 0.5, 0.8, 0.01, [1, 6, None, 2]))).checks["weight 1"]
    assert rises["error discrimination rises"] is False
    assert decide(results(side(0.9, 0.5, 0.7, 0.01, [1, 6, None, 2]))).adopt is False
    assert decide(results(side(0.9, 0.5, 0.8, 0.03, [1, 6, None, 2]))).adopt is False


def test_of_the_weights_that_pass_the_one_with_the_best_error_discrimination_is_chosen() -> None:
    made = results(
        side(0.95, 0.3, 0.5, 0.01, [1, 9, None, 9]),
        side(0.8, 0.5, 0.8, 0.01, [1, 2, None, 2]),
        side(0.7, 0.5, 0.8, 0.01, [1, 2, None, 2]),
        side(0.8, 0.5, 0.8, 0.0, [1, 2, None, 2]),
        weights=(1.0, 0.5, 0.3, 0.2),
    )
    decision = decide(made)
    assert decision.adopt is True and decision.chosen == "weight 0.2"
    assert not all(decision.checks["weight 1"].values())
    none = decide(
        results(
            side(0.5, 0.5, 0.8, 0.01, [1, 2, None, 2]), side(0.9, 0.4, 0.8, 0.01, [1, 9, None, 2]), weights=(1.0, 0.5)
        )
    )
    assert none.adopt is False and none.chosen is None


def test_the_report_puts_every_side_beside_each_other_with_the_decision() -> None:
    made = results(
        side(0.9, 0.75, 0.85, 0.01, [1, 2, None, 2]), side(0.7, 0.5, 0.8, 0.01, [1, 6, None, 2]), weights=(1.0, 0.3)
    )
    made.decision = decide(made)
    text = render(made)
    assert "| source | without | weight 1 | weight 0.3 |" in text
    assert "| openi | 0.500 | 0.750 | 0.500 |" in text
    assert "| error discrimination, all | 0.600 | 0.900 | 0.700 |" in text
    assert "| ICD-10-CM exact@1 | 0.800 | 0.850 | 0.800 |" in text
    assert "| pooled match@5 not lower | yes | yes |" in text
    assert "Decision: adopt at weight 1." in text and "McNemar p: weight 1" in text


def test_gated_sides_are_labelled_and_judged_at_their_weight() -> None:
    """A gated side (`--gates`) is one more side: its label says the gate, and ties go to the lower weight as for
    ungated ones (the weight read from a reference that ends with the gate)."""
    from eval.robustness.rerank_benchmark import gate_list

    assert side_label(0.2, 15) == "weight 0.2, 15+ words" and side_label(0.2) == side_label(0.2, 0) == "weight 0.2"
    made = results(
        side(0.8, 0.5, 0.8, 0.01, [1, 2, None, 2]), side(0.8, 0.5, 0.8, 0.01, [1, 2, None, 2]), weights=(0.3, 0.2)
    )
    made.refs = {
        "without": "hybrid-weighted:enc+expand",
        "weight 0.3": "hybrid-weighted:enc+expand+rerank=rr@0.3:15",
        "weight 0.2": "hybrid-weighted:enc+expand+rerank=rr@0.2:15",
    }
    assert decide(made).chosen == "weight 0.2"
    assert gate_list("0,15") == [0, 15]
    for bad in ("", "15,15", "-1", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            gate_list(bad)


def test_weights_are_distinct_shares() -> None:
    assert weight_list("1, 0.3,0.1") == [1.0, 0.3, 0.1]
    for bad in ("0", "1.5", "0.3,0.3", "heavy", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            weight_list(bad)


def test_the_products_weight_is_the_committed_dev_runs_best_error_discrimination() -> None:
    committed = RerankResults.read(RESULTS / "rerank_dev.json")
    best = max(sides(committed), key=lambda n: committed.sides[n].errors.all.value)
    assert split_weight(committed.refs[best])[1] == RERANK_WEIGHT
