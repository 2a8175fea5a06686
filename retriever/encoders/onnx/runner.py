"""Run an exported encoder with ONNX Runtime: length-sorted micro-batches, pooling and L2 normalization in numpy.

Why length-sorted: texts of similar length share a batch, so little compute is spent on padding. Why small batches:
on CPU, bigger batches run slower per text (activations leave the cache), see MAX_BATCH. The session every runner
uses is made here alone (session_for), so what the benchmarks measure is what the product runs.

Why an int8 graph runs each text alone: its activations are quantized dynamically, with one scale per tensor, i.e.
per batch, so a text's vector changed with its batch neighbours by up to ~0.01 in a coordinate. Enough to reorder
near-ties: a benchmark that encoded its queries in one batch ranked 3 of 24 MTSamples test queries otherwise than
`assistant search`, which encodes one query, and an index updated or built in shards differed from one built whole.
Run alone, a text's vector is a function of the text. That costs throughput, partly won back by running texts side
by side on single-threaded runs of one session (`parallel_runs`): the int8 rows of eval/results/performance.md
(eval/perf/embedding.py) after 2026-11-27 are this runner; correctness was put before the batch speed-up.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from retriever.encoders.onnx.spec import RunnerSpec

#: Largest micro-batch: on CPU, bigger batches run slower per text (activations leave the cache). Measured when
#: choosing it (MiniLM int8, 1 thread, findings sections): 86-92 texts/s at batch 1-8, 76 at 16, 45 at 64.
MAX_BATCH = 8
#: Session-time fusions left out. SkipLayerNormalization (residual add + layer norm in one node) runs several times
#: slower per element than the Add and LayerNormalization it replaces on this AVX2 CPU, ~12% of MiniLM's int8 forward
#: pass; so neither the export's optimizer (retriever/encoders/onnx/export.py) nor the session makes it (measured by
#: eval/perf/fusions.py).
UNFUSED = ("SkipLayerNormFusion",)
PROVIDERS = ["CPUExecutionProvider"]


def default_threads() -> int:
    """OMP_NUM_THREADS when set (the knob torch follows too), else 0: ONNX Runtime's own choice, one thread per
    physical core, which is torch's default as well. Read without importing torch (the fast path never loads it)."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isdigit() and int(value) > 0 else 0


def session_options(threads: int | None, options: Any = None) -> Any:
    """ONNX Runtime session options as every runner sets them: all graph optimizations, `threads` intra-op threads
    (None: default_threads()), one inter-op thread. Set on `options` when given (a benchmark's own, e.g. profiling)."""
    import onnxruntime as ort

    options = options or ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads or default_threads()
    options.inter_op_num_threads = 1
    return options


def parallel_runs(threads: int | None) -> int:
    """How many single-text runs go side by side: `threads` when given, else default_threads(), else the CPUs this
    process may use (one run per core, as ONNX Runtime's own choice of intra-op threads)."""
    if threads or default_threads():
        return threads or default_threads()
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def session_for(path: Path, threads: int | None, options: Any = None) -> Any:
    """The session every runner uses: session_options(threads, options), without the UNFUSED fusions."""
    import onnxruntime as ort

    return ort.InferenceSession(
        str(path), session_options(threads, options), providers=PROVIDERS, disabled_optimizers=list(UNFUSED)
    )


@dataclass
class OnnxRunner:
    """Encode texts with an exported model: length-sorted batches, pooling and L2 normalization in numpy."""

    session: Any
    spec: RunnerSpec
    input_names: list[str]
    path: Path  # the .onnx file the session runs
    #: Single-text runs side by side on a one-thread session (an int8 graph, module docstring), or 0: batches on a
    #: session of several threads.
    workers: int = 0

    @classmethod
    def open(cls, path: Path, spec: RunnerSpec, *, threads: int | None, per_text: bool = False) -> OnnxRunner:
        """A runner over one .onnx file (`threads` None: default_threads()). `per_text`: every text is run alone
        (dynamically quantized activations, module docstring), `parallel_runs(threads)` at a time."""
        session = session_for(path, 1 if per_text else threads)
        workers = parallel_runs(threads) if per_text else 0
        return cls(session, spec, [i.name for i in session.get_inputs()], path, workers)

    def encode(self, texts: list[str], batch_size: int = MAX_BATCH, *, progress: bool = False) -> np.ndarray:
        """(n, dims) float32 unit vectors, in the order of `texts`; batches hold at most MAX_BATCH texts (one in
        per-text mode, whatever `batch_size` says)."""
        from tqdm import tqdm

        batch_size = 1 if self.workers else max(1, min(batch_size, MAX_BATCH))
        encoded = self.spec.feeds(texts)
        lengths = np.array([len(feed["input_ids"]) for feed in encoded])
        order = np.argsort(-lengths, kind="stable")  # longest first: padding only within similar lengths
        out = np.empty((len(texts), self.spec.dims), dtype=np.float32)
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]

        def run(rows: np.ndarray) -> None:
            width = int(lengths[rows].max())
            feed = {}
            for name in self.input_names:
                array = np.zeros((len(rows), width), dtype=np.int64)
                for i, row in enumerate(rows):
                    values = encoded[row][name]
                    array[i, : len(values)] = values
                feed[name] = array
            hidden = self.session.run(None, feed)[0]
            out[rows] = self._pool(hidden, feed["attention_mask"])

        if self.workers > 1 and len(batches) > 1:  # ONNX Runtime releases the GIL while a run computes
            with ThreadPoolExecutor(self.workers) as pool:
                for _ in tqdm(pool.map(run, batches), total=len(batches), desc="Texts", disable=not progress):
                    pass
        else:
            for rows in tqdm(batches, desc="Batches", disable=not progress):
                run(rows)
        return out

    def _pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.spec.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
