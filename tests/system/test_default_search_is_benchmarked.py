"""What a fresh clone's default search returns is what the retrieval benchmark's default row measures (issue 42):
the same top five, hence the same match@5, for every test-split query.

The benchmark ranks with `eval.retrieval.findings_impression.make_ranker(shipped_default())`; a user runs `assistant
index` with no `--encoder` and `assistant search` with no flags. Both are compared on the MTSamples test split (24
queries) of the shared data, and a few queries also through the real `assistant search` process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCE = "mtsamples"


@pytest.fixture(scope="module")
def case(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    from eval.common.shared_data import load_shared
    from retriever.reports.splits import split_reports

    test = [r for r in split_reports(load_shared(shared_data).reports)["test"] if r.source == SOURCE]
    usable = [r for r in test if r.findings.strip() and r.impression.strip()]
    corpus = list(dict.fromkeys(r.impression.strip() for r in usable))
    folder = tmp_path_factory.mktemp("default-search")
    # One report per unique impression and nothing else, as the benchmark's corpus (kept without findings).
    lines = [json.dumps({"id": str(n), "impression": text}) for n, text in enumerate(corpus)]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "assistant.cli",
            "index",
            str(folder / "corpus.jsonl"),
            "--keep-incomplete",
            "--out",
            str(folder / "index"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert built.returncode == 0, built.stderr
    return {
        "queries": [r.findings for r in usable],
        "impressions": [r.impression.strip() for r in usable],
        "corpus": corpus,
        "index": folder / "index",
    }


def _product_ranking(index_folder: Path, queries: list[str]) -> list[list[int]]:
    """Ranked corpus positions as `assistant search` finds them (its defaults: method, second stage, field)."""
    from assistant.settings import Settings
    from retriever.index.report_index import ReportIndex
    from retriever.search.methods import DEFAULT_METHOD

    index = ReportIndex.load(index_folder, search=Settings().search.configure)
    return [
        [int(hit.report.id.rpartition(":")[2]) for hit in index.search(q, "impression", 5, method=DEFAULT_METHOD)]
        for q in queries
    ]


def test_a_fresh_default_index_and_search_rank_as_the_benchmarks_default_row(case: dict) -> None:
    from eval.retrieval.benchmark import shipped_default
    from eval.retrieval.findings_impression import make_ranker
    from models.preset import PRESET
    from retriever.index.report_index import ReportIndex

    assert ReportIndex.load(case["index"]).manifest.encoder.name == PRESET.encoder
    benchmark = make_ranker(shipped_default(), backend="onnx-int8").rank(case["queries"], case["corpus"], 5)
    product = _product_ranking(case["index"], case["queries"])
    # The same top five for every query, hence the same match@5: the int8 encoder runs each text alone, so neither
    # the benchmark's batching of queries and corpus nor a build's changes a vector (retriever/encoders/onnx/runner.py).
    assert product == benchmark


def test_the_search_command_returns_the_same_hits(case: dict) -> None:
    queries = case["queries"][:3]
    expected = _product_ranking(case["index"], queries)
    for query, ranked in zip(queries, expected, strict=True):
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "assistant.cli",
                "search",
                query,
                "--index",
                str(case["index"]),
                "-k",
                "5",
                "--json",
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stderr
        hits = json.loads(run.stdout)["hits"]
        assert [int(h["id"].rpartition(":")[2]) for h in hits] == ranked
