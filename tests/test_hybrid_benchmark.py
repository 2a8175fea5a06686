"""The benchmark's hybrid rankers fuse exactly like the product, the abnormal subset, and the target check."""

from __future__ import annotations

import pytest

from eval.retrieval import BM25Ranker, DenseRanker, HybridRanker, findings_to_impression, is_abnormal
from eval.retrieval_benchmark import check_targets
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
