"""FAISS vectors for one report field; the structure is chosen by corpus size from measured latency and recall.

Vectors are stored under the SQLite row ids of their reports (IndexIDMap2), so a filter on report metadata becomes
a FAISS ID selector and a field missing from some reports simply has fewer vectors.

Kinds (eval/perf/search.py measures each at 10k, 100k and 1M 384-d vectors, 1 thread; eval/results/performance.md):
- `flat`: exact inner product, free of tuning. Its scan grows linearly (0.6 ms at 10k, 9 ms at 100k, 85 ms at 1M),
  so it is used up to EXACT_LIMIT vectors only.
- `ivfpq`: inverted lists over 4-bit fast-scan product-quantized codes, re-ranked on 8-bit scalar-quantized
  vectors (faiss `IVF{nlist},PQ{m}x4fs,Refine(SQ8)`). At 1M: 1.6 ms, recall@10 0.97 against exact, 430 MB per
  million vectors, built in under a minute on one core. Needs training, which `build_vector_index` does on the data.
- `hnsw`: graph search. As fast, but at 1M it needs efSearch 512 for recall 0.97, 4x the memory (1.7 GB per
  million) and 6x the build time of IVF-PQ, so it is not chosen; it is still read and searched (older indexes).
"""

from __future__ import annotations

import math
from pathlib import Path

import faiss
import numpy as np

#: Up to this many vectors exact search is used (scan <= ~5 ms); above it IVF-PQ (see the module docstring).
EXACT_LIMIT = 50_000
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 256  # recall@10 0.95 at 1M in the sweep
#: Inverted lists probed per query (at most all of them) and re-ranking depth (k_factor x k candidates): from the
#: sweep, recall@10 >= 0.97 at every size (nprobe 128 / k_factor 50 reaches 0.959 at 1M: too little margin).
IVF_NPROBE = 256
REFINE_K_FACTOR = 100
#: Training sample per inverted list (faiss warns below 39; more only costs build time).
TRAIN_PER_LIST = 64
KINDS = ("flat", "hnsw", "ivfpq")


def index_kind(count: int) -> str:
    """The structure for a corpus of `count` vectors: exact up to EXACT_LIMIT, IVF-PQ above."""
    return "flat" if count <= EXACT_LIMIT else "ivfpq"


def ivf_lists(count: int) -> int:
    """Inverted lists for `count` vectors: the power of two nearest 2*sqrt(n) (faiss guideline: 1-4 sqrt(n))."""
    return 2 ** max(4, round(math.log2(2 * math.sqrt(max(count, 1)))))


def pq_factory(dims: int, count: int) -> str:
    """faiss factory string of the IVF-PQ kind: one 4-bit sub-quantizer per 4 dimensions, SQ8 re-ranking."""
    subquantizers = dims // 4 if dims % 4 == 0 else dims
    return f"IVF{ivf_lists(count)},PQ{subquantizers}x4fs,Refine(SQ8)"


def _inner(kind: str, dims: int, count: int) -> faiss.Index:
    if kind == "flat":
        return faiss.IndexFlatIP(dims)
    if kind == "hnsw":
        index = faiss.IndexHNSWFlat(dims, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        return index
    if kind == "ivfpq":
        return faiss.index_factory(dims, pq_factory(dims, count), faiss.METRIC_INNER_PRODUCT)
    raise ValueError(f"unknown index kind {kind!r}; choose one of {', '.join(KINDS)}")


def new_vector_index(dims: int, count: int, kind: str | None = None) -> faiss.Index:
    """An empty index for `count` vectors under int64 ids; `kind` defaults to the one chosen by size (`index_kind`).
    IVF-PQ still needs `train` on the rows `training_rows` picks."""
    return faiss.IndexIDMap2(_inner(kind or index_kind(count), dims, count))


def training_rows(index: faiss.Index, count: int, *, seed: int = 0) -> np.ndarray:
    """Sorted positions, among `count` vectors in order, of the training sample (none if `index` needs no training).
    Why positions: a streaming build gathers the same sample from its chunk files as an in-memory build takes."""
    if index.is_trained:
        return np.empty(0, dtype=np.int64)
    sample = min(count, TRAIN_PER_LIST * ivf_lists(count))
    return np.sort(np.random.default_rng(seed).choice(count, size=sample, replace=False))


def build_vector_index(vectors: np.ndarray, ids: np.ndarray, kind: str | None = None, *, seed: int = 0) -> faiss.Index:
    """Index unit vectors under int64 ids; `kind` defaults to the one chosen by size (`index_kind`)."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    index = new_vector_index(vectors.shape[1], len(vectors), kind)
    rows = training_rows(index, len(vectors), seed=seed)
    if len(rows):
        index.train(vectors[rows])
    if len(vectors):
        index.add_with_ids(vectors, ids.astype(np.int64))
    return index


#: Vectors re-added per batch when an index without removal support is rebuilt (`remove_vectors`): ~60 MB at 384-d.
_READD_BATCH = 40_000


def remove_vectors(index: faiss.Index, ids: np.ndarray) -> faiss.Index:
    """The index without the vectors stored under `ids` (absent ids are ignored).

    An exact index removes them in place. IVF-PQ and HNSW have no removal in faiss (their refine and graph parts
    would lose alignment), so the remaining vectors are read back from the index's own full-precision part (SQ8
    re-ranking codes, HNSW storage) and added to an empty copy of it: the trained quantizer is kept, nothing is
    retrained, and re-encoding a vector from its SQ8 reconstruction gives the same codes."""
    ids = np.asarray(ids, dtype=np.int64)
    if kind_of(index) == "flat":
        index.remove_ids(faiss.IDSelectorBatch(ids))
        return index
    stored = faiss.vector_to_array(index.id_map)
    empty = faiss.clone_index(index.index)
    empty.reset()
    rebuilt = faiss.IndexIDMap2(empty)
    _readd(index, rebuilt, np.flatnonzero(~np.isin(stored, ids)), stored)
    return rebuilt


def _readd(source: faiss.Index, target: faiss.Index, rows: np.ndarray, stored: np.ndarray) -> None:
    """Add the vectors at positions `rows` of `source` (read back from its own storage) to `target` under their ids
    (`stored`: source's ids in position order), a batch at a time."""
    for start in range(0, len(rows), _READD_BATCH):
        batch = rows[start : start + _READD_BATCH]
        target.add_with_ids(source.index.reconstruct_batch(batch), stored[batch])


def retrain_vector_index(index: faiss.Index, *, seed: int = 0) -> tuple[faiss.Index, np.ndarray]:
    """The same vectors under the same ids in a new index of the kind their count now calls for (`index_kind`), an
    IVF-PQ quantizer trained anew on a sample of them; with the positions (in stored order) it trained on.

    Why: `assistant update` adds to the quantizer trained at build time, which fits reports unlike the indexed ones
    poorly (retriever/index/drift.py), and an exact index that grew past EXACT_LIMIT stays exact. The vectors
    are read back from the index itself (exact storage, SQ8 re-ranking codes, HNSW storage), so nothing is encoded
    again; they are trained on and added a batch at a time, never held whole."""
    stored = faiss.vector_to_array(index.id_map)
    rebuilt = new_vector_index(index.d, len(stored))
    rows = training_rows(rebuilt, len(stored), seed=seed)
    if len(rows):
        rebuilt.train(index.index.reconstruct_batch(rows))
    _readd(index, rebuilt, np.arange(len(stored)), stored)
    return rebuilt, rows


def kind_of(index: faiss.Index) -> str:
    """`flat`, `hnsw` or `ivfpq` for an index made by `build_vector_index` (or read from disk)."""
    inner = faiss.downcast_index(index.index if isinstance(index, faiss.IndexIDMap2) else index)
    if isinstance(inner, faiss.IndexHNSW):
        return "hnsw"
    if isinstance(inner, faiss.IndexRefine):
        return "ivfpq"
    return "flat"


def search_params_defaults() -> dict[str, int]:
    """The query-time settings `search_vectors` uses unless told otherwise."""
    return {"ef_search": HNSW_EF_SEARCH, "nprobe": IVF_NPROBE, "k_factor": REFINE_K_FACTOR}


def search_params(
    index: faiss.Index,
    k: int,
    selector: faiss.IDSelector | None = None,
    *,
    ef_search: int = HNSW_EF_SEARCH,
    nprobe: int = IVF_NPROBE,
    k_factor: int = REFINE_K_FACTOR,
) -> faiss.SearchParameters | None:
    """Per-query parameters for the index's kind, restricted to `selector` (over external ids) when given.
    The keyword defaults are the chosen settings; the benchmark sweeps them.

    IndexIDMap2 translates a top-level selector to its internal ids, but not the one nested in a refine index's
    base parameters, so that one is translated here.
    """
    kind = kind_of(index)
    if kind == "hnsw":
        return faiss.SearchParametersHNSW(sel=selector, efSearch=max(ef_search, k))
    if kind == "ivfpq":
        inner_sel = faiss.IDSelectorTranslated(index.id_map, selector) if selector is not None else None
        base = faiss.SearchParametersIVF(nprobe=nprobe, sel=inner_sel)
        params = faiss.IndexRefineSearchParameters(k_factor=k_factor, base_index_params=base)
        params.sel = selector
        # The nested objects must outlive the call: keep references on the parameters object.
        params._keep = (base, inner_sel, selector)
        return params
    return faiss.SearchParameters(sel=selector) if selector is not None else None


def search_vectors(
    index: faiss.Index, query: np.ndarray, k: int, allowed: np.ndarray | None = None, **tuning: int
) -> list[tuple[int, float]]:
    """Top-k (id, cosine) for one query vector, restricted to `allowed` ids when given (`tuning`: see
    `search_params`)."""
    if index.ntotal == 0 or k <= 0:
        return []
    selector = None
    if allowed is not None:
        if len(allowed) == 0:
            return []
        selector = faiss.IDSelectorBatch(allowed.astype(np.int64))
    params = search_params(index, k, selector, **tuning)
    scores, ids = index.search(query.reshape(1, -1).astype(np.float32), min(k, index.ntotal), params=params)
    return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]


def memory_bytes(index: faiss.Index) -> int:
    """Serialized size of an index: what it takes on disk and, within a few percent, in RAM."""
    return int(faiss.serialize_index(index).size)


def write_vector_index(index: faiss.Index, path: Path) -> None:
    faiss.write_index(index, str(path))


def read_vector_index(path: Path) -> faiss.Index:
    """Read an index file; FAISS errors (truncated, corrupt) surface as RuntimeError for the caller to explain."""
    return faiss.read_index(str(path))
