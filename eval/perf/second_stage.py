"""What a second stage adds to a search: the support check (with and without its term pairs) and the cross-encoder,
side by side in one run.

    python -m eval.perf.second_stage                 # 50 held-out findings queries, 20 hits each
    python -m eval.perf.second_stage --quick         # a smoke run: 3 queries

Each query is a held-out findings section (the kind of query the support check acts on, 15+ words) and its hits
are the 20 texts of the test split the first stage ranks highest for it (BM25 over those texts), as a search hands
them on: impressions (what `assistant search` matches) and whole reports (what `assistant ask` matches by
default). Per query, each stage re-scores the same 20 hits (`SecondStage.rerank`, with the field's idf for the
support check), in interleaved rounds after one warm-up query; the figure is milliseconds per search. The
cross-encoder is measured only when the trained `radsearch-rerank-minilm` is in the models folder
(`python -m eval.robustness.rerank_benchmark --train-only`).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from eval.perf import results
from eval.perf.data import held_out_findings, shared_reports_or_skip, test_split
from retriever.index.bm25 import BM25Field
from retriever.search.rerank import RERANK_DEPTH, SecondStage
from retriever.search.support import SupportCheck

RERANKER = "radsearch-rerank-minilm"


def stages() -> tuple[dict[str, SecondStage], list[str]]:
    """The support check (and it on single terms, what its term pairs cost), and the cross-encoder when it has been
    trained here; and what was left out, with the reason."""
    from models.resolve import ModelNotAvailable
    from retriever.search.rerank import Reranker

    found: dict[str, SecondStage] = {
        "support check": SupportCheck(),
        "support check, single terms": SupportCheck(pairs=False),
    }
    missing = []
    try:
        found[f"cross-encoder {RERANKER}"] = Reranker(RERANKER)
    except ModelNotAvailable:
        missing.append(
            f"cross-encoder {RERANKER} (not trained on this machine: "
            "`python -m eval.robustness.rerank_benchmark --train-only`)"
        )
        print(f"not measured: {missing[-1]}")
    return found, missing


def milliseconds_per_search(
    stage: SecondStage, queries: list[str], hits: list[list[int]], texts: list[str], field: BM25Field
) -> list[float]:
    """One timing per query: the stage re-scoring that query's hits."""
    times = []
    for query, rowids in zip(queries, hits, strict=True):
        scored = [(rowid, 1.0 - n / len(rowids)) for n, rowid in enumerate(rowids)]
        start = time.perf_counter()
        stage.rerank(query, scored, lambda rowid: texts[rowid], field.idf)
        times.append((time.perf_counter() - start) * 1000)
    return times


def field_rows(
    field_name: str, measured: dict[str, SecondStage], queries: list[str], texts: list[str]
) -> list[dict[str, Any]]:
    """Each stage's milliseconds per search over one field's texts, in interleaved rounds after a warm-up."""
    field = BM25Field.build(texts, np.arange(len(texts)))
    hits = [[rowid for rowid, _ in field.search(q, RERANK_DEPTH)] for q in queries]
    timings: dict[str, list[float]] = {name: [] for name in measured}
    for stage in measured.values():  # warm-up: the first tokenizer and model calls
        milliseconds_per_search(stage, queries[:1], hits[:1], texts, field)
    for n in range(len(queries)):  # interleaved: each query by every stage in turn
        for name, stage in measured.items():
            timings[name] += milliseconds_per_search(stage, queries[n : n + 1], hits[n : n + 1], texts, field)
    return [
        {
            "field": field_name,
            "stage": name,
            "median_ms": round(statistics.median(values), 2),
            "p95_ms": round(float(np.percentile(values, 95)), 2),
            "queries": len(values),
        }
        for name, values in timings.items()
    ]


def main(argv: list[str] | None = None) -> int:
    cli = results.parser(__doc__)
    cli.add_argument("--queries", type=int, default=50)
    args = results.parse_args(cli, argv)
    reports = shared_reports_or_skip()
    queries = held_out_findings(3 if args.quick else args.queries)
    if reports is None or not queries:
        return 0
    queries = [q for q in queries if len(q.split()) >= SupportCheck().min_query_words]
    held_out = test_split(reports)
    measured, missing = stages()
    rows: list[dict[str, Any]] = []
    for field_name in ("impression", "report"):
        texts = list(dict.fromkeys(t for r in held_out if (t := r.text_of(field_name)).strip()))
        rows += field_rows(field_name, measured, queries, texts)
    data = {
        "queries": len(queries),
        "hits_per_query": RERANK_DEPTH,
        "corpus": len(held_out),
        "rows": rows,
        "not_measured": missing,
    }
    results.store_run("second_stage", data, args, "eval.perf.second_stage", argv)
    for row in rows:
        print(f"{row['field']}, {row['stage']}: median {row['median_ms']} ms, p95 {row['p95_ms']} ms per search")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
