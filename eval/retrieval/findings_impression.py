"""Findings -> impression retrieval: the RadSearch paper's intrinsic test of a report encoder.

Query = a report's findings; corpus = the unique impression texts of the reports evaluated; a hit when the
report's own impression text comes back in the top k. Metrics as in the literature: match@k (= accuracy@k, share
of queries with a hit in the top k) and MRR@10 (mean of 1/rank of the hit, 0 when it is below rank 10).

Because one impression ("No acute cardiopulmonary abnormality.") can belong to hundreds of reports, the same
metrics are also given on the subset of reports whose impression is not one of the most frequent ones, so that
boilerplate normals cannot carry the score. Any encoder reference or BM25 can be evaluated (`make_ranker`), always
through the product's own search (`IndexRanker`: a `ReportIndex` over the corpus, searched as `assistant search`
does), so what users get from their index is what is measured.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from retriever.reports.record import Field, Report
from retriever.search.methods import Method, checked_method
from retriever.search.rerank import Reranker, SecondStage, split_weight

if TYPE_CHECKING:
    from retriever.encoders.encoder import Encoder
    from retriever.index.report_index import ReportIndex

K_VALUES = (1, 5, 10)
#: What a ranker reference ends with to name a re-ranker: `hybrid-weighted:ENCODER+rerank=NAME`.
RERANK_SUFFIX = "+rerank="
MRR_K = 10
#: How many of the most frequent impressions the "rare" subset leaves out (as in the issue and the paper's spirit).
FREQUENT = 20
#: Labels that mean "nothing found" (Open-i's MeSH "normal"; CheXpert-style "No Finding").
NORMAL_LABELS = frozenset({"normal", "no finding", "no findings"})
_NORMAL_IMPRESSION = re.compile(
    r"^\W*(?:normal|unremarkable|negative|no acute|no active|no evidence|no significant|no radiographic|"
    r"no abnormalit|no interval change|stable (?:exam|examination|chest))|\bwithin normal limits\W*$",
    re.IGNORECASE,
)


def is_abnormal(report: Report) -> bool:
    """Whether a report describes disease: a label other than "normal" when it has labels (Open-i, CT-RATE,
    MedPix's teaching cases), otherwise an impression that does not open with a normal statement (MTSamples,
    unlabelled CT-RATE reports). The abnormal subset is the one where retrieval has to carry a diagnosis."""
    if report.labels:
        return any(label.strip().lower() not in NORMAL_LABELS for label in report.labels)
    return not _NORMAL_IMPRESSION.search(report.impression)


class Ranker(Protocol):
    """Ranks corpus texts for each query; returns the top-k corpus positions per query, best first. `field` is the
    report field the corpus texts are (impression, report...)."""

    name: str

    def rank(self, queries: list[str], corpus: list[str], k: int, field: Field = "impression") -> list[list[int]]: ...


class _CachedVectors:
    """An encoder backend that remembers each text's vector for the run: benchmarks rank the same reports per source
    and pooled, and encoding is the cost. Queries are encoded in one batch before they are searched one by one (a
    text's vector does not depend on its batch: the int8 encoder runs each text alone, torch up to float rounding)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.vectors: dict[str, np.ndarray] = {}
        self.name, self.version, self.model = engine.name, engine.version, engine.model
        self.dims, self.max_seq_length = engine.dims, engine.max_seq_length

    def encode(self, texts: list[str], batch_size: int = 64, *, progress: bool = False) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if missing:
            self.vectors.update(zip(missing, self.engine.encode(missing, batch_size, progress=progress), strict=True))
        return np.stack([self.vectors[t] for t in texts])

    def count_tokens(self, text: str) -> int:
        return self.engine.count_tokens(text)


class _NoVectors:
    """The backend of a BM25-only ranker: `ReportIndex.build` encodes every field, but the `bm25` method never reads
    the vectors, so none are computed (random unit vectors, so that a large corpus's IVF-PQ still trains)."""

    name, version, model, dims, max_seq_length = "none", 0, None, 8, 512

    def encode(self, texts: list[str], batch_size: int = 64, *, progress: bool = False) -> np.ndarray:
        vectors = np.random.default_rng(0).standard_normal((len(texts), self.dims)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def cached_encoder(encoder: Encoder) -> Encoder:
    """`encoder` with its vectors remembered by text (shared by every ranker given the returned encoder)."""
    from retriever.encoders.encoder import Encoder

    if isinstance(encoder.engine, _CachedVectors):
        return encoder
    return Encoder(encoder.name, encoder.location, _CachedVectors(encoder.engine))


@dataclass
class IndexRanker:
    """Ranks through the product's own search: a `ReportIndex` built in memory over the corpus texts and searched
    with `method` (dense, bm25, hybrid, hybrid-weighted), so the numbers are those of a user's index: the FAISS
    structure `ReportIndex.build` picks for the corpus size (exact, IVF-PQ above faiss_index.EXACT_LIMIT), BM25 with
    negation scopes, the product's fusion, and hits that contradict the query ranked last (negation_rerank).

    Each corpus text is one report whose id is its position, so hits map back to the positions the metrics expect.
    `dense_weight` (eval.retrieval.fusion_sweep's) replaces retriever.search.fusion.DENSE_WEIGHT in the index's weighted
    mix.
    """

    name: str
    method: Method = "dense"
    encoder: Encoder | None = None
    dense_weight: float | None = None
    #: A second stage (retriever/search/rerank.py) the index re-scores its top hits with, as `--reranker` does.
    reranker: SecondStage | None = None

    def __post_init__(self) -> None:
        from retriever.encoders.encoder import Encoder

        checked_method(self.method)
        if self.method == "bm25":
            self.encoder = Encoder("bm25", "bm25", _NoVectors())
        elif self.encoder is None:
            raise ValueError(f"the {self.method} method needs an encoder")
        else:
            self.encoder = cached_encoder(self.encoder)

    def index(self, corpus: list[str], field: Field = "impression") -> ReportIndex:
        """A ReportIndex over `corpus`, one report per text (id = position) holding it in `field`."""
        from retriever.index.report_index import ReportIndex

        key = "full_text" if field == "report" else field
        reports = [Report(str(position), **{key: text}) for position, text in enumerate(corpus)]
        index = ReportIndex.build(reports, self.encoder, (field,), batch_size=64)
        weight = {} if self.dense_weight is None else {"dense_weight": self.dense_weight}
        return index.with_search(second_stage=self.reranker, **weight)

    def rank(self, queries: list[str], corpus: list[str], k: int, field: Field = "impression") -> list[list[int]]:
        if not queries or not corpus:
            return [[] for _ in queries]
        index = self.index(corpus, field)
        cleaned = [_cleaned(query) for query in queries]
        if self.method != "bm25":  # one batch: the index then finds each query's vector in the cache
            self.encoder.encode([text for text in cleaned if text], batch_size=64)
        ranked = []
        for query, text in zip(queries, cleaned, strict=True):
            if not text:  # nothing to search for (`assistant search` refuses it): nothing found
                ranked.append([])
            else:
                ranked.append([int(hit.report.id) for hit in index.search(query, field, k, method=self.method)])
        return ranked


def _cleaned(query: str) -> str:
    """The query as the index searches it (retriever.search.query.clean_query), "" when nothing is left."""
    from retriever.search.query import EmptyQueryError, clean_query

    try:
        return clean_query(query)
    except EmptyQueryError:
        return ""


def split_rerank(ref: str) -> tuple[str, str | None]:
    """`RANKER+rerank=NAME` -> ("RANKER", "NAME"): the ranker with a re-ranker as second stage; else (ref, None)."""
    base, marker, name = ref.partition(RERANK_SUFFIX)
    if marker and (not name or "+" in name):
        raise ValueError(f"{ref!r}: the re-ranker goes last, as RANKER{RERANK_SUFFIX}NAME")
    return (base, name) if marker else (ref, None)


class MemoReranker(Reranker):
    """A re-ranker that scores each (query, text) pair once per run: benchmarks search the same queries against
    the same candidates at several weights."""

    def __init__(self, ref: str) -> None:
        super().__init__(ref)
        self._memo: dict[tuple[str, str], float] = {}

    def scores(self, query: str, texts: Sequence[str], batch_size: int = 16) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if (query, t) not in self._memo))
        for text, value in zip(missing, super().scores(query, missing, batch_size), strict=True):
            self._memo[(query, text)] = float(value)
        return np.asarray([self._memo[(query, t)] for t in texts], dtype=np.float32)


#: The support check without its adjacent term pairs: what the pairs add is measured against it
#: (`python -m eval.robustness.rerank_benchmark --reranker support-words`).
SUPPORT_WORDS = "support-words"


@lru_cache(maxsize=2)
def _loaded_reranker(name: str) -> SecondStage:
    """One loaded re-ranker per name and run, its scores remembered (MemoReranker); `support` is the model-free
    support check (retriever/search/support.py) at its own weight and gate, `support-words` the same on single terms."""
    from retriever.search import support

    if name in (support.NAME, SUPPORT_WORDS):
        return support.SupportCheck(pairs=name == support.NAME)
    return MemoReranker(name)


#: What ends a benchmark's re-ranker reference to gate it by query length: `NAME@0.2:15` re-scores only queries of
#: 15 words or more (Reranker.gated).
GATE_MARK = ":"


def split_gate(ref: str) -> tuple[str, int | None]:
    """`...NAME@0.2:15` -> ("...NAME@0.2", 15); a reference without a gate -> (ref, None)."""
    head, marker, gate = ref.rpartition(GATE_MARK)
    return (head, int(gate)) if marker and gate.isdigit() else (ref, None)


def reranker_for(ref: str) -> SecondStage:
    """The re-ranker `NAME`, `NAME@WEIGHT` (retriever.search.rerank.split_weight) or `NAME@WEIGHT:MIN_WORDS` names:
    every weight and gate of one name shares the loaded model and its remembered scores, so a sweep scores each (query,
    text) pair once. A weight or gate left out is the stage's own."""
    head, gate = split_gate(ref)
    name, weight = split_weight(head)
    loaded = _loaded_reranker(name)
    stage = loaded if weight is None else loaded.weighted(weight)
    return stage if gate is None else stage.gated(gate)


def make_ranker(ref: str, backend: str = "torch") -> Ranker:
    """`bm25`; an encoder reference (registry name, trained model name, folder or hub id); or
    `hybrid:ENCODER` / `hybrid-weighted:ENCODER` for BM25 fused with that encoder; any of them may end with
    `+rerank=NAME` (a re-ranker trained by `assistant train-reranker` as second stage). `backend` runs the encoder
    (retriever.encoders.backends.BACKENDS; `assistant index` builds with retriever.encoders.backends.INDEX_BACKEND)."""
    base, rerank = split_rerank(ref)
    reranker = reranker_for(rerank) if rerank else None
    if base.lower() == "bm25":
        return IndexRanker(ref, method="bm25", reranker=reranker)
    from retriever.encoders.encoder import load_encoder
    from retriever.search.methods import split_fused_spec

    method, encoder_ref = split_fused_spec(base)
    return IndexRanker(ref, method=method, encoder=load_encoder(encoder_ref, backend=backend), reranker=reranker)


def DenseRanker(name: str, encoder: Encoder) -> IndexRanker:  # noqa: N802 (the name eval/perf/embedding.py uses)
    """The dense method over `encoder`."""
    return IndexRanker(name, method="dense", encoder=encoder)


def rank_of(gold: int, ranked: Sequence[int]) -> int | None:
    """1-based rank of `gold` in a ranked list, None when it was not retrieved."""
    for position, item in enumerate(ranked, start=1):
        if item == gold:
            return position
    return None


def match_at_k(ranks: Sequence[int | None], k: int) -> float:
    """Share of queries whose gold item is in the top k (accuracy@k)."""
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def mrr_at_k(ranks: Sequence[int | None], k: int = MRR_K) -> float:
    """Mean reciprocal rank, counting a gold item below rank k as 0."""
    return sum(1 / r for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def summarize(ranks: Sequence[int | None]) -> dict[str, float]:
    """n, match@1/5/10 and MRR@10 for a list of gold ranks."""
    scores: dict[str, float] = {"n": len(ranks)}
    scores |= {f"match@{k}": round(match_at_k(ranks, k), 4) for k in K_VALUES}
    scores[f"mrr@{MRR_K}"] = round(mrr_at_k(ranks, MRR_K), 4)
    return scores


def frequent_impressions(impressions: Sequence[str], top: int = FREQUENT) -> set[str]:
    """The `top` most frequent impression texts that occur more than once (a corpus of unique impressions has
    none: leaving out 20 arbitrary singletons would only add noise)."""
    counts = Counter(impressions)
    return {text for text, count in counts.most_common(top) if count > 1}


def findings_to_impression(
    reports: Sequence[Report], ranker: Ranker, top_frequent: int = FREQUENT, per_query: bool = False
) -> dict:
    """Metrics over all reports with both sections, over those whose impression is not a frequent one, and over the
    abnormal ones (`is_abnormal`); the corpus is always all the set's impressions. With `per_query`, each query's
    report id, gold rank and abnormal flag are kept too, so two rankers can be compared pairwise (McNemar)."""
    usable = [r for r in reports if r.findings.strip() and r.impression.strip()]
    golds = [r.impression.strip() for r in usable]
    corpus = list(dict.fromkeys(golds))
    position = {text: n for n, text in enumerate(corpus)}
    k = max(*K_VALUES, MRR_K)
    ranked = ranker.rank([r.findings for r in usable], corpus, k, "impression") if usable else []
    ranks = [rank_of(position[gold], row) for gold, row in zip(golds, ranked, strict=True)]
    frequent = frequent_impressions(golds, top_frequent)
    rare = [rank for gold, rank in zip(golds, ranks, strict=True) if gold not in frequent]
    flags = [is_abnormal(r) for r in usable]
    abnormal = [rank for flag, rank in zip(flags, ranks, strict=True) if flag]
    result = {
        "ranker": ranker.name,
        "corpus_impressions": len(corpus),
        "all": summarize(ranks),
        f"without_top{top_frequent}_impressions": summarize(rare),
        "abnormal": summarize(abnormal),
    }
    if per_query:
        result["per_query"] = {
            "id": [r.id for r in usable],
            "rank": ranks,
            "abnormal": flags,
        }
    return result
