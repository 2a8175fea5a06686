"""The re-ranker benchmark's rule and report (eval/rerank_benchmark.py) on hand-made results."""

from __future__ import annotations

from typing import Any

from eval.rerank_benchmark import decide, render
from eval.robustness.corrupt import ERROR_TYPES
from eval.robustness.variants import VARIANTS


def side(errors: float, match5: float, exact: float, drop: float, ranks: list[int | None]) -> dict[str, Any]:
    share = {"value": errors, "n": 10, "ci95": [0.0, 1.0]}
    retrieval = {"all": {"match@5": match5}, "per_query": {"rank": ranks}}
    queries = {v: {"match@5": match5, "drop@5": 0.0} for v in VARIANTS}
    queries["abbreviated"]["drop@5"] = drop
    return {
        "retrieval": {"openi": {"all": {"match@5": match5}}, "pooled": retrieval},
        "errors": {"all": share} | {t: share for t in ERROR_TYPES},
        "icd": {"exact@1": {"value": exact}, "category@1": {"value": exact}},
        "queries": queries,
    }


def results(with_: dict[str, Any]) -> dict[str, Any]:
    card = {"base_model": {"ref": "enc"}, "loss": "bce", "data": {"pairs": {"train": 5}, "examples": {"train": {}}},
            "train_seconds_per_epoch": [1.0], "dev_pairwise_accuracy": {"before": {}, "after": {}}}
    return {"split": "dev", "created": "now", "command": "cmd", "load": "1 1 1", "reranker": "rr",
            "refs": {"without": "D+expand", "with": "D+expand+rerank=rr"}, "reports": 4, "card": card,
            "without": side(0.6, 0.5, 0.8, 0.01, [1, 6, None, 2]), "with": with_}


def test_the_reranker_is_adopted_only_when_every_check_holds() -> None:
    assert decide(results(side(0.9, 0.5, 0.8, 0.01, [1, 2, None, 2])))["adopt"] is True
    lower_match = decide(results(side(0.9, 0.45, 0.8, 0.01, [1, 6, None, 9])))
    assert lower_match["adopt"] is False and lower_match["checks"]["pooled match@5 not lower"] is False
    assert decide(results(side(0.6, 0.5, 0.8, 0.01, [1, 6, None, 2])))["checks"]["error discrimination rises"] is False
    assert decide(results(side(0.9, 0.5, 0.7, 0.01, [1, 6, None, 2])))["adopt"] is False
    assert decide(results(side(0.9, 0.5, 0.8, 0.03, [1, 6, None, 2])))["adopt"] is False


def test_the_report_puts_both_sides_beside_each_other_with_the_decision() -> None:
    made = results(side(0.9, 0.75, 0.85, 0.01, [1, 2, None, 2]))
    made["decision"] = decide(made)
    text = render(made)
    assert "| openi | 0.500 | 0.750 |" in text
    assert "| error discrimination, all | 0.600 | 0.900 |" in text
    assert "| ICD-10-CM exact@1 | 0.800 | 0.850 |" in text
    assert "Decision: adopt." in text and "McNemar p" in text
