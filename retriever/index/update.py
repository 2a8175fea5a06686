"""Changing an index instead of rebuilding it: add new reports, replace changed ones, remove some.

    summary = update_index(folder, ingest([...]).reports, removals=["r:17"])

The result is a new version of the folder, written beside it and swapped in (retriever.index.swap): a reader
sees the old index or the new one, never a mix. What each part costs (measured in eval/perf/ingest.py):
- vectors: only new and changed reports are encoded. An exact index adds and removes in place; IVF-PQ adds to its
  trained quantizer, and a removal re-adds the remaining vectors from their SQ8 codes (no retraining, no encoding);
- the store: a copy of the SQLite file, changed with SQL;
- BM25: bm25s cannot add documents, and every document changes the IDF and average length all scores use, so the
  field is re-indexed: from the kept documents' saved term ids plus the new texts (only those are tokenized), or,
  for an index saved without term ids, from the final store's texts (streaming_build.bm25_of_store);
- the manifest: counts, the corpus hash (a pass over the store) and every file's checksum.
An index whose BM25 side was tokenized under other negation rules (Manifest.lexical_rules, an older program) has
every text of the store tokenized anew by any update, or by one that only does that (`retokenize=True`,
`assistant update --retokenize`): old and new terms are never mixed, and no report is encoded again. Likewise the
concepts each report affirms (retriever/index/concept_rows.py): the new and changed reports are linked as they are
written, and an index linked by another vocabulary or linker (Manifest.concept_rules), or built before concepts were
stored, has every report linked anew by any update, or by one that only does that (`relink=True`, `assistant update
--relink`).
An IVF-PQ field whose new vectors sit far from the trained centroids gets a notice with the command that retrains
(retriever/index/drift.py); the update is kept. `retrain=True` (`assistant update --retrain`) trains every
field's quantizer anew on the vectors the index holds, read back from it (faiss_index.retrain_vector_index): no
report is encoded again, and an exact index that grew past EXACT_LIMIT becomes IVF-PQ.
The exclusions are a full build's: duplicate findings, when asked to drop them, are checked against the index too (a
pass over its findings).
A report whose id the index holds is a new version of that study: it replaces the indexed one, which is kept in the
store's history, unless it is older (an earlier study date, or a preliminary after the final:
retriever/reports/versions.py), when it goes to the history itself. Earlier versions the update read
(`IngestResult.history`) are kept there too.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import faiss
import numpy as np

from retriever.concepts.fingerprint import concept_rules
from retriever.encoders.encoder import Encoder, load_encoder
from retriever.index.bm25 import BM25Field
from retriever.index.drift import drift_ratio, drift_warning, held_out_baseline, is_ivf, stored_baseline
from retriever.index.encoder_check import built_encoder, check_encoder
from retriever.index.errors import IndexLoadError
from retriever.index.folder import STORE_FILE, corpus_hash, now, open_parts, write_parts
from retriever.index.manifest import EncoderInfo, Manifest
from retriever.index.output_paths import build_hint
from retriever.index.store import ReportStore, change_store
from retriever.index.streaming_build import bm25_of_store
from retriever.index.swap import one_writer, replacing
from retriever.index.vectors import EXACT_LIMIT, index_kind, remove_vectors, retrain_vector_index
from retriever.negation.tokens import TOKENIZER_FINGERPRINT
from retriever.reports.ingest import Exclusions, findings_key
from retriever.reports.record import Report
from retriever.reports.sources import Rejection
from retriever.reports.versions import older_than


@dataclass
class UpdateSummary:
    """What an update did, by report id; `rejections` are the reports refused against the index's contents."""

    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    retrained: list[str] = field(default_factory=list)  # fields whose vector index was trained anew
    retokenized: bool = False  # the BM25 side was tokenized anew under this program's negation rules
    relinked: bool = False  # every report's concepts were linked anew by this program's vocabulary
    not_found: list[str] = field(default_factory=list)  # ids asked to be removed that the index does not hold
    rejections: list[Rejection] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    older: list[str] = field(default_factory=list)  # read, but older than the indexed version: kept in its history

    def changed(self) -> bool:
        return bool(self.added or self.replaced or self.removed or self.retrained or self.retokenized or self.relinked)


def update_index(
    folder: Path,
    reports: Iterable[Report],
    removals: Iterable[str] = (),
    encoder: str | Encoder | None = None,
    *,
    exclusions: Exclusions | None = None,
    batch_size: int = 32,
    progress: bool = False,
    device: str | None = None,
    retrain: bool = False,
    retokenize: bool = False,
    relink: bool = False,
    history: Iterable[Report] = (),
) -> UpdateSummary:
    """Remove the reports `removals`, then add `reports` (already through `ingest`): an id the index holds is
    replaced if its content changed and skipped if not. `encoder` must be the one that built the index
    (IndexLoadError otherwise); None loads that one. `exclusions`: a full build's defaults unless given. Nothing is
    written when nothing changes. `retrain`: then train each field's vector index anew (see the module docstring).
    `retokenize`: tokenize the BM25 side anew, as an index tokenized under other negation rules always is.
    `relink`: link every report's concepts anew, as an index linked by another vocabulary always is.
    `history`: earlier versions of the studies in `reports` (kept in the store's history)."""
    folder = Path(folder)
    exclusions = exclusions or Exclusions()
    history = list(history)
    if not folder.parent.is_dir():
        raise IndexLoadError(f"no index at {folder}: build one with {build_hint(folder)}")
    with one_writer(folder):
        manifest, vectors, old_bm25, store = open_parts(folder)
        try:
            summary, upserts, gone, replaced = _plan(store, list(reports), set(removals), exclusions)
            summary.retokenized = retokenize or not manifest.current_lexical_rules
            summary.relinked = relink or not manifest.current_concepts
            if not summary.changed() and not retrain and not replaced and not history:
                return summary
            model = _encoder(manifest.encoder, encoder, device) if upserts or gone else None
            for field_name in manifest.fields:
                if not retrain:  # a retrained field gets a new baseline (_retrain)
                    _record_baseline(manifest, vectors[field_name], field_name)
                added = _update_vectors(vectors, field_name, upserts, gone, model, batch_size, progress)
                if retrain:
                    _retrain(manifest, vectors, field_name, progress)
                    summary.retrained.append(field_name)
                elif notice := _drift(manifest, vectors[field_name], field_name, added, folder):
                    summary.notices.append(notice)
        finally:
            store.close()
        with replacing(folder) as tmp:
            shutil.copyfile(folder / STORE_FILE, tmp / STORE_FILE)
            change_store(tmp / STORE_FILE, upserts, gone, [*replaced, *history], relink=summary.relinked)
            manifest.concept_rules = concept_rules()
            bm25 = _updated_store_parts(tmp, manifest, old_bm25, upserts, gone, summary.retokenized, progress)
            manifest.fields = {f: int(vectors[f].ntotal) for f in manifest.fields}
            if retrain:
                manifest.index_type = index_kind(max(manifest.fields.values()))
            manifest.updated = now()
            write_parts(tmp, manifest, vectors, bm25)
    if notice := _exact_limit_notice(manifest, folder):
        summary.notices.append(notice)
    return summary


def _updated_store_parts(
    tmp: Path,
    manifest: Manifest,
    old_bm25: dict[str, BM25Field],
    upserts: list[tuple[int, Report]],
    gone: list[int],
    retokenize: bool,
    progress: bool,
) -> dict[str, BM25Field]:
    """Each field's BM25 over the changed store in `tmp`, with what the manifest says of that store (the tokenizer
    rules, the report count and the corpus hash) brought up to date."""
    new_store = ReportStore(tmp / STORE_FILE)
    try:
        bm25 = {f: _bm25(old_bm25[f], new_store, f, upserts, gone, retokenize, progress) for f in manifest.fields}
        manifest.lexical_rules = TOKENIZER_FINGERPRINT
        manifest.reports = new_store.count()
        manifest.corpus_sha256 = corpus_hash(report for _, report in new_store.iter_reports())
    finally:
        new_store.close()
    return bm25


def _exact_limit_notice(manifest: Manifest, folder: Path) -> str | None:
    """The advice to retrain an exact index that grew past what exact search serves quickly, or None."""
    if manifest.index_type != "flat" or (largest := max(manifest.fields.values())) <= EXACT_LIMIT:
        return None
    return (
        f"the index now holds {largest:,} vectors in a field, more than exact search "
        f"serves quickly ({EXACT_LIMIT:,}); `assistant update --retrain --index {folder}` turns it into IVF-PQ"
    )


def _encoder(built: EncoderInfo, encoder: str | Encoder | None, device: str | None) -> Encoder:
    if encoder is None:
        return built_encoder(built, device)
    if not isinstance(encoder, Encoder):
        encoder = load_encoder(encoder, backend=built.backend, device=device)
    return check_encoder(built, encoder)


def _plan(
    store: ReportStore, reports: list[Report], removals: set[str], exclusions: Exclusions
) -> tuple[UpdateSummary, list[tuple[int, Report]], list[int], list[Report]]:
    """The summary, the (rowid, report) pairs to write, the row ids to delete and the versions to keep in the
    history (the indexed ones replaced or removed, and those read that are older than the indexed one). Removals come
    first: an id both removed and given is added anew."""
    summary = UpdateSummary()
    removed = store.rowids_of(removals)
    summary.removed = sorted(removed)
    summary.not_found = sorted(removals - removed.keys())
    existing = {i: r for i, r in store.rowids_of(r.id for r in reports).items() if i not in removed}
    current = store.get(list(existing.values()))
    candidates: list[tuple[int | None, Report]] = []
    history = list(store.get(sorted(removed.values())).values())  # a removed study's last version is kept too
    for report in reports:
        rowid = existing.get(report.id)
        if rowid is not None and current[rowid] == report:
            summary.unchanged.append(report.id)
        elif rowid is not None and older_than(report, current[rowid]):
            summary.older.append(report.id)
            history.append(report)
        else:
            candidates.append((rowid, report))
    duplicates = {}
    if exclusions.drop_duplicate_findings:
        duplicates = _duplicate_findings(store, candidates, set(removed.values()))
    next_rowid = store.max_rowid() + 1
    upserts = []
    for rowid, report in candidates:
        if report.id in duplicates:
            detail = f"same findings as {duplicates[report.id]} (already in the index)"
            summary.rejections.append(Rejection(report.source, report.id, "duplicate findings", detail))
            continue
        if rowid is None:
            rowid, next_rowid = next_rowid, next_rowid + 1
            summary.added.append(report.id)
        else:
            summary.replaced.append(report.id)
            history.append(current[rowid])
        upserts.append((rowid, report))
    return summary, upserts, sorted(removed.values()), history


def _duplicate_findings(
    store: ReportStore, candidates: list[tuple[int | None, Report]], leaving: set[int]
) -> dict[str, str]:
    """Report id -> id of another indexed report with the same findings (`ingest` compared the new reports among
    themselves). One pass over the store holding only the new reports' keys: memory stays bounded."""
    keys: dict[str, list[str]] = {}
    for _, report in candidates:
        if report.findings:
            keys.setdefault(findings_key(report.findings), []).append(report.id)
    replaced = {rowid for rowid, _ in candidates if rowid is not None}
    found: dict[str, str] = {}
    if not keys:
        return found
    for rowid, indexed in store.iter_reports():
        if rowid in leaving or rowid in replaced or not indexed.findings:
            continue
        for report_id in keys.get(findings_key(indexed.findings), []):
            if report_id != indexed.id:
                found.setdefault(report_id, indexed.id)
    return found


def _update_vectors(
    vectors: dict[str, faiss.Index],
    field_name: str,
    upserts: list[tuple[int, Report]],
    gone: list[int],
    model: Encoder | None,
    batch_size: int,
    progress: bool,
) -> np.ndarray | None:
    """Drop the field's vectors of removed and replaced reports, then add the new texts' vectors (returned)."""
    stale = np.array([*gone, *(rowid for rowid, _ in upserts)], dtype=np.int64)
    if len(stale):
        vectors[field_name] = remove_vectors(vectors[field_name], stale)
    rowids = np.array([rowid for rowid, r in upserts if r.text_of(field_name)], dtype=np.int64)
    texts = [r.text_of(field_name) for _, r in upserts if r.text_of(field_name)]
    if texts and model is not None:
        if progress:
            print(f"encoding {len(texts)} {field_name} texts with {model.name}")
        embedded = model.encode(texts, batch_size=batch_size, progress=progress)
        embedded = np.ascontiguousarray(embedded, dtype=np.float32)
        vectors[field_name].add_with_ids(embedded, rowids)
        return embedded
    return None


def _record_baseline(manifest: Manifest, index: faiss.Index, field_name: str) -> None:
    """An IVF-PQ index built without a recorded drift baseline gets one from its stored vectors, before any are
    added, kept in the manifest from now on (retriever/index/drift.py)."""
    if field_name not in manifest.quantizer_fit and is_ivf(index) and index.ntotal:
        manifest.quantizer_fit[field_name] = round(stored_baseline(index), 6)


def _drift(
    manifest: Manifest, index: faiss.Index, field_name: str, added: np.ndarray | None, folder: Path
) -> str | None:
    """The warning for new IVF-PQ vectors far from the trained centroids (retriever/index/drift.py), or None."""
    if added is None or field_name not in manifest.quantizer_fit:
        return None
    ratio = drift_ratio(index, added, manifest.quantizer_fit[field_name])
    return drift_warning(ratio, len(added), field_name, f"`assistant update --retrain --index {folder}`")


def _retrain(manifest: Manifest, vectors: dict[str, faiss.Index], field_name: str, progress: bool) -> None:
    """Train the field's vector index anew on its stored vectors; an IVF-PQ result gets a new drift baseline."""
    old = vectors[field_name]
    if progress:
        print(f"retraining the {field_name} index on its {old.ntotal:,} vectors")
    vectors[field_name], rows = retrain_vector_index(old)
    manifest.quantizer_fit.pop(field_name, None)
    if is_ivf(vectors[field_name]):
        manifest.quantizer_fit[field_name] = held_out_baseline(
            vectors[field_name], int(old.ntotal), rows, old.index.reconstruct_batch
        )


def _bm25(
    old: BM25Field,
    store: ReportStore,
    field_name: str,
    upserts: list[tuple[int, Report]],
    gone: list[int],
    retokenize: bool,
    progress: bool,
) -> BM25Field:
    """The field's BM25 after the update: re-indexed from the kept documents' term ids plus the new texts, or, for
    an index saved without term ids or tokenized under other rules (`retokenize`), built from the final store's
    texts. Unchanged when no report is."""
    if retokenize:
        return bm25_of_store(store, field_name, progress)
    if not upserts and not gone:
        return old
    rows = [(rowid, text) for rowid, report in upserts if (text := report.text_of(field_name))]
    stale = np.array([*gone, *(rowid for rowid, _ in upserts)], dtype=np.int64)
    updated = old.updated(stale, [rowid for rowid, _ in rows], [text for _, text in rows])
    return updated if updated is not None else bm25_of_store(store, field_name, progress)
