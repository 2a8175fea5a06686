"""Realistic synthetic report embeddings, to measure FAISS at sizes beyond the real corpus.

Uniform random unit vectors are a poor stand-in: in high dimensions they are all nearly orthogonal, so every ANN
index looks either perfect or hopeless. Real report embeddings are clustered (boilerplate normals, common findings)
and anisotropic (a few directions carry most of the variance). The generator keeps both properties:

    x = normalize(c + noise * e / |e|),   c = a real embedding drawn at random,
    e = sum_j w_j (r_j - mean),           w ~ N(0, 1), r_j = RANK real embeddings drawn per chunk

so every synthetic vector lies in a cloud around a real report, and the cloud's shape follows the covariance of the
real embeddings (e is Gaussian with a low-rank version of their covariance). With NOISE = 0.5, a synthetic vector's
cosine to its real centre is about 0.9, the range of a real report's nearest neighbour in the shared corpus
(both are reported by eval/perf/search.py as `nn_cosine_mean`). The real vectors themselves come first.
"""

from __future__ import annotations

import numpy as np

NOISE = 0.5
RANK = 256
_CHUNK = 50_000


def normalize(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)


def synthetic_vectors(real: np.ndarray, count: int, *, noise: float = NOISE, seed: int = 0) -> np.ndarray:
    """`count` float32 unit vectors: the real ones first, then perturbed copies (see the module docstring)."""
    rng = np.random.default_rng(seed)
    real = np.asarray(real, dtype=np.float32)
    out = np.empty((count, real.shape[1]), dtype=np.float32)
    head = min(count, len(real))
    out[:head] = real[:head]
    centred = real - real.mean(axis=0)
    for start in range(head, count, _CHUNK):
        size = min(_CHUNK, count - start)
        centres = real[rng.integers(len(real), size=size)]
        basis = centred[rng.integers(len(real), size=RANK)]
        directions = rng.standard_normal((size, RANK), dtype=np.float32) @ basis
        directions = normalize(directions) * noise
        out[start : start + size] = normalize(centres + directions)
    return out


def nn_cosine_mean(vectors: np.ndarray, *, sample: int = 1000, seed: int = 0) -> float:
    """Mean cosine of a vector to its nearest other vector, over a sample: how clustered the set is."""
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(vectors), size=min(sample, len(vectors)), replace=False)
    best = np.full(len(rows), -1.0, dtype=np.float32)
    for start in range(0, len(vectors), _CHUNK):
        block = vectors[start : start + _CHUNK]
        scores = vectors[rows] @ block.T
        own = rows[(rows >= start) & (rows < start + len(block))]
        scores[np.isin(rows, own), own - start] = -1.0  # not itself
        best = np.maximum(best, scores.max(axis=1))
    return round(float(best.mean()), 4)
