"""FAISS vectors for one report field: exact inner product for small corpora, HNSW above ~1e5 vectors.

Vectors are stored under the SQLite row ids of their reports (IndexIDMap2), so a filter on report metadata becomes
a FAISS ID selector and a field missing from some reports simply has fewer vectors.
"""

from __future__ import annotations

from pathlib import Path

import faiss
import numpy as np

#: Above this many vectors an HNSW graph replaces exact search (see DESIGN.md; measured by the benchmark).
EXACT_LIMIT = 100_000
HNSW_M = 32
HNSW_EF_SEARCH = 128


def build_vector_index(vectors: np.ndarray, ids: np.ndarray) -> faiss.Index:
    """Index unit vectors under int64 ids; the structure is chosen by size."""
    dims = vectors.shape[1]
    if len(vectors) > EXACT_LIMIT:
        inner = faiss.IndexHNSWFlat(dims, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        inner.hnsw.efConstruction = 200
    else:
        inner = faiss.IndexFlatIP(dims)
    index = faiss.IndexIDMap2(inner)
    if len(vectors):
        index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), ids.astype(np.int64))
    return index


def search_vectors(
    index: faiss.Index, query: np.ndarray, k: int, allowed: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """Top-k (id, cosine) for one query vector, restricted to `allowed` ids when given."""
    if index.ntotal == 0 or k <= 0:
        return []
    inner = faiss.downcast_index(index.index)
    params = None
    if allowed is not None:
        if len(allowed) == 0:
            return []
        selector = faiss.IDSelectorBatch(allowed.astype(np.int64))
        params = (
            faiss.SearchParametersHNSW(sel=selector, efSearch=max(HNSW_EF_SEARCH, k))
            if isinstance(inner, faiss.IndexHNSW)
            else faiss.SearchParameters(sel=selector)
        )
    elif isinstance(inner, faiss.IndexHNSW):
        params = faiss.SearchParametersHNSW(efSearch=max(HNSW_EF_SEARCH, k))
    scores, ids = index.search(query.reshape(1, -1).astype(np.float32), min(k, index.ntotal), params=params)
    return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]


def write_vector_index(index: faiss.Index, path: Path) -> None:
    faiss.write_index(index, str(path))


def read_vector_index(path: Path) -> faiss.Index:
    """Read an index file; FAISS errors (truncated, corrupt) surface as RuntimeError for the caller to explain."""
    return faiss.read_index(str(path))
