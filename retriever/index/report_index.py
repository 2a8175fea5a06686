"""A report index: FAISS vectors per field + BM25 + SQLite report store, behind one small API.

index = ReportIndex.build(reports, encoder)          # encode every field
index.save(folder)                                    # atomic: temp folder, then swap (retriever.index.swap)
index = ReportIndex.load(folder)                      # checks manifest, checksums and encoder
hits = index.search("small left effusion", field="impression", k=5)

One index may be searched from several threads at once (the chat's residents, the benchmark's thread pool): the
encoder's tokenizer and the SQLite connection are not safe to share between threads, so the index serialises its
use of them (and the encoder's first load); FAISS and BM25 searches only read and run in parallel.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import faiss
import numpy as np

from models.preset import PRESET, SearchPreset
from models.resolve import ModelNotAvailable
from retriever.encoders.encoder import Encoder, load_encoder
from retriever.index.bm25 import BM25Field
from retriever.index.date_filter import StudyDates
from retriever.index.errors import IndexLoadError
from retriever.index.manifest import MANIFEST, EncoderInfo, FileInfo, Manifest, listed_files
from retriever.index.output_paths import check_replaceable
from retriever.index.store import ReportStore, write_store
from retriever.index.swap import generation, replacing, restore_interrupted
from retriever.index.vectors import (
    build_vector_index,
    index_kind,
    read_vector_index,
    search_vectors,
    write_vector_index,
)
from retriever.negation.tokens import STOPWORDS, TOKENIZER_FINGERPRINT
from retriever.reports.record import FIELDS, Field, Report
from retriever.reports.sources.base import normalize_modality
from retriever.reports.sources.study_dates import filter_date
from retriever.search.abbreviations import QueryExpander, default_expander
from retriever.search.contradiction import candidate_depth, contradicting_last
from retriever.search.fusion import FUSION_DEPTH, fuse_dense_and_bm25
from retriever.search.hit import Hit
from retriever.search.methods import DEFAULT_METHOD, Method, checked_method
from retriever.search.query import PreparedQuery, clean_query
from retriever.search.rerank import SecondStage

STORE_FILE = "reports.sqlite"
#: Reads of an index folder before a load gives up because updates keep swapping it (each read takes a second or so;
#: an update minutes).
READ_ATTEMPTS = 5


@dataclass(frozen=True)
class SearchFilters:
    """Optional metadata filters; all given ones must match. `since` and `until` bound the study date (on or after,
    on or before); given however a date is written, kept as ISO (ValueError for what is not one date)."""

    modality: str | None = None
    source: str | None = None
    label: str | None = None
    since: str | None = None
    until: str | None = None

    def __post_init__(self) -> None:
        if self.modality:  # as the importers store it: `CR`, `DX` or `X-ray` all find the XR reports
            object.__setattr__(self, "modality", normalize_modality(self.modality))
        for bound in ("since", "until"):
            if value := getattr(self, bound):
                object.__setattr__(self, bound, filter_date(value, bound))
        if self.since and self.until and self.since > self.until:
            raise ValueError(f"since {self.since} is after until {self.until}: no date lies between them")

    def any(self) -> bool:
        return any((self.modality, self.source, self.label, self.since, self.until))


def index_files(folder: Path, fields: Iterable[str]) -> list[str]:
    """Every file an index in `folder` reads: the store, and each field's vectors and BM25 folder contents.
    Why one list: save records exactly these in the manifest and load refuses a manifest that omits one."""
    return listed_files(folder, [STORE_FILE, *(f"{f}.faiss" for f in fields)], [f"bm25_{f}" for f in fields])


def corpus_hash(reports: Iterable[Report]) -> str:
    """SHA-256 of the indexed content in row id order, so results can name exactly which corpus they came from."""
    digest = hashlib.sha256()
    for r in reports:
        digest.update(json.dumps([r.id, r.findings, r.impression, r.full_text], ensure_ascii=False).encode())
    return digest.hexdigest()


def now() -> str:
    """The manifest's time stamps: UTC, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def encoder_info(encoder: Encoder) -> EncoderInfo:
    """What the manifest records about the encoder that built an index (checked by `check_encoder`)."""
    return EncoderInfo(
        encoder.name,
        encoder.location,
        encoder.fingerprint,
        encoder.dims,
        encoder.max_seq_length,
        encoder.backend,
        encoder.backend_version,
    )


def check_encoder(built: EncoderInfo, encoder: Encoder) -> Encoder:
    """`encoder` if it is the one that built the index (same weights, dims, backend and export); else
    IndexLoadError saying which command fixes it. Why: vectors of another encoder would be silently meaningless."""
    if encoder.fingerprint != built.fingerprint or encoder.dims != built.dims:
        raise IndexLoadError(
            f"this index was built with encoder {built.name!r} ({built.dims}-d, weights {built.fingerprint[:12]}), "
            f"not {encoder.name!r} ({encoder.dims}-d, weights {encoder.fingerprint[:12]}): search or update it "
            f"without --encoder, or build an index for that encoder with `assistant index CORPUS... --encoder "
            f"{encoder.name}`"
        )
    if encoder.backend != built.backend:
        raise IndexLoadError(
            f"this index was built with the {built.backend!r} encoder backend; queries encoded with "
            f"{encoder.backend!r} would not match its vectors exactly: load the encoder with "
            f"backend={built.backend!r}, or rebuild the index with RADSEARCH_ENCODER_BACKEND={encoder.backend}"
        )
    if encoder.backend_version != built.backend_version:
        raise IndexLoadError(
            f"this index was built with version {built.backend_version} of the {built.backend!r} encoder export; "
            f"this RadSearch makes version {encoder.backend_version}, whose vectors differ slightly: rebuild the "
            f"index with `assistant index CORPUS... --encoder {built.name} --out FOLDER`"
        )
    return encoder


def built_encoder(built: EncoderInfo, device: str | None = None) -> Encoder:
    """Load the encoder a manifest names (by name, else from its recorded location) and check it is that one."""
    settings = {"max_seq_length": built.max_seq_length, "backend": built.backend, "device": device}
    try:
        loaded = load_encoder(built.name, **settings)
    except ModelNotAvailable:
        loaded = load_encoder(built.location, **settings)
    return check_encoder(built, loaded)


Parts = tuple[Manifest, dict[str, faiss.Index], dict[str, BM25Field], ReportStore]


def open_parts(folder: Path) -> Parts:
    """Manifest, vectors, BM25 and store of an index folder, every file checked against the manifest first
    (IndexLoadError saying how to rebuild otherwise). A swap killed between its renames is undone first
    (retriever.index.swap). An update that swaps the folder while it is read is no error: the files read then may
    belong to either index (a mismatch that looks like corruption, or a mix that does not), so the folder is read
    again; only a mismatch in a folder that stayed the same is reported."""
    for _ in range(READ_ATTEMPTS):
        before = generation(folder, MANIFEST)
        try:
            parts = _read_parts(folder)
        except IndexLoadError:
            if generation(folder, MANIFEST) == before:
                raise
            continue
        if generation(folder, MANIFEST) == before:
            return parts
        parts[3].close()
    raise IndexLoadError(
        f"{folder} was replaced by another update each of the {READ_ATTEMPTS} times it was read; try again when "
        "the updates have finished"
    )


def _read_parts(folder: Path) -> Parts:
    """One read of the index folder's parts, each file checked against the manifest."""
    rebuild = f"rebuild it with `assistant index CORPUS... --out {folder}`"
    try:
        restore_interrupted(folder)
    except OSError as exc:
        raise IndexLoadError(f"{exc}; or {rebuild}") from exc
    if not folder.is_dir():
        raise IndexLoadError(
            f"no index at {folder}: build one with `assistant index CORPUS... --out {folder}` "
            "(or `make demo` for the demo index)"
        )
    if not any((folder / name).exists() for name in (MANIFEST, STORE_FILE)) and any(folder.iterdir()):  # reports?
        raise IndexLoadError(
            f"{folder} is not an index (no {MANIFEST}; it holds other files): to search the reports in it, build an "
            f"index from them with `assistant index {folder} --out INDEX_FOLDER` and give INDEX_FOLDER"
        )
    try:
        manifest = Manifest.read(folder)
        manifest.verify(folder, index_files(folder, manifest.fields))
    except ValueError as exc:
        raise IndexLoadError(f"{exc}; {rebuild}") from exc
    try:
        vectors = {f: read_vector_index(folder / f"{f}.faiss") for f in manifest.fields}
        bm25 = {f: BM25Field.load(folder / f"bm25_{f}") for f in manifest.fields}
        store = ReportStore(folder / STORE_FILE)
    except (RuntimeError, OSError, ValueError, KeyError, sqlite3.Error) as exc:
        raise IndexLoadError(f"cannot read index in {folder} ({exc}); {rebuild}") from exc
    return manifest, vectors, bm25, store


def write_parts(folder: Path, manifest: Manifest, vectors: dict[str, faiss.Index], bm25: dict[str, BM25Field]) -> None:
    """Write each field's vectors and BM25 into `folder` (which already holds the store), then the manifest."""
    for field_name, index in vectors.items():
        write_field(folder, field_name, index, bm25[field_name])
    write_manifest(folder, manifest)


def write_field(folder: Path, field_name: str, vectors: faiss.Index, bm25: BM25Field) -> None:
    """One field's vectors and BM25."""
    write_vectors(folder, field_name, vectors)
    write_bm25(folder, field_name, bm25)


def write_vectors(folder: Path, field_name: str, vectors: faiss.Index) -> None:
    """A field's vector file (a streaming build writes and frees it before building the field's BM25)."""
    write_vector_index(vectors, folder / f"{field_name}.faiss")


def write_bm25(folder: Path, field_name: str, bm25: BM25Field) -> None:
    bm25.save(folder / f"bm25_{field_name}")


def write_manifest(folder: Path, manifest: Manifest) -> None:
    """The manifest listing every file of `folder` with its checksum: the last file every build and update writes."""
    manifest.files = {name: FileInfo.of(folder / name) for name in index_files(folder, manifest.fields)}
    manifest.write(folder)


class ReportIndex:
    """Searchable reports. Build in memory, save atomically, load with integrity and encoder checks."""

    def __init__(
        self,
        manifest: Manifest,
        store: ReportStore | list[Report],
        vectors: dict[str, object],
        bm25: dict[str, BM25Field],
        encoder: Encoder | None = None,
        *,
        device: str | None = None,
    ) -> None:
        self.manifest = manifest
        self._store = store
        self._vectors = vectors
        self._bm25 = bm25
        self._encoder = encoder
        self._device = device
        #: Held while the encoder is loaded or used: its tokenizer keeps per-call state (truncation on for encoding,
        #: off for counting), so two threads at once can get each other's. Re-entrant: `prepare` loads and counts.
        self._encoder_lock = threading.RLock()
        #: Expands the query's shorthand before search (retriever/search/abbreviations.py); None: the process default.
        self.query_expander: QueryExpander | None = None
        #: Re-scores the first stage's top hits (a cross-encoder, retriever/search/rerank.py, or the support check,
        #: retriever/search/support.py); None: no second stage.
        self.reranker: SecondStage | None = None
        #: The search values measured for this index's encoder (models/preset.json), None when none were.
        self.tuning: SearchPreset | None = PRESET.search_for(manifest.encoder.name)
        #: hybrid-weighted's dense share: the one measured for the encoder (eval.retrieval.fusion_sweep tries others).
        self.dense_weight: float = (self.tuning or PRESET.default_search).dense_weight
        self._dates: StudyDates | None = None  # read on the first search with a date filter
        self._dates_lock = threading.Lock()

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
    ) -> ReportIndex:
        """Encode each field of each report that has it; row id i is reports[i]."""
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
        )
        return cls(manifest, list(reports), vectors, bm25, encoder)

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
    ) -> ReportIndex:
        """Open an index folder after checking every file against the manifest.

        `encoder`: a reference or loaded Encoder the caller wants to search with; refused unless it is the one that
        built the index. Without it, the manifest's encoder is loaded on first dense search, on `device` (None: the
        encoder module's default).
        If a save was killed while swapping folders, the previous index is moved back first (retriever.index.swap).
        """
        manifest, vectors, bm25, store = open_parts(Path(folder))
        index = cls(manifest, store, vectors, bm25, device=device)
        if encoder is not None:
            if not isinstance(encoder, Encoder):
                encoder = load_encoder(encoder, backend=manifest.encoder.backend, device=device)
            index._encoder = check_encoder(manifest.encoder, encoder)
        elif load_encoder_now:
            index.encoder()
        return index

    def encoder(self) -> Encoder:
        """The encoder that built this index (loaded lazily, once; BM25-only use never loads it). Use it through
        `prepare` and `search` when other threads may search this index: they hold the lock its tokenizer needs."""
        with self._encoder_lock:
            if self._encoder is None:
                self._encoder = built_encoder(self.manifest.encoder, self._device)
            return self._encoder

    # --------------------------------------------------------------------------------------------- search
    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(self.manifest.fields)

    def prepare(self, query: str) -> PreparedQuery:
        """Clean the query (EmptyQueryError if empty) and count its tokens against the encoder's limit."""
        text = clean_query(query)
        with self._encoder_lock:
            encoder = self.encoder()
            return PreparedQuery(text, encoder.count_tokens(text), encoder.max_seq_length)

    def search(
        self,
        query: str,
        field: Field = "impression",
        k: int = 5,
        filters: SearchFilters | None = None,
        method: Method = DEFAULT_METHOD,
    ) -> list[Hit]:
        """Top-k reports for `query` matched against one field."""
        if field not in self.manifest.fields:
            raise ValueError(f"field {field!r} is not in this index; it has: {', '.join(self.fields)}")
        method = checked_method(method)
        if k < 1:
            raise ValueError("k must be at least 1")
        text = (self.query_expander or default_expander()).expand(clean_query(query))
        allowed = self._allowed(filters)
        depth = candidate_depth(k)
        if method == "bm25":
            scored = self._bm25[field].search(text, depth, allowed)
        elif method == "dense":
            scored = self._dense(text, field, depth, allowed)
        else:
            fused = max(FUSION_DEPTH, depth)
            dense, lexical = self._dense(text, field, fused, allowed), self._bm25[field].search(text, fused, allowed)
            scored = fuse_dense_and_bm25(method, dense, lexical, self.dense_weight)[:depth]
        reports = self._reports([rowid for rowid, _ in scored])
        if self.reranker is not None and self.reranker.applies_to(field):
            scored = self.reranker.rerank(text, scored, lambda s: reports[s].text_of(field), self._bm25[field].idf)
        ordered = contradicting_last(text, scored, lambda s: reports[s[0]].text_of(field), STOPWORDS)[:k]
        return [
            Hit(
                rank=i,
                score=score,
                field=field,
                report=reports[rowid],
                method=method,
                contradicts=contradicts,
                partly_contradicts=partly,
            )
            for i, ((rowid, score), contradicts, partly) in enumerate(ordered, start=1)
        ]

    def _dense(self, text: str, field: Field, k: int, allowed: np.ndarray | None) -> list[tuple[int, float]]:
        with self._encoder_lock:
            vector = self.encoder().encode([text])[0]
        return search_vectors(self._vectors[field], vector, k, allowed)

    def _allowed(self, filters: SearchFilters | None) -> np.ndarray | None:
        """Row ids the filters let through (None: no filter), as the ids FAISS and BM25 are restricted to."""
        if filters is None or not filters.any():
            return None
        allowed = self._matching(filters) if (filters.modality or filters.source or filters.label) else None
        if filters.since or filters.until:
            dated = self._study_dates().between(filters.since, filters.until)
            allowed = dated if allowed is None else np.intersect1d(allowed, dated)
        return allowed

    def _matching(self, filters: SearchFilters) -> np.ndarray:
        """Row ids of the reports of the filters' modality, source and label."""
        if isinstance(self._store, list):
            keep = [
                i
                for i, r in enumerate(self._store)
                if (not filters.modality or r.modality.lower() == filters.modality.lower())
                and (not filters.source or r.source.lower() == filters.source.lower())
                and (not filters.label or filters.label.lower() in {x.lower() for x in r.labels})
            ]
            return np.array(keep, dtype=np.int64)
        return self._store.filter_rowids(filters.modality, filters.source, filters.label)

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
        if self.tuning is None and method != "bm25":
            found.append(
                f"no search values were measured for {folder}'s encoder {self.manifest.encoder.name!r}: it "
                f"is searched with those measured for the default encoder {PRESET.encoder!r} (dense weight "
                f"{self.dense_weight}); `assistant index` without --encoder builds with that encoder"
            )
        return found

    def describe(self) -> dict[str, object]:
        """Manifest as a plain dict (for `--json` and the UI)."""
        return asdict(self.manifest)
