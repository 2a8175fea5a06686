"""Building an index of millions of reports in bounded memory, resumable after a kill.

    result = read_reports(["reports/"], out, exclusions, mapping)     # 1. read
    manifest = encode_and_write(out, encoder, progress=True)          # 2. encode, 3. assemble and swap in

No pass holds every report or every vector:
1. read: reports go through the exclusions one at a time (retriever.reports.ingest.iter_ingest) into a SQLite store in
the
   work folder `.NAME.build` beside the index; only the exclusions' keys (ids, findings) stay in memory;
2. encode: CHUNK reports at a time, read back from that store; each chunk's vectors per field are saved as one file
   (`chunk-000012.npz`, written under a temp name and renamed, so a chunk file is whole or absent), with a
   progress bar and ETA over all reports;
3. assemble, into a staged folder swapped in at the end (retriever.index.swap): per field, its vector index from the
   chunk files (IVF-PQ trained on the sample an in-memory build takes, `training_rows`), then its BM25 from the
   store, one field in memory at a time; the manifest last. The work folder is removed once the index is in place.
Resume: a killed build leaves the work folder. The next build of the same folder reads the reports again (cheap next
to encoding) and reuses every chunk file whose recorded digest (encoder, fields, row ids, texts) matches its
reports now, so finished chunks are not encoded again and a changed corpus or encoder never reuses stale vectors.
Encoding on other machines (README, "Indexing at hospital scale"): each worker writes chunk files of the same form.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import faiss
import numpy as np
from tqdm import tqdm

from models.preset import PRESET
from retriever.concepts.fingerprint import concept_rules
from retriever.encoders.encoder import Encoder
from retriever.index.bm25 import BM25Field
from retriever.index.drift import held_out_baseline
from retriever.index.encoder_check import encoder_info
from retriever.index.folder import STORE_FILE, corpus_hash, now, write_bm25, write_manifest, write_vectors
from retriever.index.manifest import Manifest
from retriever.index.output_paths import check_replaceable
from retriever.index.store import ReportStore, StoreWriter
from retriever.index.swap import discard, replacing, restore_interrupted
from retriever.index.vectors import index_kind, new_vector_index, training_rows
from retriever.negation.tokens import TOKENIZER_FINGERPRINT
from retriever.reports.ingest import Exclusions, IngestResult, iter_ingest, keep_newest
from retriever.reports.record import FIELDS, Report
from retriever.reports.sources import ColumnMap

#: Reports encoded per chunk file: ~3 MB of vectors per field at 384-d; at most this much work is lost to a kill.
CHUNK = 1024


def work_folder(out: Path) -> Path:
    """Where a build of `out` keeps its store and encoded chunks until the index is in place."""
    return out.with_name(f".{out.name}.build")


def read_reports(
    corpora: Iterable[str],
    out: Path,
    exclusions: Exclusions | None = None,
    mapping: ColumnMap | None = None,
    site: str | None = None,
) -> IngestResult:
    """Pass 1: every study's newest version into the work folder's store (counted per source in `streamed`), its
    earlier ones into the store's history, every rejection into the result. The caller prints the counts before any
    encoding starts. `site`: the index's site name (retriever/reports/sources/names.py)."""
    work = work_folder(out)
    work.mkdir(parents=True, exist_ok=True)
    (work / STORE_FILE).unlink(missing_ok=True)
    result = IngestResult()
    with StoreWriter(work / STORE_FILE) as writer:
        stream = iter_ingest(corpora, exclusions or Exclusions(), mapping, result, site=site)
        keep_newest(stream, result, StoreSlots(writer, result))
    return result


class StoreSlots:
    """A build's slots (retriever.reports.ingest.Slots): row id i holds the i-th study read; with `mine`, only the
    studies it accepts are written (a shard's), the others only counted."""

    def __init__(self, writer: StoreWriter, result: IngestResult, mine: Callable[[str], bool] | None = None) -> None:
        self._writer, self._result, self._mine = writer, result, mine

    def add(self, slot: int, report: Report) -> None:
        self._result.streamed[report.source] += 1
        if self._mine is None or self._mine(report.id):
            self._writer.add(report, slot)

    def replace(self, slot: int, report: Report) -> Report | None:
        if self._mine is None or self._mine(report.id):
            return self._writer.replace(slot, report)
        return None

    def keep_earlier(self, report: Report, when: str) -> None:
        if self._mine is None or self._mine(report.id):
            self._writer.keep_earlier(report, when)


def encode_and_write(
    out: Path,
    encoder: Encoder,
    fields: tuple[str, ...] = FIELDS,
    *,
    chunk_size: int = CHUNK,
    batch_size: int = 32,
    progress: bool = False,
    overwrite: bool = False,
    column_map: Mapping[str, str] | None = None,
    site: str = "",
) -> Manifest:
    """Passes 2 and 3 over the reports `read_reports` stored: the written index's manifest. Refuses (UnsafeOutput)
    to replace a folder that is not an index unless `overwrite`; ValueError if there is nothing to index."""
    work = work_folder(out)
    source = ReportStore(work / STORE_FILE)
    try:
        if source.count() == 0:
            raise ValueError("no reports to index (all were rejected or the corpus is empty)")
        chunks = encode_chunks(work, source, encoder, fields, chunk_size, batch_size, progress)
        restore_interrupted(out)
        check_replaceable(out, overwrite=overwrite)
        with replacing(out) as tmp:
            shutil.copyfile(work / STORE_FILE, tmp / STORE_FILE)
            counts = {}
            fit = {}
            for field_name in fields:
                vectors, residual = _vector_index(chunks, field_name, encoder.dims)
                counts[field_name] = int(vectors.ntotal)
                if residual is not None:
                    fit[field_name] = residual
                write_vectors(tmp, field_name, vectors)
                del vectors  # one field's vectors or its BM25 in memory, never both
                write_bm25(tmp, field_name, bm25_of_store(source, field_name, progress))
            manifest = Manifest(
                encoder=encoder_info(encoder),
                fields=counts,
                reports=source.count(),
                corpus_sha256=corpus_hash(report for _, report in source.iter_reports()),
                created=now(),
                index_type=index_kind(max(counts.values())),
                quantizer_fit=fit,
                lexical_rules=TOKENIZER_FINGERPRINT,
                column_map=dict(column_map or {}),
                site=site,
                search=PRESET.card_for(encoder.name),
                concept_rules=concept_rules(),
            )
            write_manifest(tmp, manifest)
    finally:
        source.close()
    discard(work)
    return manifest


def encode_chunks(
    work: Path,
    store: ReportStore,
    encoder: Encoder,
    fields: tuple[str, ...],
    chunk_size: int,
    batch_size: int,
    progress: bool,
) -> list[Path]:
    """Pass 2: the chunk files, in row id order; chunks already encoded by a killed run are kept."""
    paths = []
    with tqdm(total=store.count(), unit="reports", desc=f"encoding with {encoder.name}", disable=not progress) as bar:
        for number, chunk in enumerate(chunked(store.iter_reports(), chunk_size)):
            path = chunk_path(work, number)
            digest = chunk_digest(encoder, fields, chunk)
            if not chunk_holds(path, digest):
                write_chunk(path, digest, _encoded(chunk, encoder, fields, batch_size))
            paths.append(path)
            bar.update(len(chunk))
    return paths


def chunk_path(folder: Path, number: int) -> Path:
    """Chunk file `number` (from 0) of a build's or a shard's work folder."""
    return folder / f"chunk-{number:06d}.npz"


def write_chunk(path: Path, digest: str, arrays: dict[str, np.ndarray]) -> None:
    """Write a chunk file under a temp name and rename it: a chunk file is whole or absent."""
    partial = path.with_name(f"{path.stem}.partial.npz")
    np.savez(partial, digest=np.array(digest), **arrays)
    os.replace(partial, path)


def _encoded(
    chunk: list[tuple[int, Report]], encoder: Encoder, fields: tuple[str, ...], batch_size: int
) -> dict[str, np.ndarray]:
    """`FIELD_rowids` and `FIELD_vectors` of one chunk: the reports that have the field, and their vectors."""
    arrays = {}
    for field_name in fields:
        rows = [(rowid, text) for rowid, report in chunk if (text := report.text_of(field_name))]
        vectors = np.zeros((0, encoder.dims), dtype=np.float32)
        if rows:
            vectors = encoder.encode([text for _, text in rows], batch_size=batch_size)
        arrays[f"{field_name}_rowids"] = np.array([rowid for rowid, _ in rows], dtype=np.int64)
        arrays[f"{field_name}_vectors"] = np.asarray(vectors, dtype=np.float32)
    return arrays


def chunked(rows: Iterator[tuple[int, Report]], size: int) -> Iterator[list[tuple[int, Report]]]:
    chunk: list[tuple[int, Report]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def chunk_digest(encoder: Encoder, fields: tuple[str, ...], chunk: list[tuple[int, Report]]) -> str:
    """What a chunk file's vectors depend on: the encoder's weights and backend, the fields, row ids and texts."""
    built_by = [encoder.fingerprint, encoder.backend, encoder.backend_version, fields]
    digest = hashlib.sha256(json.dumps(built_by).encode())
    for rowid, report in chunk:
        digest.update(json.dumps([rowid, *(report.text_of(f) for f in fields)], ensure_ascii=False).encode())
    return digest.hexdigest()


def chunk_holds(path: Path, digest: str) -> bool:
    """Whether `path` is a whole chunk file encoded from exactly these reports."""
    try:
        with np.load(path) as saved:
            return str(saved["digest"]) == digest
    except (OSError, ValueError, KeyError):
        return False


def _vector_index(chunks: list[Path], field_name: str, dims: int) -> tuple[faiss.Index, float | None]:
    """One field's vector index from the chunk files: trained (IVF-PQ) on the rows an in-memory build of the same
    vectors would train on, then filled a chunk at a time. With it, for IVF-PQ, the mean residual of vectors left out
    of training (the baseline `assistant update` compares new vectors with: retriever/index/drift.py)."""
    sizes = []
    for path in chunks:
        with np.load(path) as saved:
            sizes.append(len(saved[f"{field_name}_rowids"]))
    index = new_vector_index(dims, sum(sizes))
    rows = training_rows(index, sum(sizes))
    residual = None
    if len(rows):
        index.train(_gather(chunks, field_name, sizes, rows))
        residual = held_out_baseline(index, sum(sizes), rows, lambda at: _gather(chunks, field_name, sizes, at))
    for path in chunks:
        with np.load(path) as saved:
            if len(saved[f"{field_name}_rowids"]):
                index.add_with_ids(saved[f"{field_name}_vectors"], saved[f"{field_name}_rowids"])
    return index, residual


def _gather(chunks: list[Path], field_name: str, sizes: list[int], rows: np.ndarray) -> np.ndarray:
    """The vectors at positions `rows` (sorted) of the field's vectors in chunk order."""
    parts, start = [], 0
    for path, size in zip(chunks, sizes, strict=True):
        inside = rows[(rows >= start) & (rows < start + size)] - start
        if len(inside):
            with np.load(path) as saved:
                parts.append(saved[f"{field_name}_vectors"][inside])
        start += size
    return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)


def bm25_of_store(store: ReportStore, field_name: str, progress: bool = False) -> BM25Field:
    """BM25 of one field over every report in `store`, in row id order (the order a full build gives them); the
    texts are read from the store as BM25 tokenizes them, never held together. `progress`: a bar over the reports,
    since tokenizing (the negation scopes) takes minutes at hospital scale."""
    rowids: list[int] = []

    def texts() -> Iterator[str]:
        with tqdm(total=store.count(), unit="reports", desc=f"BM25 {field_name}", disable=not progress) as bar:
            for rowid, report in store.iter_reports():
                bar.update()
                if text := report.text_of(field_name):
                    rowids.append(rowid)
                    yield text

    return BM25Field.build(texts(), rowids)
