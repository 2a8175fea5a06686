"""BM25 over the same reports and fields: the lexical baseline every dense retriever is measured against.

Negation-aware: a negated word is its own term (retriever/negation_scope.py), so "pleural effusion" never scores
a report for its "No pleural effusion." and "no pleural effusion" finds the reports that rule it out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from retriever.negation_scope import NEGATED_PREFIX, scoped_words

STOPWORDS = frozenset(STOPWORDS_EN)


def tokenize(text: str) -> list[str]:
    """Lowercased alphanumeric terms without English stopwords; words under a negation carry NEGATED_PREFIX (the
    negation triggers themselves are dropped: the prefix says what they said)."""
    return [w for w in scoped_words(text) if w.removeprefix(NEGATED_PREFIX) not in STOPWORDS]


class BM25Field:
    """BM25 scores for one field; document i is the i-th of the row ids given at build time."""

    def __init__(self, model: bm25s.BM25, rowids: np.ndarray) -> None:
        self._model = model
        self._rowids = rowids
        self._vocab = model.vocab_dict

    @classmethod
    def build(cls, texts: Iterable[str], rowids: Sequence[int] | np.ndarray) -> BM25Field:
        """Index `texts` (the i-th under rowids[i]). Each text is turned into vocabulary ids as it is read, so only
        an int reference per token is held, not a string per token (a million reports' token strings take GBs).
        `texts` may be a generator reading the store that fills `rowids` as it goes: they are read after it."""
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(term, len(vocab)) for term in tokenize(text) or ["\u2205"]] for text in texts]
        model = bm25s.BM25()
        model.index((ids, vocab), show_progress=False)
        return cls(model, np.asarray(rowids, dtype=np.int64))

    def save(self, folder: Path) -> None:
        self._model.save(str(folder))
        np.save(folder / "rowids.npy", self._rowids)

    @classmethod
    def load(cls, folder: Path) -> BM25Field:
        return cls(bm25s.BM25.load(str(folder)), np.load(folder / "rowids.npy"))

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top-k (rowid, BM25 score); reports with score 0 (no shared term) are not returned."""
        tokens = [t for t in tokenize(query) if t in self._vocab]
        if not tokens or k <= 0:
            return []
        scores = self._model.get_scores(tokens)
        if allowed is not None:
            scores = np.where(np.isin(self._rowids, allowed), scores, 0.0)
        top = np.argsort(-scores, kind="stable")[:k]
        return [(int(self._rowids[i]), float(scores[i])) for i in top if scores[i] > 0]
