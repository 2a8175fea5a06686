"""A second stage without a model: does a hit say things the query does not?

Why: a findings -> impression search ranks an impression by how much of the query it matches (BM25, cosine), not
by what it adds. An impression that repeats the findings and then asserts one more finding ("... Right lower lobe
consolidation.") or names another device scores like its own report: error discrimination of the product default
was 0.705 on the dev split (eval/results/rerank_dev.md), and the cross-encoder that fixes part of it costs ~0.4 s a
search on 2 cores. An impression is a summary of its findings, so its words should be found in them: this stage
counts, over the hit's distinct BM25 terms (negation-aware, retriever.negation.tokens.tokenize, so "no effusion" in the
findings does not support "effusion" in the hit), the inverse document frequency of those the query has minus that
of those it has not. Rare unsupported words weigh most; a stopword-like term weighs little.

Words alone miss a hit that moves the query's words around: findings with "right lower lobe opacity" and "small
left effusion" support every word of "left lower lobe opacity". So adjacent term pairs count too (`PAIRS`), each
weighing the smaller of its two terms' idf, and "left lower" is unsupported. On the dev split, each at the weight
the benchmark's rule picks, error discrimination rose from 0.700 to 0.843 with single terms (weight 0.7,
eval/results/support_words_dev.md) and to 0.901 with pairs (weight 0.6, eval/results/support_pairs_dev.md), pooled
findings -> impression match@5 0.487 -> 0.495 either way, ICD-10-CM exact@1 kept.

It is a `SecondStage` (retriever/search/rerank.py): mixed with the first stage's score at a weight over the top hits,
and only for queries of `MIN_QUERY_WORDS` words or more: a resident's short query says less than any report, so a hit's
extra words there are no sign of a wrong hit. And only where the searched field is the impression (`FIELDS`): the
premise is that an impression summarizes its findings, while a whole report or a findings section says much that
the query cannot (other organs, normal structures, technique), so there the check favours reports that say little,
not right ones. On whole-report search (label P@10: findings query -> reports sharing a label) it cost 0.765 ->
0.628 on CT-RATE and 0.320 -> 0.246 on Open-i, dev split, dense weight 0.6 (eval/results/fusion_sweep.md against
fusion_sweep_all_fields.md), and diagnoses from whole reports did not change with it (39.5% vs 38.2% without, 306
held-out cases, p 0.54, eval/results/diagnosis_native_pairs.md). Measured against not doing it by
`python -m eval.robustness.rerank_benchmark --reranker support` (eval/results/support_fusion_dev.md;
support_pairs_dev.md at the even fusion mix).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from models.preset import PRESET
from retriever.negation.tokens import tokenize
from retriever.search.rerank import Idf, SecondStage

#: The name that selects this stage wherever a re-ranker is named (`--reranker support`, RADSEARCH_RERANKER).
NAME = "support"
#: Its share of a re-scored hit's score (the first stage has the rest): the weight the benchmark's rule chose on the
#: dev split (eval/results/support_fusion_dev.md), as the preset records it for the default encoder
#: (models/preset.json), kept equal to it by tests/retriever/test_support.py.
WEIGHT = PRESET.default_search.second_stage_weight
#: Queries of fewer words are left alone: the 5th percentile of the train-split findings' word counts (15, as
#: recorded by eval/results/rerank_dev_gated.md), read off the training data, not tuned to a split.
MIN_QUERY_WORDS = 15
#: Adjacent term pairs count beside single terms (module docstring).
PAIRS = True
#: The searched fields it re-scores (module docstring): impressions only.
FIELDS = ("impression",)


class SupportCheck(SecondStage):
    """Scores each hit by the query's support for its words (module docstring); stateless and thread-safe."""

    name = NAME
    fields = FIELDS

    def __init__(self, weight: float = WEIGHT, min_query_words: int = MIN_QUERY_WORDS, pairs: bool = PAIRS) -> None:
        super().__init__(weight)
        self.min_query_words = min_query_words
        self.pairs = pairs

    def relevance(self, query: str, texts: Sequence[str], idf: Idf | None) -> np.ndarray:
        """Sum over each text's distinct terms (and, with `pairs`, distinct adjacent term pairs) of idf, + for one
        the query has, - for one it has not; a pair weighs the smaller idf of its two terms. Without `idf` (a caller
        with no index), every term weighs 1."""
        asked_terms = tokenize(query)
        asked = set(asked_terms) | (adjacent_pairs(asked_terms) if self.pairs else set())
        values = []
        for text in texts:
            tokens = tokenize(text)
            terms = sorted(set(tokens))
            weights = idf(terms) if idf is not None and terms else np.ones(len(terms))
            weight_of = dict(zip(terms, weights, strict=True))
            units = [(term, weight_of[term]) for term in terms]
            if self.pairs:
                pairs = sorted(adjacent_pairs(tokens))
                units += [(pair, min(weight_of[pair[0]], weight_of[pair[1]])) for pair in pairs]
            values.append(sum(float(w) if unit in asked else -float(w) for unit, w in units))
        return np.asarray(values, dtype=np.float64)


def adjacent_pairs(terms: Sequence[str]) -> set[tuple[str, str]]:
    """The distinct pairs of terms next to each other in `terms`."""
    return set(zip(terms, terms[1:], strict=False))
