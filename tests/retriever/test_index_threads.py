"""One ReportIndex searched from many threads at once gives exactly the single-threaded results.

Why: the chat serves several residents from one loaded index and the diagnosis benchmark searches one index from a
thread pool. The encoder's fast tokenizer and the SQLite connection are not safe to use from two threads at once, so
ReportIndex serialises its use of them itself (retriever/index/report_index.py); callers need no lock of their own.
Without that, this test failed here: 6 of 900 searches counted a long query's tokens as 256 instead of 402, because
another thread's encode had switched the shared tokenizer to truncation.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from llm_fixtures import REPORTS

from retriever.index.report_index import ReportIndex, SearchFilters

THREADS = 8
ROUNDS = 10
QUERIES = [
    "Blunting of the right costophrenic angle with a meniscus sign.",
    "Air space opacity in the right lower lobe with air bronchograms.",
    "Enlarged cardiac silhouette with cephalization of the pulmonary vessels.",
    "Wedge-shaped filling defect in a pulmonary artery.",
    "Spiculated nodule in the right upper lobe " * 40,  # long: truncated by the tokenizer
]
#: Every path a search takes: the encoder (dense), BM25, fusion, and the SQLite store (filters, report texts).
SEARCHES = [
    {"method": method, "field": field, "filters": filters}
    for method in ("dense", "bm25", "hybrid")
    for field in ("findings", "impression")
    for filters in (None, SearchFilters(modality="XR"), SearchFilters(source="fixture", modality="CT"))
]


@pytest.fixture(scope="module")
def saved_index(tmp_path_factory: pytest.TempPathFactory, minilm) -> Path:
    folder = tmp_path_factory.mktemp("threads") / "index"
    ReportIndex.build(REPORTS, encoder=minilm).save(folder)
    return folder


def _run(index: ReportIndex, job: tuple[str, dict]) -> list[tuple[str, float, str]]:
    query, options = job
    hits = index.search(query, k=4, **options)
    prepared = index.prepare(query)
    return [(hit.report.id, round(hit.score, 5), hit.report.impression) for hit in hits] + [
        ("tokens", prepared.tokens, "")
    ]


def test_concurrent_searches_equal_the_single_threaded_results(saved_index: Path) -> None:
    jobs = [(query, options) for query in QUERIES for options in SEARCHES]
    single = ReportIndex.load(saved_index)
    expected = [_run(single, job) for job in jobs]
    shared = ReportIndex.load(saved_index)  # encoder not loaded yet: the threads race to load it too
    work = [(i, job) for _ in range(ROUNDS) for i, job in enumerate(jobs)]
    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(lambda item: (item[0], _run(shared, item[1])), work))
    mismatches = [(jobs[i][0][:60], jobs[i][1], got, expected[i]) for i, got in results if got != expected[i]]
    assert not mismatches, f"{len(mismatches)} of {len(results)} concurrent searches differ, e.g. {mismatches[0]}"
