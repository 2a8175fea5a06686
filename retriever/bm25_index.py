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
    """BM25 scores for one field; document i is the i-th of the row ids given at build time.

    Each document's term ids are kept (and saved) too, so an update re-indexes the kept documents from their ids and
    tokenizes only the new texts: tokenizing (the negation scope) costs about 4x what bm25s' indexing of ids does."""

    def __init__(self, model: bm25s.BM25, rowids: np.ndarray, token_ids: list[np.ndarray] | None = None) -> None:
        self._model = model
        self._rowids = rowids
        self._vocab = model.vocab_dict
        #: Per document, its terms' ids in `_vocab` (None for an index saved before they were kept).
        self._token_ids = token_ids

    @classmethod
    def build(cls, texts: Iterable[str], rowids: Sequence[int] | np.ndarray) -> BM25Field:
        """Index `texts` (the i-th under rowids[i]). Each text is turned into vocabulary ids as it is read, so only
        a small int array per document is held, not a string per token (a million reports' token strings take GBs).
        `texts` may be a generator reading the store that fills `rowids` as it goes: they are read after it."""
        vocab: dict[str, int] = {}
        return cls._indexed([_ids(text, vocab) for text in texts], vocab, rowids)

    @classmethod
    def _indexed(cls, ids: list[np.ndarray], vocab: dict[str, int], rowids: Sequence[int] | np.ndarray) -> BM25Field:
        model = bm25s.BM25()
        model.index((ids, vocab), show_progress=False)
        return cls(model, np.asarray(rowids, dtype=np.int64), ids)

    def updated(self, removed: np.ndarray, rowids: list[int], texts: list[str]) -> BM25Field | None:
        """This field without the documents of row ids `removed`, plus `texts` under `rowids`: the same scores as
        a build over the final documents (unused vocabulary entries score nothing). None if the term ids were not
        kept (an older index): the caller builds from the texts."""
        if self._token_ids is None:
            return None
        keep = np.flatnonzero(~np.isin(self._rowids, removed))
        vocab = dict(self._vocab)
        ids = [self._token_ids[i] for i in keep] + [_ids(text, vocab) for text in texts]
        return self._indexed(ids, vocab, np.concatenate([self._rowids[keep], np.asarray(rowids, dtype=np.int64)]))

    def save(self, folder: Path) -> None:
        self._model.save(str(folder))
        np.save(folder / "rowids.npy", self._rowids)
        if self._token_ids is not None:
            lengths = [len(ids) for ids in self._token_ids]
            np.save(folder / "token_offsets.npy", np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
            flat = np.concatenate(self._token_ids) if self._token_ids else np.empty(0, dtype=np.int32)
            np.save(folder / "token_ids.npy", flat.astype(np.int32))

    @classmethod
    def load(cls, folder: Path) -> BM25Field:
        token_ids = None
        if (folder / "token_ids.npy").is_file():
            offsets = np.load(folder / "token_offsets.npy")
            token_ids = np.split(np.load(folder / "token_ids.npy"), offsets[1:-1])
        return cls(bm25s.BM25.load(str(folder)), np.load(folder / "rowids.npy"), token_ids)

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


def _ids(text: str, vocab: dict[str, int]) -> np.ndarray:
    """The text's terms as ids in `vocab`, adding new terms (an empty text is the one term "\u2205")."""
    return np.array([vocab.setdefault(term, len(vocab)) for term in tokenize(text) or ["\u2205"]], dtype=np.int32)
