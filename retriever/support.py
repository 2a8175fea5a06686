"""A second stage without a model: does a hit say things the query does not?

Why: a findings -> impression search ranks an impression by how much of the query it matches (BM25, cosine), not
by what it adds. An impression that repeats the findings and then asserts one more finding ("... Right lower lobe
consolidation.") or names another device scores like its own report: error discrimination of the product default
was 0.705 on the dev split (eval/results/rerank_dev.md), and the cross-encoder that fixes part of it costs ~0.4 s a
search on 2 cores. An impression is a summary of its findings, so its words should be found in them: this stage
counts, over the hit's distinct BM25 terms (negation-aware, retriever/bm25_index.tokenize, so "no effusion" in the
findings does not support "effusion" in the hit), the inverse document frequency of those the query has minus that
of those it has not. Rare unsupported words weigh most; a stopword-like term weighs little.

It is a `SecondStage` (retriever/rerank.py): mixed with the first stage's score at a weight over the top hits, and
only for queries of `MIN_QUERY_WORDS` words or more: a resident's short query says less than any report, so a hit's
extra words there are no sign of a wrong hit. Measured against not doing it by
`python -m eval.rerank_benchmark --reranker support` (eval/results/support_dev.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from retriever.bm25_index import tokenize
from retriever.rerank import Idf, SecondStage

#: The name that selects this stage wherever a re-ranker is named (`--reranker support`, RADSEARCH_RERANKER).
NAME = "support"
#: Its share of a re-scored hit's score (the first stage has the rest).
WEIGHT = 0.5
#: Queries of fewer words are left alone: the 5th percentile of the train-split findings' word counts (15, as
#: recorded by eval/results/rerank_dev_gated.md), read off the training data, not tuned to a split.
MIN_QUERY_WORDS = 15


class SupportCheck(SecondStage):
    """Scores each hit by the query's support for its words (module docstring); stateless and thread-safe."""

    name = NAME

    def __init__(self, weight: float = WEIGHT, min_query_words: int = MIN_QUERY_WORDS) -> None:
        super().__init__(weight)
        self.min_query_words = min_query_words

    def relevance(self, query: str, texts: Sequence[str], idf: Idf | None) -> np.ndarray:
        """Sum over each text's distinct terms of idf, + for a term the query has, - for one it has not. Without
        `idf` (a caller with no index), every term weighs 1."""
        asked = set(tokenize(query))
        values = []
        for text in texts:
            terms = sorted(set(tokenize(text)))
            weights = idf(terms) if idf is not None and terms else np.ones(len(terms))
            signs = np.array([1.0 if term in asked else -1.0 for term in terms])
            values.append(float(np.dot(weights, signs)) if terms else 0.0)
        return np.asarray(values, dtype=np.float64)
