"""The support check (retriever/search/support.py): a hit's words the query has count for it, the others against it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assistant.settings import SearchSettings
from eval.robustness.rerank_benchmark import support_card
from retriever.index.bm25 import BM25Field
from retriever.search.support import MIN_QUERY_WORDS, NAME, WEIGHT, SupportCheck

FINDINGS = (
    "The heart size is normal. There is a small left pleural effusion. No pneumothorax is seen. "
    "The osseous structures are intact without acute abnormality."
)


def lucene_idf(documents: int, frequency: int) -> float:
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def test_bm25_idf_counts_documents_per_term_and_gives_unseen_terms_the_most() -> None:
    field = BM25Field.build(
        ["small pleural effusion", "no pleural effusion", "right pneumothorax", "effusion"], np.arange(4)
    )
    got = field.idf(["effusion", "pleural", "neg:effusion", "pneumothorax", "never-seen"])
    assert got == pytest.approx(
        [lucene_idf(4, 2), lucene_idf(4, 1), lucene_idf(4, 1), lucene_idf(4, 1), lucene_idf(4, 0)]
    )


def test_relevance_adds_the_idf_of_supported_terms_and_subtracts_the_rest() -> None:
    idf = {
        "small": 1.0,
        "left": 2.0,
        "pleural": 3.0,
        "effusion": 4.0,
        "pneumothorax": 5.0,
        "neg:pneumothorax": 6.0,
        "right": 7.0,
    }
    check = SupportCheck()
    texts = [
        "Small left pleural effusion.",
        "Small left pleural effusion. Right pneumothorax.",  # asserts what the findings rule out
        "Small left pleural effusion. No pneumothorax.",
    ]

    def weights(terms):
        return np.array([idf[t] for t in terms])

    words_only = SupportCheck(pairs=False)
    assert words_only.relevance(FINDINGS, texts, weights) == pytest.approx(
        [1 + 2 + 3 + 4, 1 + 2 + 3 + 4 - 7 - 5, 1 + 2 + 3 + 4 + 6]
    )
    # adjacent pairs weigh their smaller idf: "small left" 1, "left pleural" 2, "pleural effusion" 3 are in the
    # findings; "effusion right" 4 and "right pneumothorax" 5 are not; "effusion no-pneumothorax" 4 is
    assert check.relevance(FINDINGS, texts, weights) == pytest.approx(
        [10 + (1 + 2 + 3), -2 + (1 + 2 + 3 - 4 - 5), 16 + (1 + 2 + 3 + 4)]
    )
    # without term weights every term and pair counts 1
    assert words_only.relevance(FINDINGS, texts, None) == pytest.approx([4, 2, 5])
    assert check.relevance(FINDINGS, texts, None) == pytest.approx([4 + 3, 2 + 1, 5 + 4])


def test_pairs_catch_a_hit_that_moves_the_querys_words() -> None:
    findings = "Right lower lobe opacity. Small left effusion."
    moved, kept = "Left lower lobe opacity.", "Right lower lobe opacity."
    # every word of the moved hit is in the findings: words alone cannot tell the two apart
    assert SupportCheck(pairs=False).relevance(findings, [moved, kept], None) == pytest.approx([4, 4])
    # "left lower" is not: -1 for it, +1 for "lower lobe" and "lobe opacity"
    assert SupportCheck().relevance(findings, [moved, kept], None) == pytest.approx([4 + 1, 4 + 3])


def test_the_stage_demotes_a_hit_with_an_unsupported_sentence_and_spares_short_queries() -> None:
    texts = ["Small left pleural effusion. Acute displaced right rib fracture.", "Small left pleural effusion."]
    scored = [(0, 1.0), (1, 0.9)]
    check = SupportCheck(weight=0.6)
    # first stage (1, 0) and support (0, 1), each min-max normalized: 0.4 x 1 for the first, 0.6 x 1 for the second
    reranked = check.rerank(FINDINGS, scored, lambda n: texts[n])
    assert [n for n, _ in reranked] == [1, 0] and [s for _, s in reranked] == pytest.approx([0.6, 0.4])
    # at 0.5 the two tie and the first stage's order stays
    assert [n for n, _ in check.weighted(0.5).rerank(FINDINGS, scored, lambda n: texts[n])] == [0, 1]
    short = "small left pleural effusion"
    assert len(short.split()) < MIN_QUERY_WORDS
    assert check.rerank(short, scored, lambda n: texts[n]) == scored
    assert (SupportCheck().weight, SupportCheck().min_query_words) == (WEIGHT, MIN_QUERY_WORDS)


def test_search_with_the_stage_orders_hits_by_support_under_the_fields_idf(minilm) -> None:
    from retriever.index.report_index import ReportIndex
    from retriever.reports.record import Report

    # BM25 alone ranks "added" first: it repeats more of the findings, and they never mention a fracture
    reports = [
        Report("added", impression="Small left pleural effusion, heart size normal. Rib fracture."),
        Report("own", impression="Left pleural effusion."),
    ] + [Report(f"other{n}", impression=f"Heart size normal, case {n}.") for n in range(5)]
    index = ReportIndex.build(reports, minilm, ("impression", "report"))
    short = "left pleural effusion, heart size normal"
    plain, short_plain = ([h.report for h in index.search(q, k=7, method="bm25")] for q in (FINDINGS, short))
    assert [r.id for r in plain[:2]] == ["added", "own"]
    stage = SupportCheck(weight=1.0)
    checked = index.with_search(second_stage=stage)
    staged = [h.report.id for h in checked.search(FINDINGS, k=3, method="bm25")]
    relevance = stage.relevance(FINDINGS, [r.impression for r in plain], index._bm25["impression"].idf)
    assert staged == [plain[n].id for n in np.argsort(-relevance, kind="stable")][:3]
    assert staged[:2] == ["own", "added"]
    assert [h.report.id for h in checked.search(short, k=7, method="bm25")] == [r.id for r in short_plain]  # gated
    # a whole-report search is left as the first stage ranked it (module docstring: impressions only)
    assert SupportCheck.fields == ("impression",) and not stage.applies_to("report")
    whole = checked.search(FINDINGS, field="report", k=7, method="bm25")
    assert [h.report.id for h in whole] == [h.report.id for h in index.search(FINDINGS, "report", 7, method="bm25")]


def test_settings_name_the_support_check_like_a_reranker() -> None:
    stage = SearchSettings(reranker="support@0.3").load_reranker()
    assert isinstance(stage, SupportCheck) and stage.weight == 0.3 and stage.min_query_words == MIN_QUERY_WORDS
    assert isinstance(SearchSettings().load_reranker("support"), SupportCheck)


def test_the_products_default_stage_is_the_one_the_committed_dev_run_adopted() -> None:
    from eval.common.shared_data import RESULTS
    from eval.retrieval.findings_impression import reranker_for
    from eval.robustness.results import RerankResults
    from retriever.search.methods import DEFAULT_SECOND_STAGE

    committed = RerankResults.read(RESULTS / "support_fusion_dev.json")
    decision = committed.decision
    assert decision is not None and decision.chosen is not None
    assert decision.adopt == (DEFAULT_SECOND_STAGE == NAME)
    chosen = reranker_for(committed.refs[decision.chosen].rpartition("+rerank=")[2])
    assert (chosen.weight, chosen.min_query_words) == (WEIGHT, MIN_QUERY_WORDS)
    assert committed.card == support_card()  # the committed run measured this module's rule
