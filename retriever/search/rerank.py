"""Second-stage re-ranking: a cross-encoder reads the query and each of the first stage's candidates together.

Why: a bi-encoder compares two vectors made apart, so "Small right pleural effusion." and "Small left pleural
effusion." land 0.005 apart in cosine and an impression with one extra, unsupported sentence still looks like its
report (eval/results/robustness.md, error discrimination). A cross-encoder attends across query and candidate
and can see that one side, one number or one added finding does not fit the findings. It is too slow to score a
whole archive on a CPU (one pair of ~250 tokens is ~40 ms here), so it re-scores only the first stage's top
`RERANK_DEPTH` hits; the rest keep their order below them.

Its score can replace the first stage's or be mixed with it (`weight`, the cross-encoder's share of a min-max
normalized mix, retriever/search/fusion.py): replacing threw away what the first stage knows
(eval/results/rerank_dev.md: findings -> impression match@5 0.495 -> 0.219 on dev), so the share is a parameter measured
on the dev split by `python -m eval.robustness.rerank_benchmark --weights ...`.

`SecondStage` is what every second stage shares (the mix, the weight, the query-length gate); the product's default
stage is not this cross-encoder but the model-free support check (retriever/search/support.py), which reads words.

A re-ranker is trained by `assistant train-reranker` (retriever/training/reranker.py) on a site's own findings ->
impression pairs, like the encoder, and named in a search with `--reranker NAME` or `RADSEARCH_RERANKER`.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar

from models.paths import models_dir
from models.preset import PRESET
from models.resolve import ModelNotAvailable
from retriever.search.fusion import weighted_fusion

if TYPE_CHECKING:
    import numpy as np

T = TypeVar("T")

#: First-stage hits a re-ranker re-scores: the candidate depth a k = 5 search ranks (retriever.search.contradiction).
RERANK_DEPTH = 20
#: Tokens of query + candidate the cross-encoder reads; past it the longer of the two (long CT findings) is cut
#: from its end, so the impression is kept whole.
MAX_LENGTH = 256
#: The cross-encoder's share of a re-scored hit's score (the first stage has the rest; 1 = its score alone): the
#: weight with the best error discrimination on the dev split (eval/results/rerank_dev.md: 0.818 at 0.3, 0.742 at
#: 1), written in the preset (models/preset.json) and kept equal to it by tests/eval/test_rerank_benchmark.py. The
#: re-ranker itself stays off unless a site names one.
RERANK_WEIGHT = PRESET.rerank_weight
#: What a re-ranker reference may end with to give its weight instead: `my-site-reranker@0.5`.
WEIGHT_MARK = "@"
#: A file every trained re-ranker folder has beside the weights (written by retriever/training/reranker.py).
CARD_FILE = "radsearch_reranker.json"


def reranker_location(ref: str | Path, root: Path | None = None) -> Path:
    """The folder of a re-ranker named `ref`: a folder path, or a model trained under the models directory."""
    path = Path(ref).expanduser()
    found = path if path.is_dir() else (root or models_dir()) / str(ref)
    if not (found / "config.json").is_file():
        raise ModelNotAvailable(
            f"no re-ranker {str(ref)!r}: give a folder holding a trained cross-encoder, or the name of one trained "
            f"with `assistant train-reranker` (in {root or models_dir()})"
        )
    return found.resolve()


def split_weight(ref: str) -> tuple[str, float | None]:
    """`NAME@0.5` -> ("NAME", 0.5); `NAME` -> ("NAME", None). Only a number after the last `@` is a weight (a folder
    may have `@` in its path); ValueError for a number that is not a share in (0, 1]."""
    name, marker, tail = str(ref).rpartition(WEIGHT_MARK)
    try:
        share = float(tail) if marker and name else None
    except ValueError:
        share = None
    return (str(ref), None) if share is None else (name, _checked(share))


def _checked(weight: float) -> float:
    if not 0.0 < weight <= 1.0:
        raise ValueError(f"a re-ranker's weight is its share of the score, in (0, 1], not {weight}")
    return weight


#: Scores a list of terms by their inverse document frequency in the searched field (BM25Field.idf): what a
#: second stage that reads words, not vectors, needs from the index.
Idf = Callable[[Sequence[str]], "np.ndarray"]


class SecondStage:
    """What every second stage shares: re-score the first stage's top `depth` hits with a relevance of its own,
    mixed at `weight` (its share; the first stage has the rest), for queries of `min_query_words` words or more.
    Subclasses say how relevant each text is (`relevance`): a cross-encoder (Reranker) or the model-free support
    check (retriever/search/support.py)."""

    #: Shown where a search says which second stage ran (`assistant search --json`).
    name: str = ""
    #: The searched fields it re-scores (`applies_to`); None: every field.
    fields: tuple[str, ...] | None = None

    def __init__(self, weight: float) -> None:
        self.weight = _checked(weight)
        #: Queries of fewer words keep the first stage's order (0: every query is re-scored).
        self.min_query_words = 0

    def relevance(self, query: str, texts: Sequence[str], idf: Idf | None) -> np.ndarray:
        """Higher = more relevant, one value per text, any scale (the mix min-max normalizes it)."""
        raise NotImplementedError

    def applies_to(self, field: str, query: str | None = None) -> bool:
        """Whether a search of `field` (for `query`, as searched, if given: the query-length gate) goes through this
        stage; the index leaves the others as the first stage ranked them."""
        return (self.fields is None or field in self.fields) and (query is None or not self._too_short(query))

    def _too_short(self, query: str) -> bool:
        return len(query.split()) < self.min_query_words

    def weighted(self, weight: float) -> Self:
        """This stage (sharing any loaded model) mixing its score at another weight."""
        other = copy.copy(self)
        other.weight = _checked(weight)
        return other

    def gated(self, min_query_words: int) -> Self:
        """This stage (sharing any loaded model) leaving queries of fewer than `min_query_words` words alone."""
        if min_query_words < 0:
            raise ValueError(f"a minimum number of query words is 0 or more, not {min_query_words}")
        other = copy.copy(self)
        other.min_query_words = min_query_words
        return other

    def rerank(
        self,
        query: str,
        scored: Sequence[tuple[T, float]],
        text_of: Callable[[T], str],
        idf: Idf | None = None,
        depth: int = RERANK_DEPTH,
    ) -> list[tuple[T, float]]:
        """The first `depth` of `scored` (item, first-stage score) re-ordered by a new score: the stage's relevance
        alone at weight 1, else `weight` x it + (1 - `weight`) x the first stage's, both min-max normalized over
        the re-scored hits (retriever.search.fusion.weighted_fusion); the items after them follow in their order with
        scores kept below every re-scored one. A query shorter than `min_query_words` gets `scored` back as is.
        `idf`: the searched field's term weights, for a stage that reads words."""
        if self._too_short(query):
            return list(scored)
        head, tail = list(scored[:depth]), list(scored[depth:])
        if not head:
            return []
        relevance = self.relevance(query, [text_of(item) for item, _ in head], idf)
        if self.weight >= 1.0:
            new = [(n, float(relevance[n])) for n in sorted(range(len(head)), key=lambda n: -float(relevance[n]))]
        else:
            first = [(n, score) for n, (_, score) in enumerate(head)]
            second = [(n, float(relevance[n])) for n in range(len(head))]
            new = weighted_fusion([first, second], [1.0 - self.weight, self.weight])
        reranked = [(head[n][0], score) for n, score in new]
        floor = min(score for _, score in reranked)
        return reranked + [(item, min(score, floor)) for item, score in tail]


class Reranker(SecondStage):
    """A cross-encoder that scores (query, text) pairs; thread-safe (its tokenizer and model are used under a lock)."""

    def __init__(
        self, ref: str | Path, *, device: str = "cpu", max_length: int = MAX_LENGTH, weight: float = RERANK_WEIGHT
    ) -> None:
        from sentence_transformers import CrossEncoder

        self.location = reranker_location(ref)
        super().__init__(weight)
        self.name = self.location.name
        self._model: Any = CrossEncoder(str(self.location), device=device, max_length=max_length)
        self._lock = threading.Lock()

    def scores(self, query: str, texts: Sequence[str], batch_size: int = 16) -> np.ndarray:
        """Probability-like relevance in [0, 1] of each text for the query (the model's logit through a sigmoid)."""
        import numpy as np  # here, not at the top: the CLI reads this module's defaults without searching

        if not texts:
            return np.zeros(0, dtype=np.float32)
        pairs = [(query, text) for text in texts]
        with self._lock:
            raw = self._model.predict(pairs, batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(raw, dtype=np.float32).reshape(len(texts))

    def relevance(self, query: str, texts: Sequence[str], idf: Idf | None) -> np.ndarray:
        """The cross-encoder's score (`scores`); it reads the words itself, so `idf` is not used. A gate
        (`gated`) keeps short term-like queries (ICD-10-CM rephrasings) out: it learned from findings paragraphs
        and moved right answers down on them on the dev split (eval/results/rerank_dev.md)."""
        return self.scores(query, texts)
