"""The benchmark ranks through the product's ReportIndex (every method, fusion, negation, IVF-PQ), the abnormal subset,
and the target check."""

from __future__ import annotations

import json
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from eval.retrieval.benchmark import (
    CHOICE_RESULTS,
    CHOICE_SPLIT,
    DEFAULT_MODEL,
    DEFAULT_RANKERS,
    check_targets,
    choose_default,
    default_candidates,
    product_default,
    reuse_previous,
    shipped_default,
)
from eval.retrieval.findings_impression import IndexRanker, findings_to_impression, is_abnormal, make_ranker
from eval.retrieval.results import RankerResult, RetrievalResults
from retriever.encoders.encoder import Encoder
from retriever.index import vectors as faiss_index
from retriever.index.report_index import ReportIndex
from retriever.reports.record import Report
from retriever.search.fusion import DENSE_WEIGHT, RRF_K
from retriever.search.methods import METHODS

CORPUS = [
    "Right lower lobe pneumonia.",
    "Small left pleural effusion.",
    "No acute cardiopulmonary abnormality.",
    "Cardiomegaly with pulmonary edema.",
    "Left upper lobe nodule.",
]
QUERIES = ["airspace consolidation in the right lower lobe", "enlarged heart and interstitial edema"]


def test_hybrid_ranks_are_the_reciprocal_rank_fusion_of_both_rankers(minilm) -> None:
    dense = IndexRanker("minilm", encoder=minilm)
    hybrid = IndexRanker("hybrid:minilm", method="hybrid", encoder=minilm)
    fused = hybrid.rank(QUERIES, CORPUS, 3)
    for query, got in zip(QUERIES, fused, strict=True):
        scores: dict[int, float] = {}
        for ranking in (dense.rank([query], CORPUS, 5)[0], make_ranker("bm25").rank([query], CORPUS, 5)[0]):
            for rank, position in enumerate(ranking, start=1):
                scores[position] = scores.get(position, 0.0) + 1 / (RRF_K + rank)
        expected = sorted(scores, key=lambda p: -scores[p])[:3]
        assert got == expected


def test_weighted_hybrid_puts_the_top_of_both_lists_first(minilm) -> None:
    ranked = IndexRanker("hybrid-weighted:minilm", method="hybrid-weighted", encoder=minilm).rank(
        QUERIES[:1], CORPUS, 5
    )[0]
    assert ranked[0] == 0 and sorted(ranked) == list(range(5))


@pytest.mark.parametrize("method", METHODS)
def test_rankers_rank_as_the_product_index_searches(minilm, method: str) -> None:
    """Every method ranks the corpus exactly as a ReportIndex of those reports searched by the product does."""
    reports = [Report(f"r{i}", impression=text) for i, text in enumerate(CORPUS)]
    index = ReportIndex.build(reports, minilm, ("impression",))
    ranker = make_ranker("bm25") if method == "bm25" else IndexRanker(method, method=method, encoder=minilm)
    for query, got in zip(QUERIES, ranker.rank(QUERIES, CORPUS, 4), strict=True):
        expected = [int(hit.report.id[1:]) for hit in index.search(query, "impression", 4, method=method)]
        assert got == expected


@pytest.mark.parametrize("method", METHODS)
def test_hits_that_contradict_the_query_are_ranked_last(minilm, method: str) -> None:
    corpus = ["No pleural effusion.", "Small left pleural effusion.", "Cardiomegaly."]
    ranker = make_ranker("bm25") if method == "bm25" else IndexRanker(method, method=method, encoder=minilm)
    (ranked,) = ranker.rank(["left pleural effusion"], corpus, 3)
    assert ranked[0] == 1 and 0 not in ranked[:-1]  # last, or not found at all (BM25 indexes neg:effusion)


def test_the_sweeps_dense_weight_reaches_the_index_fusion(minilm) -> None:
    """eval.retrieval.fusion_sweep's weight replaces the product's in the index's own weighted mix: at the product's
    weight it ranks as the product; at 1 the BM25 side weighs nothing, so it ranks as dense search; at 0 the reports
    BM25 found come first, in BM25's order."""
    queries = [*QUERIES, "no pleural effusion", "left lung nodule"]
    product = IndexRanker("p", method="hybrid-weighted", encoder=minilm).rank(queries, CORPUS, 5)
    assert IndexRanker("s", "hybrid-weighted", minilm, dense_weight=DENSE_WEIGHT).rank(queries, CORPUS, 5) == product
    dense = IndexRanker("d", encoder=minilm).rank(queries, CORPUS, 5)
    assert IndexRanker("1", "hybrid-weighted", minilm, dense_weight=1.0).rank(queries, CORPUS, 5) == dense
    bm25_first = IndexRanker("0", "hybrid-weighted", minilm, dense_weight=0.0).rank(
        ["pleural effusion nodule"], CORPUS, 5
    )[0]
    assert bm25_first[:2] == make_ranker("bm25").rank(["pleural effusion nodule"], CORPUS, 5)[0][:2]


class _WordHashes:
    """A fast stand-in encoder backend: each text is the unit sum of one random vector per word."""

    name, version, model, dims, max_seq_length = "torch", 0, None, 32, 128

    def encode(self, texts: list[str], batch_size: int = 32, *, progress: bool = False) -> np.ndarray:
        rows = []
        for text in texts:
            words = text.lower().split()
            vector = sum(np.random.default_rng(zlib.crc32(w.encode())).standard_normal(self.dims) for w in words)
            rows.append(vector / np.linalg.norm(vector))
        return np.array(rows, dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def test_a_corpus_above_the_exact_limit_is_searched_through_ivf_pq(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ranker's index is the one users get at that size: IVF-PQ past faiss_index.EXACT_LIMIT."""
    monkeypatch.setattr(faiss_index, "EXACT_LIMIT", 100)
    words = [f"w{i}" for i in range(200)]
    rng = np.random.default_rng(1)
    corpus = list(dict.fromkeys(" ".join(rng.choice(words, 6)) for _ in range(1200)))
    ranker = IndexRanker("words", encoder=Encoder("words", "words", _WordHashes()))
    assert ranker.index(corpus).manifest.index_type == "ivfpq"
    ranked = ranker.rank(corpus[:20], corpus, 5)
    assert sum(row[0] == n for n, row in enumerate(ranked)) >= 18  # each text finds itself (PQ is approximate)


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
    result = findings_to_impression(reports, make_ranker("bm25"))
    assert result["all"]["n"] == 3 and result["abnormal"]["n"] == 2


def _result(scores: dict, labels: dict) -> RankerResult:
    """A ranker's result from the parts a test sets: Open-i findings -> impression scores and label scores."""
    match = {"ranker": "r", "corpus_impressions": 10, "without_top20_impressions": scores["all"]} | scores
    return RankerResult.from_json({"findings_to_impression": {"openi": match}, "labels": labels})


def _ranker(match5: float, p10: float, mrr10: float = 0.0) -> RankerResult:
    scores = {"all": {"match@5": match5, "n": 10, "mrr@10": mrr10}, "abnormal": {"match@5": match5, "n": 8}}
    label = {"finding_label": {"p@10": p10, "map@100": p10, "queries": 5}}
    return _result(scores, {"openi": label, "ctrate": label})


def test_targets_need_strict_wins_over_bm25_and_mpnet() -> None:
    rankers = {"bm25": _ranker(0.5, 0.3), "mpnet": _ranker(0.4, 0.2), "mine": _ranker(0.6, 0.3)}
    targets = check_targets(rankers, "mine")
    assert not targets.all_pass
    failed = [(r.metric, r.set_name, r.rival) for r in targets.rows if not r.passed]
    assert failed == [("label P@10", "openi", "bm25"), ("label P@10", "ctrate", "bm25")]
    rankers["mine"] = _ranker(0.6, 0.31)
    assert check_targets(rankers, "mine").all_pass


def _with_queries(ranks: list[int | None], p10: list[float]) -> RankerResult:
    """A ranker result with per-query data: 4 Open-i queries, the first two abnormal."""
    ids = ["q1", "q2", "q3", "q4"]
    hits = [r is not None and r <= 5 for r in ranks]
    scores = {
        "all": {"match@5": sum(hits) / 4, "n": 4, "mrr@10": 0.0},
        "abnormal": {"match@5": sum(hits[:2]) / 2, "n": 2},
        "per_query": {"id": ids, "rank": ranks, "abnormal": [True, True, False, False]},
    }
    label = {"p@10": sum(p10) / 4, "map@100": 0.0, "queries": 4, "per_query": {"id": ids, "p@10": p10}}
    return _result(scores, {"openi": {"finding_label": label}})


def test_target_rows_carry_paired_p_values() -> None:
    rankers = {
        "bm25": _with_queries([1, 7, None, 2], [0.1, 0.2, 0.3, 0.4]),
        "mine": _with_queries([1, 2, 3, 2], [0.2, 0.3, 0.4, 0.5]),
    }
    rows = {(r.metric, r.rival): r for r in check_targets(rankers, "mine").rows}
    # match@5: mine hits q2 and q3 that bm25 misses, no hit the other way: exact McNemar p = 2 * 0.5^2 = 0.5.
    assert rows[("match@5 (all)", "bm25")].p == pytest.approx(0.5)
    # abnormal subset (q1, q2): one discordant pair, p = 1.
    assert rows[("match@5 (abnormal)", "bm25")].p == pytest.approx(1.0)
    # P@10: four gains of 0.1: 2 of 16 sign patterns reach the sum, p = 0.125.
    assert rows[("label P@10", "bm25")].p == pytest.approx(0.125)


def test_choice_prefers_most_passed_targets_then_match5() -> None:
    rankers = {"bm25": _ranker(0.5, 0.3), "mpnet": _ranker(0.4, 0.2)}
    rankers["a"] = _ranker(0.6, 0.25, mrr10=0.3)  # beats both on match@5, loses label P@10 to bm25
    rankers["b"] = _ranker(0.55, 0.35, mrr10=0.3)  # beats both everywhere
    choice = choose_default(rankers, ["a", "b"])
    assert choice.best == "b"
    assert [c.passed for c in choice.candidates] == [8, 6]  # a loses label P@10 to bm25 on both sources


def test_candidates_are_the_methods_over_the_default_model() -> None:
    names = ["bm25", "mpnet", DEFAULT_MODEL, f"hybrid:{DEFAULT_MODEL}", "hybrid:mpnet"]
    assert default_candidates(dict.fromkeys(names, _ranker(0.5, 0.5))) == [DEFAULT_MODEL, f"hybrid:{DEFAULT_MODEL}"]


def test_product_default_is_the_one_the_committed_dev_results_chose() -> None:
    """DEFAULT_METHOD must follow the committed dev-split results (chosen on dev, reported on test): change one,
    rerun the benchmark for the other."""
    results = RetrievalResults.read(CHOICE_RESULTS)
    assert results.split == CHOICE_SPLIT and results.choice is not None
    assert product_default() == results.choice.best


def test_the_benchmark_checks_its_targets_on_what_users_search_with() -> None:
    """The test-split targets are checked on the default method with the default second stage, and the method over
    the same model without it stays beside it, so the stage's own effect is in the same table."""
    from retriever.search.methods import DEFAULT_SECOND_STAGE

    rankers = DEFAULT_RANKERS.split(",")
    assert shipped_default() == product_default() + (f"+rerank={DEFAULT_SECOND_STAGE}" if DEFAULT_SECOND_STAGE else "")
    assert shipped_default() in rankers and product_default() in rankers
    assert make_ranker(shipped_default(), backend="torch").reranker is not None or DEFAULT_SECOND_STAGE is None


def _results_file(path: Path, **changes: object) -> None:
    results = RetrievalResults(
        "retrieval",
        "then",
        "python -m eval.retrieval.benchmark",
        "test",
        {"openi": 4},
        "",
        "onnx-int8",
        {"mpnet": _ranker(0.4, 0.2)},
    )
    path.write_text(json.dumps(replace(results, **changes).to_json()))


def test_reuse_takes_earlier_results_only_from_the_same_split_reports_and_backend(tmp_path: Path) -> None:
    path = tmp_path / "retrieval.json"
    _results_file(path)
    found = reuse_previous(path, ["mpnet", "absent"], "test", {"openi": 4}, "onnx-int8")
    assert list(found) == ["mpnet"] and found["mpnet"].reused_from == "then"
    assert found["mpnet"].findings_to_impression == _ranker(0.4, 0.2).findings_to_impression
    assert reuse_previous(path, ["mpnet"], "dev", {"openi": 4}, "onnx-int8") == {}
    assert reuse_previous(path, ["mpnet"], "test", {"openi": 5}, "onnx-int8") == {}
    assert reuse_previous(path, ["mpnet"], "test", {"openi": 4}, "torch") == {}
    assert reuse_previous(tmp_path / "none.json", ["mpnet"], "test", {"openi": 4}, "onnx-int8") == {}


@pytest.mark.models
def test_the_benchmark_writes_typed_results_and_reuses_them(tmp_path: Path) -> None:
    from eval.retrieval import benchmark as retrieval_benchmark

    findings = [*QUERIES, "fluid in the left pleural space", "clear lungs", "a left upper lobe nodule"]
    rows = [(f"r{i}", "CT", f, impression, "x") for i, (f, impression) in enumerate(zip(findings, CORPUS, strict=True))]
    corpus = tmp_path / "reports.csv"
    corpus.write_text("\n".join(["id,modality,findings,impression,labels", *(",".join(row) for row in rows)]) + "\n")
    command = ["--corpus", str(corpus), "--split", "all", "--encoder-backend", "torch", "--out", str(tmp_path)]
    assert retrieval_benchmark.main([*command, "--rankers", "bm25,minilm"]) == 0
    first = RetrievalResults.read(tmp_path / "retrieval.json")
    assert (first.schema_version, first.encoder_backend, list(first.rankers)) == (2, "torch", ["bm25", "minilm"])
    assert first.rankers["minilm"].findings_to_impression["reports"].all["n"] == len(rows)
    assert f"| minilm | reports | {len(rows)} |" in (tmp_path / "retrieval.md").read_text()
    assert retrieval_benchmark.main([*command, "--rankers", "bm25,minilm", "--reuse", "minilm"]) == 0
    again = RetrievalResults.read(tmp_path / "retrieval.json")
    assert again.rankers["minilm"].reused_from == first.created and again.rankers["bm25"].reused_from is None
    assert again.rankers["minilm"].findings_to_impression == first.rankers["minilm"].findings_to_impression
    written = (tmp_path / "retrieval.md").read_text()
    (tmp_path / "retrieval.md").unlink()
    assert retrieval_benchmark.main(["--render-only", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "retrieval.md").read_text() == written  # the report comes from the JSON alone
