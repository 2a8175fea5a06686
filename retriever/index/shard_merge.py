"""Merging shard folders (retriever/index/shards.py) into one index: the index a single process builds from the corpus.

    shards = open_shards([Path("shards/0"), Path("shards/1")])   # checks; shards.result: counts and rejections
    manifest = merge_shards(shards, Path("index"))

Checks first, refusing with ShardError and what to run: every folder a finished shard (`shard.json`), the shards
0..N-1 of one N each given once, one encoder (weights, dims, backend, export version) and fields, one corpus read
with the same options (digest of every kept report and every rejection), and each chunk file holding the vectors
of exactly its shard's reports (the streaming build's digest).

Then, in the index's work folder (`.NAME.build`): the shards' stores merged into one, in row id order, and the
vectors re-cut into the chunk files a single-process build of the whole corpus writes, under the digests it gives
them. The streaming build's assembly (`encode_and_write`) then finds every chunk encoded and builds the index from
them: the same IVF-PQ training sample, BM25, store and manifest as a single-process build, and no encoder loaded
(a stand-in carries the shards' encoder identity). Disk: the merge writes the vectors once more (about 4.6 GB per
million reports, removed with the work folder); memory: one chunk per shard and field.
"""

from __future__ import annotations

import hashlib
import heapq
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from retriever.index.manifest import EncoderInfo, Manifest
from retriever.index.report_index import STORE_FILE
from retriever.index.shards import (
    FORMAT,
    REJECTS_FILE,
    SHARD_FILE,
    ShardError,
    corpus_entry,
    read_rejections,
    shard_of,
)
from retriever.index.store import ReportStore, StoreWriter
from retriever.index.streaming_build import (
    CHUNK,
    chunk_digest,
    chunk_holds,
    chunk_path,
    chunked,
    encode_and_write,
    work_folder,
    write_chunk,
)
from retriever.reports.ingest import IngestResult


class RecordedEncoder:
    """The shards' encoder as their records name it, without weights: the merge only reuses encoded chunks."""

    def __init__(self, info: EncoderInfo) -> None:
        self.name, self.location, self.fingerprint = info.name, info.location, info.fingerprint
        self.dims, self.max_seq_length = info.dims, info.max_seq_length
        self.backend, self.backend_version = info.backend, info.backend_version

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        raise ShardError(f"merging shards found {len(texts)} texts without vectors: a shard chunk is missing")


@dataclass
class ShardSet:
    """Checked shard folders in shard order, their records, and the corpus's counts and rejections."""

    folders: list[Path]
    records: list[dict]
    result: IngestResult
    encoder: RecordedEncoder
    fields: tuple[str, ...]


def open_shards(folders: list[Path]) -> ShardSet:
    """Read and cross-check the folders' records (see the module docstring); ShardError saying what differs."""
    if not folders:
        raise ShardError("give the shard folders to merge")
    records = [_record(folder) for folder in folders]
    count = records[0]["shards"]
    for folder, record in zip(folders, records, strict=True):
        if record["shards"] != count:
            raise ShardError(
                f"{folder} is shard {record['shard']}/{record['shards']}, {folders[0]} is shard "
                f"{records[0]['shard']}/{count}: merge the shards of one split (the same N in every --shard I/N)"
            )
    given = Counter(record["shard"] for record in records)
    if twice := sorted(i for i, n in given.items() if n > 1):
        raise ShardError(f"shard {twice[0]}/{count} is given more than once; give each shard folder once")
    if missing := sorted(set(range(count)) - given.keys()):
        raise ShardError(
            f"shards {', '.join(f'{i}/{count}' for i in missing)} are missing: encode them "
            f"(`assistant index CORPUS... --shard I/{count} --out FOLDER`) and give every shard folder"
        )
    order = sorted(range(count), key=lambda j: records[j]["shard"])
    folders, records = [folders[j] for j in order], [records[j] for j in order]
    first = records[0]
    for folder, record in zip(folders[1:], records[1:], strict=True):
        _same_encoder(folders[0], first, folder, record)
        if record["fields"] != first["fields"] or record["corpus"] != first["corpus"]:
            raise ShardError(
                f"{folder} and {folders[0]} were read from different corpora or with different options (their "
                "reports, rejections or fields differ: other files, --map, --keep-incomplete or "
                "--keep-duplicate-findings); encode every shard from the same files with the same options"
            )
    corpus = first["corpus"]
    if sum(record["reports"] for record in records) != corpus["reports"]:
        raise ShardError(
            f"the shards hold {sum(r['reports'] for r in records)} reports, their corpus "
            f"{corpus['reports']}: encode every shard again"
        )
    rejects = (folders[0] / REJECTS_FILE).read_bytes()
    if hashlib.sha256(rejects).hexdigest() != corpus["rejections_sha256"]:
        raise ShardError(f"{folders[0] / REJECTS_FILE} was changed after the shard was encoded; encode it again")
    result = IngestResult(rejections=read_rejections(folders[0]), streamed=Counter(corpus["kept_by_source"]))
    info = EncoderInfo(**first["encoder"])
    return ShardSet(folders, records, result, RecordedEncoder(info), tuple(first["fields"]))


def _record(folder: Path) -> dict:
    path = folder / SHARD_FILE
    if not path.is_file():
        raise ShardError(
            f"{folder} is not a finished shard ({SHARD_FILE} is missing): run its `assistant index CORPUS... "
            f"--shard I/N --out {folder}` again (it resumes where it stopped)"
        )
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("format") != FORMAT:
            raise ValueError(f"shard format {record.get('format')}, this program reads {FORMAT}")
        EncoderInfo(**record["encoder"])
        for key in ("shard", "shards", "reports", "chunks", "chunk_size", "fields", "corpus"):
            record[key]  # noqa: B018 - presence check
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ShardError(f"{path} is not a valid shard record ({exc}); encode that shard again") from exc
    return record


def _same_encoder(first_folder: Path, first: dict, folder: Path, record: dict) -> None:
    a, b = EncoderInfo(**first["encoder"]), EncoderInfo(**record["encoder"])
    keys = ("fingerprint", "dims", "backend", "backend_version")
    if any(getattr(a, k) != getattr(b, k) for k in keys):

        def described(info: EncoderInfo) -> str:
            return (
                f"{info.name!r} ({info.dims}-d, weights {info.fingerprint[:12]}, backend {info.backend} "
                f"v{info.backend_version})"
            )

        raise ShardError(
            f"shard {record['shard']}/{record['shards']} ({folder}) was encoded with {described(b)}, shard "
            f"{first['shard']}/{first['shards']} ({first_folder}) with {described(a)}: vectors of different "
            f"encoders cannot share an index; encode it again with --encoder {a.name} and "
            f"RADSEARCH_ENCODER_BACKEND={a.backend}"
        )


def merge_shards(
    shards: ShardSet, out: Path, *, chunk_size: int = CHUNK, overwrite: bool = False, progress: bool = False
) -> Manifest:
    """Merge checked shards into the index folder `out` (see the module docstring); its manifest."""
    work = work_folder(out)
    work.mkdir(parents=True, exist_ok=True)
    (work / STORE_FILE).unlink(missing_ok=True)
    stores = [ReportStore(folder / STORE_FILE) for folder in shards.folders]
    try:
        for folder, record, store in zip(shards.folders, shards.records, stores, strict=True):
            _check_chunks(shards, folder, record, store)
        _merge_stores(stores, work / STORE_FILE, shards.records[0]["corpus"])
    finally:
        for store in stores:
            store.close()
    merged = ReportStore(work / STORE_FILE)
    try:
        _recut(shards, merged, work, chunk_size, progress)
    finally:
        merged.close()
    site = str(shards.records[0]["corpus"].get("site", ""))  # shards of one corpus: one site (the corpus check)
    return encode_and_write(out, shards.encoder, shards.fields, chunk_size=chunk_size, overwrite=overwrite, site=site)


def _check_chunks(shards: ShardSet, folder: Path, record: dict, store: ReportStore) -> None:
    """Each chunk file of a shard holds the vectors of exactly its reports, by this encoder (the digest)."""
    chunks = list(chunked(store.iter_reports(), record["chunk_size"]))
    for number, chunk in enumerate(chunks):
        path = chunk_path(folder, number)
        if not chunk_holds(path, chunk_digest(shards.encoder, shards.fields, chunk)):
            raise ShardError(
                f"{path} does not hold the vectors of shard {record['shard']}/{record['shards']}'s reports "
                f"(missing, partial or from another run): run that shard's `assistant index ... --shard "
                f"{record['shard']}/{record['shards']} --out {folder}` again (it resumes)"
            )
    if len(chunks) != record["chunks"]:
        raise ShardError(f"{folder} holds {len(chunks)} chunks of reports, its record {record['chunks']}")


def _merge_stores(stores: list[ReportStore], path: Path, corpus: dict) -> None:
    """One store of every shard's reports, in row id order; the row ids must be exactly 0..N-1 and the reports
    (ids, texts, modality, source, meta) the corpus the shards recorded."""
    digest = hashlib.sha256()
    with StoreWriter(path) as writer:
        merged = heapq.merge(*(store.iter_reports() for store in stores), key=lambda row: row[0])
        for expected, (rowid, report) in enumerate(merged):
            if rowid != expected:
                raise ShardError(f"the shards' row ids skip or repeat {expected}: they are not shards of one corpus")
            writer.add(report, rowid)
            digest.update(corpus_entry(rowid, report))
        for store in stores:  # each shard keeps the earlier versions of its own studies
            writer.keep_history(store.all_history())
    if writer.count != corpus["reports"]:
        raise ShardError(f"the shards hold {writer.count} reports, their corpus {corpus['reports']}")
    if digest.hexdigest() != corpus["sha256"]:
        raise ShardError(
            "a shard's reports.sqlite was changed after the shard was encoded (its reports differ from the corpus "
            "the shards recorded): encode the shards again"
        )


def _recut(shards: ShardSet, merged: ReportStore, work: Path, chunk_size: int, progress: bool) -> None:
    """Write the chunk files a single-process build of the merged store writes, with vectors from the shards."""
    count = len(shards.folders)
    cursors = {
        (s, f): _vectors(folder, f, record["chunks"])
        for s, (folder, record) in enumerate(zip(shards.folders, shards.records, strict=True))
        for f in shards.fields
    }
    dims = shards.encoder.dims
    with tqdm(total=merged.count(), unit="reports", desc="merging shards", disable=not progress) as bar:
        for number, chunk in enumerate(chunked(merged.iter_reports(), chunk_size)):
            arrays = {}
            for field_name in shards.fields:
                rows = [(rowid, shard_of(r.id, count)) for rowid, r in chunk if r.text_of(field_name)]
                vectors = np.zeros((len(rows), dims), dtype=np.float32)
                for position, (rowid, shard) in enumerate(rows):
                    found, vectors[position] = next(cursors[shard, field_name], (None, 0.0))
                    if found != rowid:
                        raise ShardError(f"shard {shard}/{count} has no {field_name} vector for row {rowid}")
                arrays[f"{field_name}_rowids"] = np.array([rowid for rowid, _ in rows], dtype=np.int64)
                arrays[f"{field_name}_vectors"] = vectors
            write_chunk(chunk_path(work, number), chunk_digest(shards.encoder, shards.fields, chunk), arrays)
            bar.update(len(chunk))


def _vectors(folder: Path, field_name: str, chunks: int) -> Iterator[tuple[int, np.ndarray]]:
    """(row id, vector) of one field of a shard, in row id order, one chunk file in memory at a time."""
    for number in range(chunks):
        with np.load(chunk_path(folder, number)) as saved:
            rowids, vectors = saved[f"{field_name}_rowids"], saved[f"{field_name}_vectors"]
        yield from zip(rowids.tolist(), vectors, strict=True)
