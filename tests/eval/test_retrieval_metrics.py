"""Findings -> impression metrics against values computed by hand."""

from __future__ import annotations

import pytest

from eval.retrieval.findings_impression import (
    findings_to_impression,
    frequent_impressions,
    make_ranker,
    match_at_k,
    mrr_at_k,
    rank_of,
    summarize,
)
from retriever.reports.record import Report


def test_rank_of_is_one_based_and_none_when_missing() -> None:
    assert rank_of(7, [3, 7, 9]) == 2
    assert rank_of(3, [3, 7, 9]) == 1
    assert rank_of(4, [3, 7, 9]) is None
    assert rank_of(4, []) is None


def test_match_and_mrr_by_hand() -> None:
    ranks = [1, 3, None, 12, 2]
    assert match_at_k(ranks, 1) == pytest.approx(1 / 5)
    assert match_at_k(ranks, 5) == pytest.approx(3 / 5)
    assert match_at_k(ranks, 10) == pytest.approx(3 / 5)
    assert match_at_k(ranks, 12) == pytest.approx(4 / 5)
    # 1/1 + 1/3 + 1/2 over 5 queries; rank 12 is past the cut-off and counts 0
    assert mrr_at_k(ranks, 10) == pytest.approx((1 + 1 / 3 + 1 / 2) / 5)


def test_empty_rank_lists_score_zero() -> None:
    assert match_at_k([], 5) == 0.0
    assert mrr_at_k([]) == 0.0
    assert summarize([]) == {"n": 0, "match@1": 0.0, "match@5": 0.0, "match@10": 0.0, "mrr@10": 0.0}


def test_summarize_names_metrics_as_in_the_literature() -> None:
    assert summarize([2, None]) == {"n": 2, "match@1": 0.0, "match@5": 0.5, "match@10": 0.5, "mrr@10": 0.25}


def test_frequent_impressions_skip_singletons_and_keep_the_top() -> None:
    texts = ["normal"] * 3 + ["effusion"] * 2 + ["nodule"]
    assert frequent_impressions(texts, top=20) == {"normal", "effusion"}
    assert frequent_impressions(texts, top=1) == {"normal"}
    assert frequent_impressions(["a", "b", "c"]) == set()


def test_findings_to_impression_with_bm25_by_hand() -> None:
    reports = [
        Report("r1", "Left pleural effusion blunting the costophrenic angle.", "Left pleural effusion."),
        Report("r2", "Right upper lobe consolidation with air bronchograms.", "Right upper lobe pneumonia."),
        Report("r3", "Lungs clear. Heart size normal.", "No acute disease."),
        Report("r4", "Clear lungs, normal heart.", "No acute disease."),
        Report("r5", "Enlarged cardiac silhouette.", "Cardiomegaly."),
        Report("r6", "Findings without an impression."),  # not usable: no impression
    ]
    result = findings_to_impression(reports, make_ranker("bm25"))
    # Corpus: 4 unique impressions. r1 and r2 share words only with their own impression (rank 1); r3, r4 and r5
    # share no word with any impression, so BM25 returns nothing for them.
    assert result["corpus_impressions"] == 4
    assert result["all"] == {"n": 5, "match@1": 0.4, "match@5": 0.4, "match@10": 0.4, "mrr@10": 0.4}
    # "No acute disease." is the only impression occurring twice: the rare subset is r1, r2, r5.
    rare = result["without_top20_impressions"]
    assert rare["n"] == 3
    assert rare["match@1"] == pytest.approx(0.6667)
    assert rare["mrr@10"] == pytest.approx(0.6667)
