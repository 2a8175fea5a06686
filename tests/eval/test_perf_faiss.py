"""FAISS index choice by size, IVF-PQ search with ID filters, and the synthetic corpus generator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from eval.perf.synthetic import nn_cosine_mean, synthetic_vectors
from retriever.index import vectors as faiss_index
from retriever.index.vectors import (
    build_vector_index,
    index_kind,
    kind_of,
    read_vector_index,
    search_vectors,
    write_vector_index,
)


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    """Clustered unit vectors around 200 random 'real' ones (the benchmark's generator)."""
    rng = np.random.default_rng(1)
    real = rng.standard_normal((200, 32)).astype(np.float32)
    real /= np.linalg.norm(real, axis=1, keepdims=True)
    return synthetic_vectors(real, 6000, seed=2)


def test_kind_is_chosen_by_size() -> None:
    assert index_kind(1) == "flat"
    assert index_kind(faiss_index.EXACT_LIMIT) == "flat"
    assert index_kind(faiss_index.EXACT_LIMIT + 1) == "ivfpq"
    assert index_kind(10_000_000) == "ivfpq"
    assert faiss_index.ivf_lists(1_000_000) == 2048 and faiss_index.ivf_lists(10) == 16
    assert faiss_index.pq_factory(384, 1_000_000) == "IVF2048,PQ96x4fs,Refine(SQ8)"


def test_small_corpus_is_exact(vectors: np.ndarray) -> None:
    index = build_vector_index(vectors[:500], np.arange(500))
    assert kind_of(index) == "flat"
    assert search_vectors(index, vectors[7], 1)[0][0] == 7


@pytest.mark.parametrize("kind", ["ivfpq", "hnsw"])
def test_ann_kinds_find_the_exact_neighbours(vectors: np.ndarray, kind: str) -> None:
    ids = np.arange(len(vectors)) * 3 + 11  # external ids unlike internal positions
    index = build_vector_index(vectors, ids, kind)
    assert kind_of(index) == kind
    exact = vectors[:50] @ vectors.T
    recall = []
    for row in range(50):
        truth = set(ids[np.argsort(-exact[row])[:10]].tolist())
        recall.append(len(truth & {i for i, _ in search_vectors(index, vectors[row], 10)}) / 10)
    assert np.mean(recall) > 0.9


@pytest.mark.parametrize("kind", ["flat", "ivfpq", "hnsw"])
def test_id_filters_keep_their_meaning(vectors: np.ndarray, kind: str, tmp_path: Path) -> None:
    """A filter names external ids; IVF-PQ's nested refine parameters must see them translated too."""
    ids = np.arange(len(vectors)) * 3 + 11
    path = tmp_path / f"{kind}.faiss"
    write_vector_index(build_vector_index(vectors, ids, kind), path)
    index = read_vector_index(path)  # a saved index keeps its kind and filtering
    allowed = ids[np.argsort(-(vectors @ vectors[0]))[:40]]  # the query's own neighbourhood
    hits = search_vectors(index, vectors[0], 5, allowed)
    assert hits and {i for i, _ in hits} <= set(allowed.tolist())
    assert hits[0][0] == ids[0]
    assert search_vectors(index, vectors[0], 5, np.array([], dtype=np.int64)) == []


def test_synthetic_vectors_are_unit_clustered_and_keep_the_real_ones() -> None:
    rng = np.random.default_rng(0)
    real = rng.standard_normal((100, 16)).astype(np.float32)
    real /= np.linalg.norm(real, axis=1, keepdims=True)
    out = synthetic_vectors(real, 1000)
    assert out.shape == (1000, 16) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(out[:100], real)
    # Perturbed copies sit near a real vector, far closer than random unit vectors in 16-d would.
    assert (out[100:] @ real.T).max(axis=1).mean() > 0.8
    assert nn_cosine_mean(out) > nn_cosine_mean(real)
