"""Embedding throughput and quality: sentence-transformers' default torch encode vs the project's fast path.

    python -m eval.perf.embedding                      # MiniLM and mpnet, at 1 thread and at every core
    python -m eval.perf.embedding --threads 4          # at 1 and 4 threads
    python -m eval.perf.embedding --quick              # a smoke run: few texts, small quality check

For each encoder and backend (torch = `SentenceTransformer.encode` with its defaults, batch 32; onnx; onnx-int8,
see retriever/encoders/onnx/encoder.py) in one process, on the same texts: reports/s over full report texts (each
backend encodes the whole list per call, in interleaved rounds, so they share the machine's load alike), cosine of each
vector to torch's, and findings -> impression match@5 on the held-out test split (eval.retrieval.findings_impression). A
fast backend counts as equal quality when its match@5 is within QUALITY_TOLERANCE of torch's.

Throughput is measured at 1 thread and at --threads (default: every core, which is what sentence-transformers'
default encode uses, since torch takes all cores): the backends scale differently with threads (on 2 cores torch's
32-text batches gain ~1.6x from the second core, ONNX Runtime's ~1.9x), so both figures are reported.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from eval.common.machine import limit_threads
from eval.perf import results
from eval.perf.data import sample_texts, shared_reports_or_skip, test_split
from retriever.encoders.onnx.runner import MAX_BATCH

ENCODERS = ("minilm", "mpnet")
BACKENDS = ("torch", "onnx", "onnx-int8")
#: Allowed match@5 loss of a fast backend (1 point, from the issue).
QUALITY_TOLERANCE = 0.01
TORCH_BATCH = 32  # sentence-transformers' default
#: Interleaved timing rounds (see `throughput`).
ROUNDS = 2


def throughput(encoders: dict[str, tuple[Any, int]], texts: list[str]) -> dict[str, tuple[np.ndarray, float]]:
    """Backend -> (vectors, reports per second) for backend -> (encoder, batch size), after a warm-up batch each.

    Every backend encodes ALL the texts in one call, as `assistant index` does (so each sorts the whole list by
    length, which sentence-transformers' default encode does too: slicing the list would add padding to torch's
    batches of 32 more than to the fast path's batches of 8 and flatter the fast path). This is repeated ROUNDS
    times with the backends' order rotating, so a change in the machine's load during the run (the cores may be
    shared) hits all backends alike; reports/s is all texts encoded over each backend's summed encode time.
    """
    for encoder, batch in encoders.values():
        encoder.encode(texts[:4], batch_size=batch)
    names = list(encoders)
    seconds = dict.fromkeys(names, 0.0)
    vectors: dict[str, np.ndarray] = {}
    for round_ in range(ROUNDS):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            encoder, batch = encoders[name]
            start = time.perf_counter()
            vectors[name] = encoder.encode(texts, batch_size=batch)
            seconds[name] += time.perf_counter() - start
    return {name: (vectors[name], ROUNDS * len(texts) / seconds[name]) for name in names}


def quality(encoder: Any, name: str, test: list[Any]) -> dict[str, float]:
    """Findings -> impression metrics on the held-out test reports, pooled over sources."""
    from eval.retrieval.findings_impression import DenseRanker, findings_to_impression

    scores = findings_to_impression(test, DenseRanker(name=name, encoder=encoder))["all"]
    return {"n": scores["n"], "match@5": scores["match@5"], "mrr@10": scores["mrr@10"]}


def measure(encoder_ref: str, texts: list[str], test: list[Any], thread_counts: list[int]) -> list[dict[str, Any]]:
    """One row per thread count and backend for one encoder, torch first at each thread count (the reference).

    Quality is computed once per backend (at the last thread count): the vectors do not depend on threads (cosine
    to torch is reported per run and shows it).
    """
    from retriever.encoders.encoder import load_encoder

    batches = {backend: TORCH_BATCH if backend == "torch" else MAX_BATCH for backend in BACKENDS}
    rows: list[dict[str, Any]] = []
    scores: dict[str, dict[str, float]] = {}
    for threads in thread_counts:
        limit_threads(threads)  # torch's threads; ONNX Runtime sessions take theirs at load
        loaded: dict[str, tuple[Any, float]] = {}
        for backend in BACKENDS:
            started = time.perf_counter()
            encoder = load_encoder(encoder_ref, backend=backend, threads=threads)
            encoder.encode(["warm-up"])  # a fast backend exports (first use only) and opens its session here
            loaded[backend] = (encoder, time.perf_counter() - started)
        timed = throughput({backend: (loaded[backend][0], batches[backend]) for backend in BACKENDS}, texts)
        if threads == thread_counts[-1]:
            scores = {b: quality(encoder, f"{encoder_ref}/{b}", test) for b, (encoder, _) in loaded.items()}
        reference = timed["torch"][0]
        for backend, (_, ready_s) in loaded.items():
            vectors, per_s = timed[backend]
            cosine = np.sum(vectors * reference, axis=1)
            rows.append(
                {
                    "encoder": encoder_ref,
                    "threads": threads,
                    "backend": backend,
                    "batch_size": batches[backend],
                    "reports_per_s": round(per_s, 2),
                    "load_s": round(ready_s, 2),
                    "cosine_to_torch_min": round(float(cosine.min()), 4),
                    "cosine_to_torch_mean": round(float(cosine.mean()), 4),
                }
            )
            print(rows[-1], flush=True)
    for row in rows:
        base = next(r for r in rows if r["threads"] == row["threads"] and r["backend"] == "torch")
        row.update(scores[row["backend"]])
        row["speedup"] = round(row["reports_per_s"] / base["reports_per_s"], 2)
        row["match@5_delta"] = round(row["match@5"] - scores["torch"]["match@5"], 4)
        row["equal_quality"] = row["match@5_delta"] >= -QUALITY_TOLERANCE
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = results.parser(__doc__)
    parser.add_argument("--encoders", default=",".join(ENCODERS))
    parser.add_argument("--texts", type=int, default=256, help="full reports encoded for throughput")
    parser.set_defaults(threads=os.cpu_count() or 1)
    args = results.parse_args(parser, argv)
    thread_counts = sorted({1, args.threads})
    reports = shared_reports_or_skip()
    if reports is None:
        return 0
    test = test_split(reports)
    texts = sample_texts(reports, 8 if args.quick else args.texts)
    if args.quick:
        test = test[:20]
    rows = [row for ref in args.encoders.split(",") for row in measure(ref, texts, test, thread_counts)]
    data = {
        "texts": len(texts),
        "test_reports": len(test),
        "quality_tolerance": QUALITY_TOLERANCE,
        "thread_counts": thread_counts,
        "rows": rows,
    }
    results.store_run("embedding", data, args, "eval.perf.embedding", argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
