"""Whether new vectors still fit the quantizer an IVF-PQ index was trained on (drift of a growing index).

`assistant update` adds vectors to the trained quantizer without retraining it. That stays good while new reports
resemble the ones it was trained on; reports of another kind (a new site's templates, another language, a new
modality) land far from every centroid, their product-quantized residuals are coarse, and recall suffers.

The statistic: a vector's squared distance to the centroid of the inverted list IVF assigns it (the residual the
product quantizer encodes), averaged over a batch, divided by the same mean over vectors of the build that were not
in the training sample (`baseline`, recorded in the manifest as `quantizer_fit`). In-distribution batches give ~1.0;
DRIFT_WARN is where eval/perf/ingest.py measured recall@10 of the grown index starting to fall (eval/results/ingest.md,
"Drift").
"""

from __future__ import annotations

from collections.abc import Callable

import faiss
import numpy as np

#: Ratio of a batch's mean residual to the build's above which `assistant update` warns. Measured (eval/results/
#: ingest.md, 50,000 vectors, nprobe at 1M's share of lists): in-distribution batches 1.00-1.04 (recall@10 of queries
#: near them 0.99); 1.50: 0.985 against 0.995 retrained, the first level a point below it; 2.03: 0.96; 2.79: 0.92,
#: under the 0.95 bar. 1.4 warns before recall falls a point, well clear of in-distribution noise.
DRIFT_WARN = 1.4
#: Fewer new vectors than this are not judged: the mean of a handful of reports is too noisy to call drift.
MIN_VECTORS = 100
#: Vectors sampled to estimate a baseline (the mean's standard error is then well under 1%).
SAMPLE = 5_000


def is_ivf(index: faiss.Index) -> bool:
    try:
        faiss.extract_index_ivf(index)
    except RuntimeError:
        return False
    return True


def mean_residual(index: faiss.Index, vectors: np.ndarray) -> float:
    """Mean squared distance of `vectors` to the centroids of the inverted lists `index` (IVF) assigns them."""
    ivf = faiss.extract_index_ivf(index)
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    _, lists = ivf.quantizer.search(vectors, 1)
    centroids = ivf.quantizer.reconstruct_batch(lists[:, 0])
    return float(np.mean(np.sum((vectors - centroids) ** 2, axis=1)))


def held_out_baseline(
    index: faiss.Index, count: int, training: np.ndarray, vectors_at: Callable[[np.ndarray], np.ndarray]
) -> float:
    """The baseline of a freshly trained index: the mean residual of a sample of its `count` vectors that were not
    among the `training` positions (all of them if every vector trained); `vectors_at(sorted positions)` reads them."""
    held_out = np.setdiff1d(np.arange(count), training) if len(training) < count else training
    sample = np.random.default_rng(1).choice(held_out, size=min(SAMPLE, len(held_out)), replace=False)
    return round(mean_residual(index, vectors_at(np.sort(sample))), 6)


def stored_baseline(index: faiss.Index, *, seed: int = 0) -> float:
    """A baseline for an index built without one recorded: the mean residual of a sample of its stored vectors
    (their SQ8 re-ranking reconstructions, within about 1% of the originals)."""
    inner = index.index if isinstance(index, faiss.IndexIDMap2) else index
    rows = np.random.default_rng(seed).choice(inner.ntotal, size=min(SAMPLE, inner.ntotal), replace=False)
    return mean_residual(index, inner.reconstruct_batch(np.sort(rows)))


def drift_ratio(index: faiss.Index, vectors: np.ndarray, baseline: float) -> float:
    """How far `vectors` sit from their centroids relative to the build's vectors (1.0: just as close)."""
    return mean_residual(index, vectors) / baseline if baseline > 0 else 1.0


def drift_warning(ratio: float, count: int, field_name: str, retrain_command: str) -> str | None:
    """The message `assistant update` prints when a batch has drifted, or None."""
    if count < MIN_VECTORS or ratio <= DRIFT_WARN:
        return None
    return (
        f"the {count:,} new {field_name} vectors sit {ratio:.2f}x as far from their IVF-PQ centroids as the vectors "
        f"the index was trained on (warned above {DRIFT_WARN}): they differ from the indexed reports and search "
        f"recall for them may suffer (eval/results/ingest.md, Drift). Retrain the quantizer: {retrain_command}"
    )
