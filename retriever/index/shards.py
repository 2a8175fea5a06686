"""Encoding a corpus on several workers: each encodes one shard into a shard folder, and `assistant index
--merge-shards` (retriever/index/shard_merge.py) merges the folders into the index a single process would build.

    read = read_shard(["reports/"], Path("shards/0"), Shard(0, 2))      # worker 0 (worker 1: Shard(1, 2))
    encode_shard(Path("shards/0"), Shard(0, 2), read, encoder)

A shard folder is a streaming build's work folder (retriever/index/streaming_build.py) holding one shard's reports:
`reports.sqlite`, chunk files of the same form and digests, `rejections.jsonl`, and `shard.json`, written last (a
folder without it is unfinished; running the same command again resumes it, reusing every finished chunk).

Every worker reads the whole corpus through the exclusions (reading is cheap next to encoding: 0.36 ms a report
against 40-120 ms of encoding on these CPUs, eval/results/ingest.md), so it decides exactly what a full build
decides: which records are rejected and why (duplicate findings across shards included), and each kept report's row
id. It then keeps the reports whose id hashes into its shard (`shard_of`: SHA-256 of the id, the same on every
machine and Python), under those row ids. `shard.json` records the encoder, the shard and a digest of the whole kept
corpus and its rejections, so the merge can refuse shards of different corpora, options or encoders.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from models.atomic import TEMPORARY_NAME, write_atomic
from retriever.encoders.encoder import Encoder
from retriever.index.output_paths import UnsafeOutput
from retriever.index.report_index import STORE_FILE, encoder_info, now
from retriever.index.store import ReportStore, StoreWriter
from retriever.index.streaming_build import CHUNK, StoreSlots, encode_chunks
from retriever.reports.ingest import Exclusions, IngestResult, iter_ingest, keep_newest
from retriever.reports.record import FIELDS, Report
from retriever.reports.sources import ColumnMap, Rejection

SHARD_FILE = "shard.json"
REJECTS_FILE = "rejections.jsonl"
FORMAT = 1
#: What a shard folder holds; anything else means the folder is something else (refused without --overwrite).
#: A killed write can leave shard.json's temporary (models/atomic.py's name; `.partial` from older versions).
_SHARD_ENTRY = re.compile(
    r"(reports\.sqlite|shard\.json(\.partial)?|"
    + TEMPORARY_NAME.format(name=re.escape(SHARD_FILE))
    + r"|rejections\.jsonl|chunk-\d{6}(\.partial)?\.npz)"
)


class ShardError(ValueError):
    """Shard folders that cannot be merged (or a shard spec that is malformed); the message says what to run."""


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (0-based)."""

    index: int
    count: int

    @classmethod
    def parse(cls, spec: str) -> Shard:
        """`I/N` as given to `--shard`; ShardError unless 0 <= I < N."""
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", spec)
        if not match or not int(match[1]) < int(match[2]):
            raise ShardError(f"--shard {spec!r}: give I/N with 0 <= I < N, e.g. 0/4 ... 3/4 for four workers")
        return cls(int(match[1]), int(match[2]))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_of(report_id: str, count: int) -> int:
    """The shard a report belongs to among `count`: deterministic by id, about equal shares."""
    return int.from_bytes(hashlib.sha256(report_id.encode("utf-8")).digest()[:8], "big") % count


@dataclass
class ShardRead:
    """What reading the corpus gave a worker: the whole corpus's counts and rejections (printed and logged as a full
    build's), its digest, and how many reports fell into this shard."""

    result: IngestResult
    corpus_sha256: str
    reports: int
    rejections_sha256: str = ""
    kept_by_source: dict[str, int] = field(default_factory=dict)
    site: str = ""  # the index's site the corpus was read as ("" for file-named sources)


def prepare_folder(folder: Path, *, overwrite: bool) -> None:
    """Refuse (UnsafeOutput) a `--out` for a shard that exists and holds anything but a shard's files, unless
    `overwrite`, which empties it. Why: a rerun must resume its own shard, never write into someone's folder."""
    if not folder.exists():
        return
    if not folder.is_dir():
        raise UnsafeOutput(f"refusing to write a shard to {folder}: it exists and is not a folder; choose another")
    foreign = sorted(p.name for p in folder.iterdir() if not _SHARD_ENTRY.fullmatch(p.name))
    if foreign and not overwrite:
        raise UnsafeOutput(
            f"refusing to write a shard to {folder}: it holds {', '.join(foreign[:3])}, which a shard folder does not; "
            "choose another folder, or pass --overwrite to delete everything in it"
        )
    if foreign:
        shutil.rmtree(folder)


def corpus_entry(rowid: int, report: Report) -> bytes:
    """What the corpus digest of `shard.json` takes from one kept report: the SHA-256 of its row id and every field,
    so a merge can tell a store edited after the shard was written (the chunk digests cover only ids and texts).
    A digest per report: a shard knows the newest version of every study, not only its own, by digest alone."""
    return hashlib.sha256(json.dumps([rowid, asdict(report)], ensure_ascii=False, sort_keys=True).encode()).digest()


class _ShardSlots(StoreSlots):
    """A shard's slots: its own studies written, every study's newest version's corpus entry kept by row id."""

    def __init__(self, writer: StoreWriter, result: IngestResult, shard: Shard) -> None:
        super().__init__(writer, result, lambda report_id: shard_of(report_id, shard.count) == shard.index)
        self.entries: list[bytes] = []

    def add(self, slot: int, report: Report) -> None:
        super().add(slot, report)
        self.entries.append(corpus_entry(slot, report))

    def replace(self, slot: int, report: Report) -> Report | None:
        self.entries[slot] = corpus_entry(slot, report)
        return super().replace(slot, report)


def read_shard(
    corpora: Iterable[str],
    folder: Path,
    shard: Shard,
    exclusions: Exclusions | None = None,
    mapping: ColumnMap | None = None,
    site: str | None = None,
) -> ShardRead:
    """Read the whole corpus through the exclusions; this shard's reports into the folder's store under the row ids
    a full build gives them (`site`: the index's, retriever/reports/sources/names.py). The folder's `shard.json` is
    removed first: it is valid again only once encoded."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SHARD_FILE).unlink(missing_ok=True)
    (folder / STORE_FILE).unlink(missing_ok=True)
    result = IngestResult()
    corpus = hashlib.sha256()
    with StoreWriter(folder / STORE_FILE) as writer:
        slots = _ShardSlots(writer, result, shard)
        keep_newest(iter_ingest(corpora, exclusions or Exclusions(), mapping, result, site=site), result, slots)
        mine = writer.count
    for entry in slots.entries:
        corpus.update(entry)
    lines = "".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in result.rejections)
    (folder / REJECTS_FILE).write_text(lines, encoding="utf-8")
    return ShardRead(
        result,
        corpus.hexdigest(),
        mine,
        hashlib.sha256(lines.encode("utf-8")).hexdigest(),
        dict(sorted(result.streamed.items())),
        site or "",
    )


def encode_shard(
    folder: Path,
    shard: Shard,
    read: ShardRead,
    encoder: Encoder,
    fields: tuple[str, ...] = FIELDS,
    *,
    chunk_size: int = CHUNK,
    batch_size: int = 32,
    progress: bool = False,
) -> dict[str, object]:
    """Encode the shard's reports into chunk files (finished ones of a killed run are reused), then write
    `shard.json`: the record the merge checks. Returns it."""
    store = ReportStore(folder / STORE_FILE)
    try:
        chunks = encode_chunks(folder, store, encoder, fields, chunk_size, batch_size, progress)
    finally:
        store.close()
    record = {
        "format": FORMAT,
        "shard": shard.index,
        "shards": shard.count,
        "encoder": asdict(encoder_info(encoder)),
        "fields": list(fields),
        "chunk_size": chunk_size,
        "chunks": len(chunks),
        "reports": read.reports,
        "corpus": {
            "sha256": read.corpus_sha256,
            "reports": read.result.kept,
            "kept_by_source": read.kept_by_source,
            "rejections": len(read.result.rejections),
            "rejections_sha256": read.rejections_sha256,
            "site": read.site,
        },
        "created": now(),
    }
    write_atomic(folder / SHARD_FILE, json.dumps(record, indent=2) + "\n")
    return record


def read_rejections(folder: Path) -> list[Rejection]:
    """The rejections a worker recorded (every worker records the whole corpus's)."""
    lines = (folder / REJECTS_FILE).read_text(encoding="utf-8").splitlines()
    return [Rejection(**json.loads(line)) for line in lines if line]
