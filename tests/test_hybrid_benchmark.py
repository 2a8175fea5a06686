"""The benchmark's hybrid rankers fuse exactly like the product, the abnormal subset, and the target check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.retrieval import BM25Ranker, DenseRanker, HybridRanker, findings_to_impression, is_abnormal
from eval.retrieval_benchmark import (
    DEFAULT_MODEL,
    RESULTS,
    check_targets,
    choose_default,
    default_candidates,
    product_default,
    reuse_previous,
)
from retriever.fusion import RRF_K
from retriever.report import Report

CORPUS = [
    "Right lower lobe pneumonia.",
    "Small left pleural effusion.",
    "No acute cardiopulmonary abnormality.",
    "Cardiomegaly with pulmonary edema.",
    "Left upper lobe nodule.",
]
QUERIES = ["airspace consolidation in the right lower lobe", "enlarged heart and interstitial edema"]


def test_hybrid_ranks_are_the_reciprocal_rank_fusion_of_both_rankers(minilm) -> None:
    dense = DenseRanker(name="minilm", encoder=minilm)
    hybrid = HybridRanker(name="hybrid:minilm", dense=dense)
    fused = hybrid.rank(QUERIES, CORPUS, 3)
    for query, got in zip(QUERIES, fused, strict=True):
        scores: dict[int, float] = {}
        for ranking in (dense.rank([query], CORPUS, 5)[0], BM25Ranker().rank([query], CORPUS, 5)[0]):
            for rank, position in enumerate(ranking, start=1):
                scores[position] = scores.get(position, 0.0) + 1 / (RRF_K + rank)
        expected = sorted(scores, key=lambda p: -scores[p])[:3]
        assert got == expected


def test_weighted_hybrid_puts_the_top_of_both_lists_first(minilm) -> None:
    dense = DenseRanker(name="minilm", encoder=minilm)
    ranked = HybridRanker(name="hybrid-weighted:minilm", dense=dense, method="hybrid-weighted").rank(
        QUERIES[:1], CORPUS, 5
    )[0]
    assert ranked[0] == 0 and sorted(ranked) == list(range(5))


@pytest.mark.parametrize(
    ("report", "abnormal"),
    [
        (Report("a", impression="No acute disease.", labels=("normal",)), False),
        (Report("b", impression="No acute disease.", labels=("Cardiomegaly",)), True),
        (Report("c", impression="Thorax CT examination within normal limits"), False),
        (Report("d", impression="Within normal limits except a 5 mm nodule"), True),
        (Report("e", impression="Unremarkable study."), False),
        (Report("f", impression="Acute appendicitis."), True),
    ],
)
def test_is_abnormal(report: Report, abnormal: bool) -> None:
    assert is_abnormal(report) is abnormal


def test_abnormal_subset_counts_only_abnormal_reports() -> None:
    reports = [
        Report("1", findings="right lower lobe consolidation", impression=CORPUS[0]),
        Report("2", findings="clear lungs, normal heart", impression=CORPUS[2]),
        Report("3", findings="left pleural fluid, small effusion", impression=CORPUS[1]),
    ]
    result = findings_to_impression(reports, BM25Ranker())
    assert result["all"]["n"] == 3 and result["abnormal"]["n"] == 2


def _ranker(match5: float, p10: float) -> dict:
    scores = {"all": {"match@5": match5, "n": 10}, "abnormal": {"match@5": match5, "n": 8}}
    label = {"finding_label": {"p@10": p10, "queries": 5}}
    return {"findings_to_impression": {"openi": scores}, "labels": {"openi": label, "ctrate": label}}


def test_targets_need_strict_wins_over_bm25_and_mpnet() -> None:
    rankers = {"bm25": _ranker(0.5, 0.3), "mpnet": _ranker(0.4, 0.2), "mine": _ranker(0.6, 0.3)}
    targets = check_targets(rankers, "mine")
    assert not targets["all_pass"]
    failed = [(r["metric"], r["set"], r["rival"]) for r in targets["rows"] if not r["pass"]]
    assert failed == [("label P@10", "openi", "bm25"), ("label P@10", "ctrate", "bm25")]
    rankers["mine"] = _ranker(0.6, 0.31)
    assert check_targets(rankers, "mine")["all_pass"]


def _with_queries(ranks: list[int | None], p10: list[float]) -> dict:
    """A ranker result with per-query data: 4 Open-i queries, the first two abnormal."""
    ids = ["q1", "q2", "q3", "q4"]
    hits = [r is not None and r <= 5 for r in ranks]
    scores = {
        "all": {"match@5": sum(hits) / 4, "n": 4, "mrr@10": 0.0},
        "abnormal": {"match@5": sum(hits[:2]) / 2, "n": 2},
        "per_query": {"id": ids, "rank": ranks, "abnormal": [True, True, False, False]},
    }
    label = {"finding_label": {"p@10": sum(p10) / 4, "queries": 4, "per_query": {"id": ids, "p@10": p10}}}
    return {"findings_to_impression": {"openi": scores}, "labels": {"openi": label}}


def test_target_rows_carry_paired_p_values() -> None:
    rankers = {
        "bm25": _with_queries([1, 7, None, 2], [0.1, 0.2, 0.3, 0.4]),
        "mine": _with_queries([1, 2, 3, 2], [0.2, 0.3, 0.4, 0.5]),
    }
    rows = {(r["metric"], r["rival"]): r for r in check_targets(rankers, "mine")["rows"]}
    # match@5: mine hits q2 and q3 that bm25 misses, no hit the other way: exact McNemar p = 2 * 0.5^2 = 0.5.
    assert rows[("match@5 (all)", "bm25")]["p"] == pytest.approx(0.5)
    # abnormal subset (q1, q2): one discordant pair, p = 1.
    assert rows[("match@5 (abnormal)", "bm25")]["p"] == pytest.approx(1.0)
    # P@10: four gains of 0.1: 2 of 16 sign patterns reach the sum, p = 0.125.
    assert rows[("label P@10", "bm25")]["p"] == pytest.approx(0.125)


def test_choice_prefers_most_passed_targets_then_match5() -> None:
    rankers = {"bm25": _ranker(0.5, 0.3), "mpnet": _ranker(0.4, 0.2)}
    rankers["a"] = _ranker(0.6, 0.25)  # beats both on match@5, loses label P@10 to bm25
    rankers["b"] = _ranker(0.55, 0.35)  # beats both everywhere
    for name in ("a", "b"):
        rankers[name]["findings_to_impression"]["openi"]["all"]["mrr@10"] = 0.3
    choice = choose_default(rankers, ["a", "b"])
    assert choice["best"] == "b"
    assert [c["passed"] for c in choice["candidates"]] == [8, 6]  # a loses label P@10 to bm25 on both sources


def test_candidates_are_the_methods_over_the_default_model() -> None:
    names = ["bm25", "mpnet", DEFAULT_MODEL, f"hybrid:{DEFAULT_MODEL}", "hybrid:mpnet"]
    assert default_candidates(dict.fromkeys(names, {})) == [DEFAULT_MODEL, f"hybrid:{DEFAULT_MODEL}"]


def test_product_default_is_the_one_the_committed_results_chose() -> None:
    """DEFAULT_METHOD must follow eval/results/retrieval.json: change one, rerun the benchmark for the other."""
    results = json.loads((RESULTS / "retrieval.json").read_text(encoding="utf-8"))
    assert product_default() == results["choice"]["best"]


def test_reuse_takes_earlier_results_only_from_the_same_split_and_reports(tmp_path: Path) -> None:
    earlier = {"created": "then", "split": "test", "reports": {"openi": 4}, "rankers": {"mpnet": {"x": 1}}}
    path = tmp_path / "retrieval.json"
    path.write_text(json.dumps(earlier))
    assert reuse_previous(path, ["mpnet", "absent"], "test", {"openi": 4}) == {"mpnet": {"x": 1, "reused_from": "then"}}
    assert reuse_previous(path, ["mpnet"], "dev", {"openi": 4}) == {}
    assert reuse_previous(path, ["mpnet"], "test", {"openi": 5}) == {}
    assert reuse_previous(tmp_path / "none.json", ["mpnet"], "test", {"openi": 4}) == {}
