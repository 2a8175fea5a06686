"""Label mAP / P@10 and BEIR free-text metrics against values computed by hand."""

from __future__ import annotations

import pytest

from eval.retrieval import beir
from eval.retrieval.findings_impression import make_ranker
from eval.retrieval.label_metrics import average_precision, label_retrieval, precision_at
from retriever.reports.record import Report


def test_average_precision_by_hand() -> None:
    # relevant at ranks 1 and 3: (1/1 + 2/3) / 2
    assert average_precision([True, False, True], total_relevant=2) == pytest.approx((1 + 2 / 3) / 2)
    # a third relevant item was never retrieved: divide by 3
    assert average_precision([True, False, True], total_relevant=3) == pytest.approx((1 + 2 / 3) / 3)
    # only the first `depth` results count, normalized by min(total, depth)
    assert average_precision([False, True, True], total_relevant=5, depth=2) == pytest.approx((1 / 2) / 2)
    assert average_precision([False, False], total_relevant=0) == 0.0


def test_precision_at_k_counts_missing_positions_as_not_relevant() -> None:
    assert precision_at([True, False, True], 10) == pytest.approx(0.2)
    assert precision_at([True] * 12, 10) == 1.0


def test_label_retrieval_with_bm25_by_hand() -> None:
    """Two CT liver reports and two XR chest reports with disjoint words: each query's one same-modality report
    comes first, so AP = 1 for every query, and P@10 = 1 relevant / 10."""
    reports = [
        Report("a", "hypodense liver lesion segment seven", "hepatic cyst", modality="CT", labels=("cyst",)),
        Report("b", "liver lesion hypodense segment four", "hepatic hemangioma", modality="CT", labels=("hemangioma",)),
        Report("c", "right pleural effusion blunting angle", "pleural effusion", modality="XR", labels=("effusion",)),
        Report("d", "pleural effusion right base blunting", "effusion", modality="XR", labels=("effusion",)),
    ]
    found = label_retrieval(reports, make_ranker("bm25"), ("modality", "finding_label"))
    assert found["modality"] == {"queries": 4, "map@100": 1.0, "p@10": 0.1}
    # finding labels: only c and d share one; a and b have nothing to find and are not queries
    assert found["finding_label"] == {"queries": 2, "map@100": 1.0, "p@10": 0.1}


def test_label_kind_with_a_single_value_is_skipped() -> None:
    reports = [Report(str(i), f"finding {i} words", "x", modality="CT") for i in range(3)]
    assert "modality" not in label_retrieval(reports, make_ranker("bm25"), ("modality",))


def test_ndcg_by_hand() -> None:
    # gains 2, 0, 1: DCG = 2 + 1/log2(4) = 2.5; ideal 2, 1: 2 + 1/log2(3) = 2.63093
    assert beir.ndcg([2, 0, 1], [2, 1]) == pytest.approx(2.5 / (2 + 1 / 1.5849625))
    assert beir.ndcg([0, 0], []) == 0.0


def test_beir_folder_round_trip_and_metrics(tmp_path) -> None:
    (tmp_path / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "", "text": "large right pleural effusion"}\n'
        '{"_id": "d2", "text": "enlarged cardiac silhouette cardiomegaly"}\n'
        '{"_id": "d3", "text": "small left pleural effusion"}\n'
    )
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "pleural effusion"}\n{"_id": "q2", "text": "x"}\n')
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td3\t1\nq2\tnope\t1\n")
    data = beir.load(tmp_path)
    assert data.qrels == {"q1": {"d1": 2, "d3": 1}, "q2": {"nope": 1}}
    scores = beir.evaluate(data, make_ranker("bm25"), k=10)
    # q2 has no judged document in the corpus and is left out; q1 finds both effusions at ranks 1-2 and the
    # cardiomegaly report (if returned at all) last: P@10 = 2/10, MRR = 1
    assert scores["queries"] == 1
    assert scores["p@10"] == pytest.approx(0.2)
    assert scores["mrr@10"] == 1.0
    assert 0.9 <= scores["ndcg@10"] <= 1.0
