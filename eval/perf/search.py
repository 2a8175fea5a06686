"""Search latency and scale: exact Flat, HNSW and IVF-PQ at 10k, 100k and 1M vectors.

    python -m eval.perf.search                              # 10k, 100k, 1M; 1 thread
    python -m eval.perf.search --sizes 2000 --queries 10 --quick   # smoke run (300 real vectors)

Corpus: the real report embeddings (findings and impressions of the shared data's train/dev reports, MiniLM with
the index backend) extended by realistic synthetic vectors (eval/perf/synthetic.py). Two query sets: findings of
held-out test reports (what `assistant ask` sends, ~100 tokens) and short free-text queries (what a person types
into `assistant search`). Each query is encoded on its own, so its latency is its real encode time plus its
single-query search time through the project's own `search_vectors` (IndexIDMap2 + parameters). Per index and
setting: build time, bytes per vector (serialized index), p50/p99 latency of search alone and of encode + search,
and recall@10 against exact search.
"""

from __future__ import annotations

import gc
import json
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from eval.common.shared_data import REPO, index_backend
from eval.perf import results
from eval.perf.data import NoData, shared_reports, test_split
from eval.perf.synthetic import nn_cosine_mean, synthetic_vectors

SHORT_QUERIES = REPO / "eval" / "datasets" / "shared_label_queries" / "queries.jsonl"
SIZES = (10_000, 100_000, 1_000_000)
ENCODER = "minilm"
K = 10
#: Query-time settings swept per kind; retriever/index/vectors.py's defaults are the cheapest that reach the recall
#: target in this sweep.
SETTINGS: dict[str, list[dict[str, int]]] = {
    "flat": [{}],
    "hnsw": [{"ef_search": ef} for ef in (64, 128, 256, 512)],
    "ivfpq": [
        {"nprobe": nprobe, "k_factor": k_factor} for nprobe, k_factor in ((32, 10), (64, 20), (128, 50), (256, 100))
    ],
}


def percentiles(values_s: list[float]) -> dict[str, float]:
    """p50 and p99 in milliseconds."""
    ms = np.array(values_s) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 3), "p99_ms": round(float(np.percentile(ms, 99)), 3)}


@dataclass
class QuerySet:
    """Queries of one kind: their vectors and how long each took to encode on its own."""

    name: str
    vectors: np.ndarray
    encode_s: list[float]


def timed_queries(encoder: Any, name: str, texts: list[str]) -> QuerySet:
    """Encode each text alone, as a search does, after a warm-up."""
    encoder.encode(texts[:2])
    vectors, seconds = [], []
    for text in texts:
        start = time.perf_counter()
        vectors.append(encoder.encode([text])[0])
        seconds.append(time.perf_counter() - start)
    return QuerySet(name, np.stack(vectors), seconds)


def real_corpus_and_queries(encoder: Any, count: int, corpus_limit: int | None) -> tuple[np.ndarray, list[QuerySet]]:
    """Real corpus vectors (train/dev findings and impressions) and two query sets: `findings` (held-out test
    findings, what `assistant ask` sends) and `short` (the free-text label queries, what a person types into
    `assistant search`, cycled to `count`)."""
    reports = shared_reports()
    held_out = test_split(reports)
    held_ids = {r.id for r in held_out}
    texts = list(
        dict.fromkeys(t for r in reports if r.id not in held_ids for t in (r.findings, r.impression) if t.strip())
    )
    corpus = encoder.encode(texts[:corpus_limit])
    findings = [r.findings for r in held_out if r.findings.strip()][:count]
    short = [json.loads(line)["text"] for line in SHORT_QUERIES.read_text(encoding="utf-8").splitlines() if line]
    short = (short * (count // len(short) + 1))[:count]
    return corpus, [timed_queries(encoder, "findings", findings), timed_queries(encoder, "short", short)]


def recall_at_k(found: list[list[int]], exact: np.ndarray) -> float:
    """Share of the exact top-k ids that the index returned, averaged over queries."""
    hits = [len(set(f) & set(e.tolist())) / len(e) for f, e in zip(found, exact, strict=True)]
    return round(float(np.mean(hits)), 4)


def measure_size(size: int, real: np.ndarray, query_sets: list[QuerySet], kinds: list[str]) -> tuple[list, float]:
    """Rows for one corpus size (every kind and setting), and how clustered the corpus is."""
    import faiss

    from retriever.index.vectors import build_vector_index, memory_bytes, search_vectors

    data = synthetic_vectors(real, size)
    ids = np.arange(size, dtype=np.int64)
    exact = faiss.IndexFlatIP(data.shape[1])
    exact.add(data)
    truth = {q.name: exact.search(q.vectors, K)[1] for q in query_sets}
    del exact
    rows = []
    for kind in kinds:
        start = time.perf_counter()
        index = build_vector_index(data, ids, kind)
        build_s = time.perf_counter() - start
        size_bytes = memory_bytes(index)
        for setting in SETTINGS[kind]:
            row: dict[str, Any] = {
                "vectors": size,
                "kind": kind,
                "setting": setting,
                "build_s": round(build_s, 2),
                "bytes_per_vector": round(size_bytes / size, 1),
                "mb_per_million": round(size_bytes / size * 1e6 / 2**20, 1),
            }
            for queries in query_sets:
                search_s, found = [], []
                for vector in queries.vectors:
                    start = time.perf_counter()
                    hits = search_vectors(index, vector, K, **setting)
                    search_s.append(time.perf_counter() - start)
                    found.append([i for i, _ in hits])
                total = [a + b for a, b in zip(queries.encode_s, search_s, strict=True)]
                row[queries.name] = {
                    "search": percentiles(search_s),
                    "encode_plus_search": percentiles(total),
                    "recall@10": recall_at_k(found, truth[queries.name]),
                }
            rows.append(row)
            print(row, flush=True)
        del index
        gc.collect()
    return rows, nn_cosine_mean(data)


def main(argv: list[str] | None = None) -> int:
    parser = results.parser(__doc__)
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    parser.add_argument("--kinds", default="flat,hnsw,ivfpq")
    parser.add_argument("--queries", type=int, default=200)
    args = results.parse_args(parser, argv)
    from retriever.encoders.encoder import load_encoder

    encoder = load_encoder(ENCODER, backend=index_backend(), threads=args.threads)
    try:
        real, query_sets = real_corpus_and_queries(encoder, args.queries, 300 if args.quick else None)
    except NoData as exc:
        print(f"skipped: {exc}")
        return 0
    rows, clustering = [], {"real": nn_cosine_mean(real)}
    for size in (int(s) for s in args.sizes.split(",")):
        size_rows, clustering[str(size)] = measure_size(size, real, query_sets, args.kinds.split(","))
        rows.extend(size_rows)
    data = {
        "encoder": f"{ENCODER} ({encoder.backend})",
        "dims": int(real.shape[1]),
        "real_vectors": len(real),
        "queries": {q.name: len(q.encode_s) for q in query_sets},
        "query_encode": {q.name: percentiles(q.encode_s) for q in query_sets},
        "nn_cosine_mean": clustering,
        "rows": rows,
    }
    results.store_run("search", data, args, "eval.perf.search", argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
