"""A report index: FAISS vectors per field + BM25 + SQLite report store, behind one small API.

index = ReportIndex.build(reports, encoder)          # encode every field
index.save(folder)                                    # atomic: temp folder, then swap (retriever.index.swap)
index = ReportIndex.load(folder, search=...)          # checks manifest, checksums and encoder
hits = index.search("small left effusion", field="impression", k=5)

An index is searched as its SearchConfiguration says (retriever/search/configuration.py), given when it is built or
loaded and never changed after: the product makes it from the search card in the manifest and the user's settings
(assistant/settings.py, SearchSettings.configure); given none, an index searches with its card's first stage.
`with_search` is the same loaded index searched another way (benchmarks that compare second stages).

One index may be searched from several threads at once (the chat's residents, the benchmark's thread pool): the
encoder's tokenizer and the SQLite connection are not safe to share between threads, so the index serialises its
use of them (and the encoder's first load); FAISS and BM25 searches only read and run in parallel.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from models.preset import PRESET, SearchCard
from retriever.concepts.conclusion import Stored, stored_form
from retriever.concepts.fingerprint import concept_rules
from retriever.encoders.encoder import Encoder, load_encoder
from retriever.index.bm25 import BM25Field
from retriever.index.date_filter import StudyDates
from retriever.index.encoder_check import LazyEncoder, check_encoder, encoder_info
from retriever.index.filters import SearchFilters
from retriever.index.folder import STORE_FILE, corpus_hash, now, open_parts, write_parts
from retriever.index.identical import IdenticalTexts, fold_identical
from retriever.index.manifest import Manifest
from retriever.index.output_paths import check_replaceable
from retriever.index.store import ReportStore, write_store
from retriever.index.swap import replacing, restore_interrupted
from retriever.index.vectors import build_vector_index, index_kind, search_vectors
from retriever.negation.tokens import STOPWORDS, TOKENIZER_FINGERPRINT
from retriever.reports.record import FIELDS, Field, Report
from retriever.search.configuration import Configure, SearchConfiguration
from retriever.search.contradiction import candidate_depth, contradicting_last
from retriever.search.fusion import FUSION_DEPTH, fuse_dense_and_bm25
from retriever.search.hit import Hit
from retriever.search.methods import Method, checked_method
from retriever.search.query import PreparedQuery, clean_query

#: What other modules import from here (the folder's names moved to retriever/index/folder.py with issue 50).
__all__ = ["STORE_FILE", "ReportIndex", "SearchFilters", "corpus_hash", "encoder_info", "now", "open_parts"]

#: How deep a search may look for k distinct texts when the first candidates are copies of a few (templated normal
#: reports): candidates are taken four times deeper until k texts are found or this many were ranked.
MAX_DEPTH = 4096


class ConceptsNotStored(ValueError):
    """A search filters by a diagnosis, but the index stores no concepts of this program's vocabulary."""


class ReportIndex:
    """Searchable reports. Build in memory, save atomically, load with integrity and encoder checks.

    Slotted: a caller that assigns a search setting after load (`index.reranker = ...`, as callers once did) gets an
    AttributeError instead of an index that silently ignores it; the configuration is given at construction."""

    __slots__ = ("manifest", "_store", "_vectors", "_bm25", "_encoder", "_search", "_dates", "_dates_lock", "_texts")

    def __init__(
        self,
        manifest: Manifest,
        store: ReportStore | list[Report],
        vectors: dict[str, object],
        bm25: dict[str, BM25Field],
        encoder: Encoder | None = None,
        *,
        device: str | None = None,
        search: SearchConfiguration | None = None,
    ) -> None:
        self.manifest = manifest
        self._store = store
        self._vectors = vectors
        self._bm25 = bm25
        self._encoder = LazyEncoder(manifest.encoder, device, encoder)
        #: How this index is searched (None given: its card's first stage, `SearchConfiguration.first_stage`).
        self._search = search or SearchConfiguration.first_stage(self.card)
        self._dates: StudyDates | None = None  # read on the first search with a date filter
        self._dates_lock = threading.Lock()
        #: Which reports share a text: a search shows them as one hit (retriever/index/identical.py).
        self._texts = IdenticalTexts(store)

    # ----------------------------------------------------------------------------------------- build/save
    @classmethod
    def build(
        cls,
        reports: list[Report],
        encoder: Encoder,
        fields: tuple[str, ...] = FIELDS,
        *,
        batch_size: int = 32,
        progress: bool = False,
        search: SearchConfiguration | None = None,
    ) -> ReportIndex:
        """Encode each field of each report that has it; row id i is reports[i]. The manifest records the search
        values measured for the encoder (its card, models/preset.json); `search`: how this in-memory index is
        searched (None: the card's first stage)."""
        if not reports:
            raise ValueError("no reports to index (all were rejected or the corpus is empty)")
        vectors, bm25, counts = {}, {}, {}
        for field_name in fields:
            rowids = np.array([i for i, r in enumerate(reports) if r.text_of(field_name)], dtype=np.int64)
            texts = [reports[i].text_of(field_name) for i in rowids]
            if progress:
                print(f"encoding {len(texts)} {field_name} texts with {encoder.name}")
            embedded = encoder.encode(texts, batch_size=batch_size, progress=progress)
            vectors[field_name] = build_vector_index(embedded, rowids)
            bm25[field_name] = BM25Field.build(texts, rowids)
            counts[field_name] = len(rowids)
        manifest = Manifest(
            encoder=encoder_info(encoder),
            fields=counts,
            reports=len(reports),
            corpus_sha256=corpus_hash(reports),
            created=now(),
            index_type=index_kind(max(counts.values())),
            lexical_rules=TOKENIZER_FINGERPRINT,
            search=PRESET.card_for(encoder.name),
            concept_rules=concept_rules(),
        )
        return cls(manifest, list(reports), vectors, bm25, encoder, search=search)

    def save(self, folder: Path, *, overwrite: bool = False) -> None:
        """Write to a temp folder beside `folder`, then swap it in; a crash never leaves a half-written index.

        Refuses (UnsafeOutput) to replace a folder that is not an index unless `overwrite`: library callers are as
        protected as `assistant index` is."""
        if not isinstance(self._store, list):
            raise ValueError("only a freshly built index can be saved")
        folder = Path(folder)
        restore_interrupted(folder)
        check_replaceable(folder, overwrite=overwrite)
        with replacing(folder) as tmp:
            write_store(tmp / STORE_FILE, self._store)
            write_parts(tmp, self.manifest, self._vectors, self._bm25)

    # ----------------------------------------------------------------------------------------------- load
    @classmethod
    def load(
        cls,
        folder: Path,
        encoder: str | Encoder | None = None,
        *,
        load_encoder_now: bool = False,
        device: str | None = None,
        search: SearchConfiguration | Configure | None = None,
    ) -> ReportIndex:
        """Open an index folder after checking every file against the manifest.

        `encoder`: a reference or loaded Encoder the caller wants to search with; refused unless it is the one that
        built the index. Without it, the manifest's encoder is loaded on first dense search, on `device` (None: the
        encoder module's default).
        `search`: how the index is searched, or how to make that from its manifest (the product's settings:
        assistant/settings.py, SearchSettings.configure); None: the first stage of its card.
        If a save was killed while swapping folders, the previous index is moved back first (retriever.index.swap).
        """
        manifest, vectors, bm25, store = open_parts(Path(folder))
        if encoder is not None and not isinstance(encoder, Encoder):
            encoder = load_encoder(encoder, backend=manifest.encoder.backend, device=device)
        checked = check_encoder(manifest.encoder, encoder) if encoder is not None else None
        configured = search(manifest) if callable(search) else search
        index = cls(manifest, store, vectors, bm25, checked, device=device, search=configured)
        if load_encoder_now:
            index.encoder()
        return index

    def with_search(self, **changes: Any) -> ReportIndex:
        """This index searched with `changes` to its configuration (SearchConfiguration's fields: `second_stage=`,
        `query_expander=`, ...): a view that shares everything loaded, the encoder included, for a benchmark that
        compares configurations on one index. This index is not changed."""
        view = copy.copy(self)
        view._search = replace(self._search, **changes)
        return view

    @property
    def search_configuration(self) -> SearchConfiguration:
        """How this index is searched (fixed at construction)."""
        return self._search

    @property
    def card(self) -> SearchCard:
        """The search values this index was built with (its manifest's card); an index built before cards: the
        preset's values for its encoder, as such an index was always searched."""
        return self.manifest.search or PRESET.card_for(self.manifest.encoder.name)

    def encoder(self) -> Encoder:
        """The encoder that built this index (loaded lazily, once; BM25-only use never loads it). Use it through
        `prepare` and `search` when other threads may search this index: they hold the lock its tokenizer needs."""
        return self._encoder.get()

    # --------------------------------------------------------------------------------------------- search
    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(self.manifest.fields)

    def prepare(self, query: str) -> PreparedQuery:
        """Clean the query (EmptyQueryError if empty) and count its tokens against the encoder's limit."""
        text = clean_query(query)
        with self._encoder.lock:
            encoder = self.encoder()
            return PreparedQuery(text, encoder.count_tokens(text), encoder.max_seq_length)

    def search(
        self,
        query: str,
        field: Field = "impression",
        k: int = 5,
        filters: SearchFilters | None = None,
        method: Method | None = None,
    ) -> list[Hit]:
        """Top-k reports for `query` matched against one field, by `method` (None: the configuration's). Reports of
        one text (retriever/index/identical.py) are one hit, which names the others (`Hit.identical`); the search
        looks deeper until it has k texts."""
        if field not in self.manifest.fields:
            raise ValueError(f"field {field!r} is not in this index; it has: {', '.join(self.fields)}")
        method = checked_method(method or self._search.method)
        if k < 1:
            raise ValueError("k must be at least 1")
        text = self._search.expander().expand(clean_query(query))
        allowed = self._allowed(filters)
        depth = candidate_depth(k)
        while True:
            ordered, keys, reports = self._ranked(text, field, method, depth, allowed, k)
            groups = fold_identical(ordered, keys)
            if len(groups) >= k or len(ordered) < depth or depth >= MAX_DEPTH:
                break
            depth *= 4
        groups = groups[:k]
        others = self._texts.others([rowid for ((rowid, _), _, _), _ in groups], allowed)
        concepts = self._concepts([rowid for ((rowid, _), _, _), _ in groups])
        return [
            Hit(
                rank=i,
                score=score,
                field=field,
                report=reports[rowid],
                method=method,
                contradicts=contradicts,
                partly_contradicts=partly,
                identical=others.get(rowid, ()),
                concepts=concepts.get(rowid),
            )
            for i, (((rowid, score), contradicts, partly), _) in enumerate(groups, start=1)
        ]

    def _ranked(
        self, text: str, field: Field, method: Method, depth: int, allowed: np.ndarray | None, k: int
    ) -> tuple[list[tuple[tuple[int, float], bool, bool]], list[str], dict[int, Report]]:
        """The first `depth` candidates, re-scored by the second stage and with contradicting ones last (each with
        its two contradiction flags; judged until the first `k` texts are known), their text keys in that order, and
        their reports by row id."""
        if method == "bm25":
            scored = self._bm25[field].search(text, depth, allowed)
        elif method == "dense":
            scored = self._dense(text, field, depth, allowed)
        else:
            fused = max(FUSION_DEPTH, depth)
            dense, lexical = self._dense(text, field, fused, allowed), self._bm25[field].search(text, fused, allowed)
            scored = fuse_dense_and_bm25(method, dense, lexical, self._search.dense_weight)[:depth]
        reports = self._reports([rowid for rowid, _ in scored])
        stage = self._search.second_stage
        if stage is not None and stage.applies_to(field):
            scored = stage.rerank(text, scored, lambda s: reports[s].text_of(field), self._bm25[field].idf)
        keys = self._texts.keys_of([rowid for rowid, _ in scored])
        ordered = contradicting_last(text, scored, lambda s: reports[s[0]].text_of(field), STOPWORDS, (k, keys))
        key_of = dict(zip(scored, keys, strict=True))
        return ordered, [key_of[hit] for hit, _, _ in ordered], reports

    def _dense(self, text: str, field: Field, k: int, allowed: np.ndarray | None) -> list[tuple[int, float]]:
        with self._encoder.lock:
            vector = self.encoder().encode([text])[0]
        return search_vectors(self._vectors[field], vector, k, allowed)

    def _allowed(self, filters: SearchFilters | None) -> np.ndarray | None:
        """Row ids the filters let through (None: no filter), as the ids FAISS and BM25 are restricted to."""
        if filters is None or not filters.any():
            return None
        allowed = None
        if filters.by_metadata():
            allowed = (
                np.array([i for i, r in enumerate(self._store) if filters.matches(r)], dtype=np.int64)
                if isinstance(self._store, list)
                else self._store.filter_rowids(filters)
            )
        if filters.since or filters.until:
            dated = self._study_dates().between(filters.since, filters.until)
            allowed = dated if allowed is None else np.intersect1d(allowed, dated)
        if filters.diagnosis:
            affirming = self.affirming(filters.diagnosis)
            allowed = affirming if allowed is None else np.intersect1d(allowed, affirming)
        return allowed

    @property
    def concepts_stored(self) -> bool:
        """Whether the store holds each report's concepts, linked by this program's vocabulary and linker: then hits
        carry them (`Hit.concepts`) and a search can filter by a diagnosis. Else answers link at answer time."""
        stored = isinstance(self._store, list) or self._store.has_concepts
        return stored and self.manifest.current_concepts

    def affirming(self, concept: str) -> np.ndarray:
        """Row ids of the reports whose conclusion affirms `concept` (a concept id), by their stored concepts;
        ConceptsNotStored when this index has none of this vocabulary's."""
        if not self.concepts_stored:
            raise ConceptsNotStored(
                "this index holds no diagnoses linked by this program's vocabulary (built before they were stored, or "
                "linked by another vocabulary), so it cannot filter by one; link them anew"
            )
        if isinstance(self._store, list):
            found = [i for i, r in enumerate(self._store) if concept in dict(stored_form(r.conclusion))]
            return np.array(found, dtype=np.int64)
        return self._store.affirming(concept)

    def _concepts(self, rowids: list[int]) -> dict[int, Stored]:
        """The stored concepts of these reports, or none at all when they are not this vocabulary's."""
        if not self.concepts_stored:
            return {}
        if isinstance(self._store, list):
            return {i: stored_form(self._store[i].conclusion) for i in rowids}
        return self._store.concepts(rowids)

    def _study_dates(self) -> StudyDates:
        """The reports' study days, read once (retriever/index/date_filter.py)."""
        with self._dates_lock:
            if self._dates is None:
                stored = self._store
                dated = (
                    [(i, r.source, r.meta["date"]) for i, r in enumerate(stored) if r.meta.get("date")]
                    if isinstance(stored, list)
                    else stored.dates()
                )
                self._dates = StudyDates(dated)
            return self._dates

    def _reports(self, rowids: list[int]) -> dict[int, Report]:
        if isinstance(self._store, list):
            return {i: self._store[i] for i in rowids}
        return self._store.get(rowids)

    def notices(self, folder: Path | str, method: str) -> list[str]:
        """What a search of this index with `method` should tell the user: the BM25 side was tokenized under older
        negation rules (bm25 and the fused methods then read some mentions as those rules did), or no search values
        were measured for the index's encoder (it is searched with the default encoder's)."""
        found = []
        if method != "dense" and not self.manifest.current_lexical_rules:
            found.append(
                f"the BM25 side of {folder} was tokenized under older negation rules, so bm25 and the hybrid "
                f"methods may score a ruled-out finding as present; `assistant update --index {folder} "
                "--retokenize` tokenizes it anew (no report is encoded again)"
            )
        if self.card.measured_for != self.manifest.encoder.name and method != "bm25":
            found.append(
                f"no search values were measured for {folder}'s encoder {self.manifest.encoder.name!r}: it "
                f"is searched with those measured for the default encoder {self.card.measured_for!r} (dense weight "
                f"{self._search.dense_weight}); `assistant index` without --encoder builds with that encoder"
            )
        return found

    def describe(self) -> dict[str, object]:
        """Manifest as a plain dict (for `--json` and the UI)."""
        return asdict(self.manifest)
