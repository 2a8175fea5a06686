"""BM25 over the same reports and fields: the lexical baseline every dense retriever is measured against.

Negation-aware: a negated word is its own term (retriever/negation/tokens.py), so "pleural effusion" never scores
a report for its "No pleural effusion." and "no pleural effusion" finds the reports that rule it out.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

import bm25s
import numpy as np
from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer

from retriever.negation.tokens import tokenize

#: bm25s sets its own logger to DEBUG when imported, which printed "DEBUG Building index from IDs" into every build.
logging.getLogger("bm25s").setLevel(logging.WARNING)


class LeanBM25(bm25s.BM25):
    """bm25s' BM25 with its index matrix built in two passes straight into CSC form.

    Why: bm25s builds (score, document, term) triplets for every non-zero entry and then has scipy convert them, so
    at a million reports one field's build peaks above 4 GB (eval/results/ingest.md). Here a first pass counts the
    documents per term (the column sizes), a second writes each document's scores into its terms' columns: the
    matrix's own arrays and one document at a time are all that is held. Scores are bm25s' own (its idf and tf
    scorers, same dtype), and documents are written in order, so the arrays equal what bm25s builds (tested). Only
    the methods without a non-occurrence term (bm25s' default `lucene`, `robertson`, `atire`) are built this way."""

    def build_index_from_ids(
        self,
        unique_token_ids: list[int],
        corpus_token_ids: list[np.ndarray],
        show_progress: bool = True,
        leave_progress: bool = False,
    ) -> dict:
        if self.method in self.methods_requiring_nonoccurrence:
            return super().build_index_from_ids(unique_token_ids, corpus_token_ids, show_progress, leave_progress)
        self.nonoccurrence_array = None
        n_docs, n_vocab = len(corpus_token_ids), len(unique_token_ids)
        doc_freqs = np.zeros(n_vocab, dtype=np.int64)
        total_len = 0
        for ids in corpus_token_ids:
            doc_freqs[np.unique(ids)] += 1
            total_len += len(ids)
        # a numpy float, as bm25s has (the same dtype promotion); a field no report fills has no documents at all
        avg_doc_len = np.float64(total_len / n_docs if n_docs else 0.0)
        idf_score = _select_idf_scorer(self.idf_method)
        idf = np.zeros(n_vocab, dtype=self.dtype)
        seen = np.flatnonzero(doc_freqs)
        idf[seen] = [idf_score(int(df), N=n_docs) for df in doc_freqs[seen]]
        indptr = np.zeros(n_vocab + 1, dtype=np.int64)
        np.cumsum(doc_freqs, out=indptr[1:])
        data = np.empty(indptr[-1], dtype=self.dtype)
        indices = np.empty(indptr[-1], dtype=self.int_dtype)
        fill = indptr[:-1].copy()
        tfc_score = _select_tfc_scorer(self.method)
        for doc, ids in enumerate(corpus_token_ids):
            terms, counts = np.unique(ids, return_counts=True)
            tfc = tfc_score(
                tf_array=counts.astype(self.dtype),
                l_d=len(ids),
                l_avg=avg_doc_len,
                k1=self.k1,
                b=self.b,
                delta=self.delta,
            )
            at = fill[terms]
            data[at] = idf[terms] * tfc
            indices[at] = doc
            fill[terms] += 1
        return {"data": data, "indices": indices, "indptr": indptr, "num_docs": n_docs}


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
        self._document_frequency: np.ndarray | None = None

    @classmethod
    def build(cls, texts: Iterable[str], rowids: Sequence[int] | np.ndarray) -> BM25Field:
        """Index `texts` (the i-th under rowids[i]). Each text is turned into vocabulary ids as it is read, so only
        a small int array per document is held, not a string per token (a million reports' token strings take GBs).
        `texts` may be a generator reading the store that fills `rowids` as it goes: they are read after it."""
        vocab: dict[str, int] = {}
        return cls._indexed([_ids(text, vocab) for text in texts], vocab, rowids)

    @classmethod
    def _indexed(cls, ids: list[np.ndarray], vocab: dict[str, int], rowids: Sequence[int] | np.ndarray) -> BM25Field:
        model = LeanBM25()
        if not vocab:  # no report fills this field: bm25s cannot index an empty vocabulary, so give it its own
            vocab[""] = 0  # empty-token entry (the one it adds for unknown query words), which no document holds
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
            np.save(folder / "token_ids.npy", flat.astype(np.int32, copy=False))

    @classmethod
    def load(cls, folder: Path) -> BM25Field:
        token_ids = None
        if (folder / "token_ids.npy").is_file():
            offsets = np.load(folder / "token_offsets.npy")
            token_ids = np.split(np.load(folder / "token_ids.npy"), offsets[1:-1])
        return cls(bm25s.BM25.load(str(folder)), np.load(folder / "rowids.npy"), token_ids)

    def idf(self, terms: Sequence[str]) -> np.ndarray:
        """Each term's inverse document frequency in this field, as BM25 weighs it (Lucene's log(1 + (N - df +
        0.5) / (df + 0.5))); a term no document has gets the highest. Document frequencies are read off the
        index's term columns once, on first use."""
        if self._document_frequency is None:
            self._document_frequency = np.diff(np.asarray(self._model.scores["indptr"]))
        frequency = self._document_frequency
        df = np.array(
            [frequency[i] if (i := self._vocab.get(t)) is not None and i < len(frequency) else 0 for t in terms],
            dtype=np.float64,
        )
        documents = float(self._model.scores["num_docs"])
        return np.log1p((documents - df + 0.5) / (df + 0.5))

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
