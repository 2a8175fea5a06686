"""Findings -> impression retrieval: the RadSearch paper's intrinsic test of a report encoder.

Query = a report's findings; corpus = the unique impression texts of the reports evaluated; a hit when the
report's own impression text comes back in the top k. Metrics as in the literature: match@k (= accuracy@k, share
of queries with a hit in the top k) and MRR@10 (mean of 1/rank of the hit, 0 when it is below rank 10).

Because one impression ("No acute cardiopulmonary abnormality.") can belong to hundreds of reports, the same
metrics are also given on the subset of reports whose impression is not one of the most frequent ones, so that
boilerplate normals cannot carry the score. Any encoder reference or BM25 can be evaluated (`make_ranker`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from retriever.report import Report

K_VALUES = (1, 5, 10)
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
    """Ranks corpus texts for each query; returns the top-k corpus positions per query, best first."""

    name: str

    def rank(self, queries: list[str], corpus: list[str], k: int) -> list[list[int]]: ...


@dataclass
class DenseRanker:
    """Cosine ranking with a sentence encoder (anything `retriever.encoder.load_encoder` accepts).

    Vectors are cached by text: benchmarks rank the same reports per source and pooled, and encoding is the cost.
    """

    name: str
    encoder: object
    _vectors: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def _encode(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            self._vectors.update(zip(missing, self.encoder.encode(missing, batch_size=64), strict=True))
        return np.stack([self._vectors[t] for t in texts])

    def scored(self, queries: list[str], corpus: list[str], k: int) -> list[list[tuple[int, float]]]:
        scores = self._encode(queries) @ self._encode(corpus).T
        top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return [[(int(i), float(row[i])) for i in ids] for row, ids in zip(scores, top, strict=True)]

    def rank(self, queries: list[str], corpus: list[str], k: int) -> list[list[int]]:
        return _positions(self.scored(queries, corpus, k))


@dataclass
class BM25Ranker:
    """The lexical baseline: BM25 over the impression texts, the project's own tokenizer (negations kept)."""

    name: str = "bm25"

    def scored(self, queries: list[str], corpus: list[str], k: int) -> list[list[tuple[int, float]]]:
        from retriever.bm25_index import BM25Field

        field = BM25Field.build(corpus, np.arange(len(corpus)))
        return [field.search(query, k) for query in queries]

    def rank(self, queries: list[str], corpus: list[str], k: int) -> list[list[int]]:
        return _positions(self.scored(queries, corpus, k))


@dataclass
class HybridRanker:
    """BM25 + a dense ranker fused exactly as the product's `hybrid` / `hybrid-weighted` search methods do
    (same fusion functions, candidate depth and weight), so the benchmark measures what users get."""

    name: str
    dense: DenseRanker
    method: str = "hybrid"
    lexical: BM25Ranker = field(default_factory=BM25Ranker)
    #: None = the product's DENSE_WEIGHT; eval.fusion_sweep sets others.
    dense_weight: float | None = None

    def rank(self, queries: list[str], corpus: list[str], k: int) -> list[list[int]]:
        from retriever.fusion import DENSE_WEIGHT, FUSION_DEPTH, fuse_dense_and_bm25

        depth = max(k, FUSION_DEPTH)
        weight = DENSE_WEIGHT if self.dense_weight is None else self.dense_weight
        pairs = zip(self.dense.scored(queries, corpus, depth), self.lexical.scored(queries, corpus, depth), strict=True)
        return _positions([fuse_dense_and_bm25(self.method, dense, lexical, weight)[:k] for dense, lexical in pairs])


def _positions(scored: list[list[tuple[int, float]]]) -> list[list[int]]:
    return [[position for position, _ in row] for row in scored]


def make_ranker(ref: str) -> Ranker:
    """`bm25`; an encoder reference (registry name, trained model name, folder or hub id); or
    `hybrid:ENCODER` / `hybrid-weighted:ENCODER` for BM25 fused with that encoder."""
    if ref.lower() == "bm25":
        return BM25Ranker()
    from retriever.encoder import load_encoder
    from retriever.methods import split_fused_spec

    method, encoder_ref = split_fused_spec(ref)
    dense = DenseRanker(name=encoder_ref, encoder=load_encoder(encoder_ref))
    return dense if method == "dense" else HybridRanker(name=ref, dense=dense, method=method)


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
    ranked = ranker.rank([r.findings for r in usable], corpus, k) if usable else []
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
