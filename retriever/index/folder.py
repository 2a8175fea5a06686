"""An index folder's files: what it holds (`index_files`), reading them checked against the manifest (`open_parts`,
retried while an update swaps the folder) and writing them (`write_parts`, the manifest last)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import faiss

from retriever.index.bm25 import BM25Field
from retriever.index.errors import IndexLoadError
from retriever.index.manifest import MANIFEST, FileInfo, Manifest, listed_files
from retriever.index.output_paths import build_hint
from retriever.index.store import ReportStore
from retriever.index.swap import generation, restore_interrupted
from retriever.index.vectors import read_vector_index, write_vector_index
from retriever.reports.record import Report

STORE_FILE = "reports.sqlite"
#: Reads of an index folder before a load gives up because updates keep swapping it (each read takes a second or so;
#: an update minutes).
READ_ATTEMPTS = 5


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
    rebuild = f"rebuild it with {build_hint(folder)}"
    try:
        restore_interrupted(folder)
    except OSError as exc:
        raise IndexLoadError(f"{exc}; or {rebuild}") from exc
    if not folder.is_dir():
        raise IndexLoadError(
            f"no index at {folder}: build one with {build_hint(folder)} (or `make demo` for the demo index)"
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
