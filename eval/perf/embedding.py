"""Embedding throughput and quality: sentence-transformers' default torch encode vs the project's fast path.

    python -m eval.perf.embedding                      # MiniLM and mpnet, 1 thread
    python -m eval.perf.embedding --quick              # a smoke run: few texts, small quality check

For each encoder and backend (torch = `SentenceTransformer.encode` with its defaults, batch 32; onnx; onnx-int8,
see retriever/onnx_encoder.py) in one process, on the same texts: reports/s over full report texts, cosine of
each vector to torch's, and findings -> impression match@5 on the held-out test split (eval.retrieval). A fast
backend counts as equal quality when its match@5 is within QUALITY_TOLERANCE of torch's.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from eval.perf import results
from eval.perf.data import sample_texts, shared_reports_or_skip, test_split

ENCODERS = ("minilm", "mpnet")
BACKENDS = ("torch", "onnx", "onnx-int8")
#: Allowed match@5 loss of a fast backend (1 point, from the issue).
QUALITY_TOLERANCE = 0.01
TORCH_BATCH = 32  # sentence-transformers' default


def throughput(encoder: Any, texts: list[str], batch_size: int) -> tuple[np.ndarray, float]:
    """(vectors, reports per second) after a warm-up batch (first-call allocation and, for ONNX, the export)."""
    encoder.encode(texts[:4], batch_size=batch_size)
    start = time.perf_counter()
    vectors = encoder.encode(texts, batch_size=batch_size)
    return vectors, len(texts) / (time.perf_counter() - start)


def quality(encoder: Any, name: str, test: list[Any]) -> dict[str, float]:
    """Findings -> impression metrics on the held-out test reports, pooled over sources."""
    from eval.retrieval import DenseRanker, findings_to_impression

    scores = findings_to_impression(test, DenseRanker(name=name, encoder=encoder))["all"]
    return {"n": scores["n"], "match@5": scores["match@5"], "mrr@10": scores["mrr@10"]}


def measure(encoder_ref: str, texts: list[str], test: list[Any], threads: int) -> list[dict[str, Any]]:
    """One row per backend for one encoder, torch first (the reference)."""
    from retriever.encoder import load_encoder

    rows: list[dict[str, Any]] = []
    reference: np.ndarray | None = None
    for backend in BACKENDS:
        started = time.perf_counter()
        encoder = load_encoder(encoder_ref, backend=backend, threads=threads)
        encoder.encode(["warm-up"])  # a fast backend exports (first use only) and opens its session here
        ready_s = time.perf_counter() - started
        batch = TORCH_BATCH if backend == "torch" else 8
        vectors, per_s = throughput(encoder, texts, batch)
        if reference is None:
            reference = vectors
        cosine = np.sum(vectors * reference, axis=1)
        rows.append(
            {
                "encoder": encoder_ref,
                "backend": backend,
                "batch_size": batch,
                "reports_per_s": round(per_s, 2),
                "load_s": round(ready_s, 2),
                "cosine_to_torch_min": round(float(cosine.min()), 4),
                "cosine_to_torch_mean": round(float(cosine.mean()), 4),
                **quality(encoder, f"{encoder_ref}/{backend}", test),
            }
        )
        print(rows[-1], flush=True)
    base = rows[0]
    for row in rows:
        row["speedup"] = round(row["reports_per_s"] / base["reports_per_s"], 2)
        row["match@5_delta"] = round(row["match@5"] - base["match@5"], 4)
        row["equal_quality"] = row["match@5_delta"] >= -QUALITY_TOLERANCE
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = results.parser(__doc__)
    parser.add_argument("--encoders", default=",".join(ENCODERS))
    parser.add_argument("--texts", type=int, default=256, help="full reports encoded for throughput")
    args = results.parse_args(parser, argv)
    reports = shared_reports_or_skip()
    if reports is None:
        return 0
    test = test_split(reports)
    texts = sample_texts(reports, 8 if args.quick else args.texts)
    if args.quick:
        test = test[:20]
    rows = [row for ref in args.encoders.split(",") for row in measure(ref, texts, test, args.threads)]
    data = {"texts": len(texts), "test_reports": len(test), "quality_tolerance": QUALITY_TOLERANCE, "rows": rows}
    results.store_run("embedding", data, args, "eval.perf.embedding", argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
