"""Hospital-scale ingestion (issue 19): adding 1% to an index vs rebuilding it, recall after adds, memory of a
streaming build.

    python -m eval.perf.ingest                       # 1M vectors (about an hour on 2 busy cores)
    python -m eval.perf.ingest --size 100000         # the reduced run committed in eval/results/ingest.md
    python -m eval.perf.ingest --size 5000 --quick   # smoke run

Vectors are synthetic as in eval/perf/search.py (clouds around real MiniLM report embeddings), since encoding a
million reports takes hours on 2 cores; encoding is timed on real reports and its cost per report stated, so the
whole pipeline's ratio is computed from measured parts. In one run, at `--size` vectors per field:
- full rebuild: `build_vector_index` over the final vectors (IVF-PQ above 50k: trained anew) vs update: the base
  index plus `add_with_ids` of the 1% (the trained quantizer kept), and a 0.1% removal (`remove_vectors`);
- recall@10 against exact search, for the updated and the rebuilt index, on held-out synthetic queries;
- BM25 rebuilt over `--size` report texts (what an update pays per field: bm25s cannot add documents);
- peak RSS of `assistant index`'s streaming build of `--size` reports (retriever/index/streaming_build.py) in a child
  process, with a stand-in encoder returning synthetic vectors (reading, store, chunk files, IVF-PQ, BM25, manifest:
  all real); then a second build of the same reports, killed (SIGKILL) once about half of its chunks are written and
  run again: it must finish with the same files (checksums) as the uninterrupted build, re-encoding only what was
  not done.
Each `--size` is its own section of eval/results/ingest.json (`ingest` for the default 1M, `ingest_N` otherwise);
`--parts` re-measures some parts of a stored section, or, for a new size, measures only those (vectors and bm25 are
always needed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from eval.common.machine import load_average
from eval.common.shared_data import RESULTS
from eval.perf import results
from eval.perf.data import NoData, shared_reports
from eval.perf.sections import Bm25Part, DriftPart, Ingest, Stamped, StreamingPart
from eval.perf.synthetic import normalize, synthetic_vectors

RESULTS_JSON = RESULTS / "ingest.json"
ENCODER = "minilm"
K = 10
FIELDS = 3  # findings, impression, report: each has its own vectors and BM25
PARTS = ("vectors", "bm25", "streaming_build", "drift")
DEFAULT_SIZE = 1_000_000
#: Drift levels measured (eval/perf/ingest.py `rotated`): 0 is an in-distribution batch.
DRIFT_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0)


def _timed(action: Any, *args: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = action(*args)
    return value, time.perf_counter() - start


def recall(index: Any, data: np.ndarray, queries: np.ndarray, **tuning: int) -> float:
    """Mean share of the exact top-10 (inner product over `data`, ids = row numbers) that `index` returns
    (`tuning`: search settings other than the product's, see retriever.index.vectors.search_params)."""
    import faiss

    from retriever.index.vectors import search_vectors

    exact = faiss.IndexFlatIP(data.shape[1])
    exact.add(data)
    truth = exact.search(queries, K)[1]
    found = [{i for i, _ in search_vectors(index, q, K, **tuning)} for q in queries]
    return round(float(np.mean([len(f & set(t)) / K for f, t in zip(found, truth, strict=True)])), 4)


def vectors_section(real: np.ndarray, size: int, share: float, queries: int) -> dict[str, Any]:
    """Add `share` of `size` to an index of `size` vs rebuild over both; removal; recall of each."""
    from retriever.index.vectors import build_vector_index, kind_of, remove_vectors

    added = max(1, int(size * share))
    data = synthetic_vectors(real, size + added + queries)
    probe, data = data[-queries:], data[: size + added]
    ids = np.arange(size + added, dtype=np.int64)
    base, base_s = _timed(build_vector_index, data[:size], ids[:size])
    _, add_s = _timed(base.add_with_ids, data[size:], ids[size:])
    updated_recall = recall(base, data, probe)
    rebuilt, rebuild_s = _timed(build_vector_index, data, ids)
    removed = ids[:: max(1, 1000)][: max(1, size // 1000)]
    _, remove_s = _timed(remove_vectors, base, removed)
    return {
        "vectors": size,
        "added": added,
        "kind": kind_of(rebuilt),
        "base_build_s": round(base_s, 2),
        "add_s": round(add_s, 3),
        "rebuild_s": round(rebuild_s, 2),
        "add_share_of_rebuild": round(add_s / rebuild_s, 4),
        "removed": len(removed),
        "remove_s": round(remove_s, 2),
        "recall@10_after_add": updated_recall,
        "recall@10_rebuilt": recall(rebuilt, data, probe),
    }


def rotated(real: np.ndarray, level: float, *, seed: int = 7) -> np.ndarray:
    """The real embeddings moved `level` of the way to a random rotation of themselves (0: unchanged, 1: all of it):
    a corpus of the same shape (clustered, anisotropic) in another region of the space, as a new site's templates,
    another language or a new modality would be. Synthetic vectors around these are a drifted batch."""
    rng = np.random.default_rng(seed)
    rotation, _ = np.linalg.qr(rng.standard_normal((real.shape[1], real.shape[1])))
    return normalize((1 - level) * real + level * (real @ rotation.astype(np.float32)))


def drift_section(real: np.ndarray, size: int, share: float, queries: int, levels: list[float]) -> dict[str, Any]:
    """An IVF-PQ index of `size` vectors grown by a batch of `share` of it, in distribution (level 0) or drifted
    (`rotated`): the drift statistic of retriever/index/drift.py for the batch, and recall@10 of queries near the
    batch's vectors against exact search, after the add and for an index retrained on everything."""
    import faiss

    from retriever.index.drift import SAMPLE, drift_ratio, mean_residual
    from retriever.index.vectors import IVF_NPROBE, build_vector_index, ivf_lists

    batch = max(1, int(size * share))
    base = synthetic_vectors(real, size + SAMPLE, seed=11)
    held_out, base = base[size:], base[:size]
    ids = np.arange(size + batch, dtype=np.int64)
    index, build_s = _timed(build_vector_index, base, ids[:size], "ivfpq")
    baseline = mean_residual(index, held_out)
    # The share of inverted lists a query probes at 1M (IVF_NPROBE of ivf_lists(1M) = 1/8): below ~130k vectors
    # nprobe 256 probes half or all of the lists, which hides what drift does to the lists a query reaches.
    nprobe = max(1, IVF_NPROBE * ivf_lists(size) // ivf_lists(1_000_000))
    rows = []
    for level in levels:
        moved = rotated(real, level)
        new = synthetic_vectors(moved, len(moved) + batch + queries, seed=12)[len(moved) :]
        new, probe = new[:batch], new[batch:]
        grown = faiss.clone_index(index)
        grown.add_with_ids(new, ids[size:])
        data = np.concatenate([base, new])
        ratio, check_s = _timed(drift_ratio, index, new, baseline)
        retrained = build_vector_index(data, ids, "ivfpq")
        rows.append(
            {
                "level": level,
                "ratio": round(ratio, 4),
                "check_s": round(check_s, 3),
                "recall@10_after_add": recall(grown, data, probe),
                "recall@10_retrained": recall(retrained, data, probe),
                "recall@10_after_add_scaled_nprobe": recall(grown, data, probe, nprobe=nprobe),
                "recall@10_retrained_scaled_nprobe": recall(retrained, data, probe, nprobe=nprobe),
            }
        )
        print("drift", rows[-1], flush=True)
    return {
        "vectors": size,
        "batch": batch,
        "lists": ivf_lists(size),
        "scaled_nprobe": nprobe,
        "build_s": round(build_s, 2),
        "baseline": round(baseline, 6),
        "levels": rows,
    }


def report_texts(count: int) -> list[str]:
    """`count` distinct report texts: the shared reports' findings and impressions, cycled and numbered."""
    texts = [f"{r.findings}\n{r.impression}" for r in shared_reports()]
    return [f"{texts[i % len(texts)]} Study {i}." for i in range(count)]


def bm25_section(size: int, share: float) -> dict[str, Any]:
    """BM25 over `size` report texts (a full build's cost per field), then an update adding `share` of them (from
    the kept term ids: only the new texts are tokenized)."""
    from retriever.index.bm25 import BM25Field

    added = max(1, int(size * share))
    texts = report_texts(size + added)
    field, seconds = _timed(BM25Field.build, texts[:size], np.arange(size, dtype=np.int64))
    _, update_s = _timed(field.updated, np.empty(0, dtype=np.int64), list(range(size, size + added)), texts[size:])
    return {
        "texts": size,
        "build_s": round(seconds, 2),
        "us_per_text": round(seconds / size * 1e6, 1),
        "added": added,
        "update_s": round(update_s, 2),
    }


def encoded(encoder: Any, texts: list[str]) -> tuple[np.ndarray, float]:
    """The texts' vectors (the synthetic basis) and seconds per text of the index encoder, in batches of 32 as
    `assistant index` encodes."""
    encoder.encode(texts[:32])
    vectors, seconds = _timed(encoder.encode, texts)
    return vectors, seconds / len(texts)


class SyntheticEncoder:
    """Stands in for the encoder in the streaming-build memory run: same interface, synthetic vectors."""

    name = location = "synthetic"
    fingerprint = "synthetic"
    max_seq_length = 256
    backend = "torch"
    backend_version = 0

    def __init__(self, real: np.ndarray) -> None:
        self._real = real
        self.dims = int(real.shape[1])
        self.calls = 0

    def encode(self, texts: list[str], *, batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """Vectors that depend only on `texts`, so a resumed build encodes a chunk exactly as the first run did."""
        self.calls += 1
        count = len(self._real) + len(texts)
        seed = zlib.crc32("\n".join(texts).encode("utf-8"))
        return synthetic_vectors(self._real, count, seed=seed)[len(self._real) :]


def streaming_child(size: int, real_path: Path, work: Path, index: str) -> dict[str, Any]:
    """Build (or resume) the index `work/index` of `size` reports the way `assistant index` does; peak RSS of this
    process and the encoder calls it made."""
    from retriever.index.streaming_build import encode_and_write, read_reports

    corpus = work / "reports.jsonl"
    if not corpus.is_file():
        with corpus.open("w", encoding="utf-8") as out:
            for i, text in enumerate(report_texts(size)):
                findings, impression = text.split("\n", 1)
                row = {"id": str(i), "findings": f"{findings} Study {i}.", "impression": impression}
                out.write(json.dumps(row) + "\n")
    start = time.perf_counter()
    result = read_reports([str(corpus)], work / index)
    read_s = time.perf_counter() - start
    encoder = SyntheticEncoder(np.load(real_path))
    manifest = encode_and_write(work / index, encoder)
    return {
        "reports": result.kept,
        "index_type": manifest.index_type,
        "read_s": round(read_s, 1),
        "total_s": round(time.perf_counter() - start, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "encoder_calls": encoder.calls,
    }


def _child(size: int, folder: str, index: str) -> list[str]:
    return [sys.executable, "-m", "eval.perf.ingest", "--child", str(size), "--work", folder, "--index", index]


def _checksums(index: Path) -> dict[str, str]:
    return {name: f["sha256"] for name, f in json.loads((index / "manifest.json").read_text())["files"].items()}


def _killed_at_half(size: int, folder: str) -> int:
    """Start a build of `folder/resumed`, SIGKILL it once half of its chunk files are written; the chunks it left."""
    from retriever.index.streaming_build import CHUNK, work_folder

    chunks = work_folder(Path(folder) / "resumed")
    half = max(1, -(-size // CHUNK) // 2)
    child = subprocess.Popen(_child(size, folder, "resumed"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while child.poll() is None and _finished_chunks(chunks) < half:
        time.sleep(0.1)
    child.send_signal(signal.SIGKILL)
    child.wait()
    return _finished_chunks(chunks)


def _finished_chunks(folder: Path) -> int:
    """Chunk files written whole: a chunk being written is `chunk-N.partial.npz` (streaming_build.write_chunk), which
    the resumed build rightly encodes again; counting it made a kill during a write look like lost work."""
    return sum(1 for p in folder.glob("chunk-*.npz") if not p.name.endswith(".partial.npz"))


def streaming_section(size: int, real: np.ndarray) -> dict[str, Any]:
    """The streaming build's peak memory, measured in a fresh process (this one holds the benchmark's vectors), then
    a build killed at about half and resumed, compared file by file with the uninterrupted one."""
    with tempfile.TemporaryDirectory() as folder:
        np.save(Path(folder) / "real.npy", real)
        whole = subprocess.run(_child(size, folder, "whole"), capture_output=True, text=True, check=True)
        measured = json.loads(whole.stdout.strip().splitlines()[-1])
        left = _killed_at_half(size, folder)
        resumed = subprocess.run(_child(size, folder, "resumed"), capture_output=True, text=True, check=True)
        second = json.loads(resumed.stdout.strip().splitlines()[-1])
        same = _checksums(Path(folder) / "whole") == _checksums(Path(folder) / "resumed")
    return {
        **measured,
        "killed_with_chunks": left,
        "resumed_encoder_calls": second["encoder_calls"],
        "resumed_chunks_encoded": second["encoder_calls"] // FIELDS,
        "resumed_total_s": second["total_s"],
        "resumed_peak_rss_mb": second["peak_rss_mb"],
        "resumed_equals_uninterrupted": same,
    }


def main(argv: list[str] | None = None) -> int:
    parser = results.parser(__doc__)
    parser.set_defaults(results=RESULTS_JSON)
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE, help="vectors (and reports) per field")
    parser.add_argument("--share", type=float, default=0.01, help="share of --size added")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--real", type=int, default=3000, help="real report texts encoded as the synthetic basis")
    parser.add_argument(
        "--parts",
        default=",".join(PARTS),
        help="parts to measure; the others are kept from the stored run of the same --size",
    )
    parser.add_argument("--drift-size", type=int, default=50_000, help="IVF-PQ vectors of the drift measurement")
    parser.add_argument("--drift-share", type=float, default=0.05, help="share of --drift-size added per batch")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)  # internal: the streaming-build process
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--index", default="index", help=argparse.SUPPRESS)
    args = results.parse_args(parser, argv)
    if args.child:
        print(json.dumps(streaming_child(args.child, args.work / "real.npy", args.work, args.index)))
        return 0
    section = "ingest" if args.size == DEFAULT_SIZE else f"ingest_{args.size}"
    earlier = results.sections_of(Ingest, args.results).get(f"{section}_quick" if args.quick else section)
    reuse = earlier is not None and earlier.vectors.vectors == args.size
    chosen = set(args.parts.split(","))
    if unknown := chosen - set(PARTS):
        parser.error(f"--parts: unknown {sorted(unknown)}; choose from {', '.join(PARTS)}")
    if not reuse and not {"vectors", "bm25"} <= chosen:
        parser.error(f"--parts: no stored run of --size {args.size}, so vectors and bm25 must be measured")
    data: dict[str, Any] = {"load_average_at_start": load_average()}
    real = np.empty(0)
    if chosen & {"vectors", "streaming_build", "drift"} or not reuse:
        from assistant.settings import EncoderSettings
        from retriever.encoders.encoder import load_encoder

        backend = EncoderSettings.from_env(os.environ).backend  # what `assistant index` builds with
        encoder = load_encoder(ENCODER, backend=backend, threads=args.threads)
        try:
            texts = [t.split(" Study ")[0] for t in report_texts(args.real)]
        except NoData as exc:
            print(f"skipped: {exc}")
            return 0
        real, seconds_per_text = encoded(encoder, texts)
        data["encoder"] = f"{ENCODER} ({encoder.backend})"
        data["encode_ms_per_text"] = round(seconds_per_text * 1000, 2)
    if earlier is not None and reuse and not chosen & {"vectors", "streaming_build"}:  # the parts kept's encoding
        data["encoder"], data["encode_ms_per_text"] = earlier.encoder, earlier.encode_ms_per_text
    parts = {
        "vectors": lambda: vectors_section(real, args.size, args.share, args.queries),
        "bm25": lambda: bm25_section(args.size, args.share),
        "streaming_build": lambda: streaming_section(args.size, real),
        "drift": lambda: {
            "real": len(real),
            **drift_section(real, args.drift_size, args.drift_share, args.queries, list(DRIFT_LEVELS)),
        },
    }
    for name, measure in parts.items():
        if name in chosen:
            data[name] = {
                **measure(),
                "measured": datetime.now(UTC).isoformat(timespec="seconds"),
                "load_average": load_average(),
            }
            print(name, data[name], flush=True)
        elif earlier is not None and (kept := getattr(earlier, name)) is not None:
            data[name] = kept.to_json()  # kept from the earlier run of the same size, with its own stamps
    data["whole_update"] = whole_pipeline(data, args.size)
    results.store_run(section, data, args, "eval.perf.ingest", argv)
    write_markdown(results.sections_of(Ingest, args.results), args.results.with_suffix(".md"))
    print(json.dumps(data, indent=2))
    return 0


def whole_pipeline(data: dict[str, Any], size: int) -> dict[str, float]:
    """Update vs rebuild with every part: encoding (measured per text, x3 fields), vectors and BM25 (measured)."""
    vectors, per_text = data["vectors"], data["encode_ms_per_text"] / 1000
    bm25 = data["bm25"]
    update = FIELDS * (vectors["added"] * per_text + vectors["add_s"] + bm25.get("update_s", bm25["build_s"]))
    rebuild = FIELDS * ((size + vectors["added"]) * per_text + vectors["rebuild_s"] + bm25["build_s"])
    return {"update_s": round(update, 1), "rebuild_s": round(rebuild, 1), "update_share": round(update / rebuild, 4)}


def _stamp(part: Stamped) -> str:
    """When and under what load a part was measured (parts stored before they were stamped have no stamp)."""
    if part.measured is None:
        return "unstamped (stored before parts were stamped: see the git history of ingest.json)"
    return f"{part.measured} {part.load_average}"


def write_markdown(sections: dict[str, Ingest], path: Path) -> None:
    """The human report: one table per run (full and quick)."""
    lines = ["# Ingestion at scale (issue 19)", "", "Generated by `eval/perf/ingest.py`; numbers from ingest.json.", ""]
    for name, run in sections.items():
        v, b, s, w = run.vectors, run.bm25, run.streaming_build, run.whole_update
        parts = {p: part for p in PARTS if (part := getattr(run, p)) is not None}
        lines += [
            f"## {name}: {v.vectors:,} vectors per field ({v.kind}), measured {run.measured}",
            "",
            f"`{run.command}`, {run.threads} thread(s), load average {run.load_average_at_start} at start, "
            f"{run.load_average_at_end} at end; encoder {run.encoder}: {run.encode_ms_per_text} ms per text.",
            "",
            "Per part (measured, load average): " + "; ".join(f"{p} {_stamp(part)}" for p, part in parts.items()) + ".",
            "",
            "| measure | value |",
            "|---|---|",
            f"| add {v.added:,} vectors to the trained index | {v.add_s} s |",
            f"| rebuild the vector index over all {v.vectors + v.added:,} | {v.rebuild_s} s |",
            f"| add / rebuild (vectors, one field) | {v.add_share_of_rebuild:.2%} |",
            f"| remove {v.removed:,} vectors | {v.remove_s} s |",
            f"| recall@10 after add / rebuilt | {v.recall_at_10_after_add} / {v.recall_at_10_rebuilt} |",
            f"| BM25 rebuild per field ({b.texts:,} texts) | {b.build_s} s ({b.us_per_text} us/text) |",
            f"| BM25 update per field (term ids kept, {b.added or 0:,} texts added) | "
            f"{'not measured' if b.update_s is None else b.update_s} s |",
            f"| whole update / whole rebuild, 3 fields, encoding included | {w.update_s} s / {w.rebuild_s} s "
            f"= {w.update_share:.2%} |",
            f"| streaming build of {s.reports:,} reports: peak RSS | {s.peak_rss_mb:,} MB ({s.total_s} s, "
            f"synthetic encoder) |",
            *_resume_row(s),
            "",
            *_bm25_cost(b),
            *_drift_table(run.drift),
        ]
    path.write_text("\n".join(lines), encoding="utf-8")


def _resume_row(s: StreamingPart) -> list[str]:
    """The kill-and-resume check of the streaming build, when the run made it."""
    if s.resumed_equals_uninterrupted is None:
        return []
    from retriever.index.streaming_build import CHUNK

    total = -(-s.reports // CHUNK)
    same = "the same files (checksums) as" if s.resumed_equals_uninterrupted else "**files that differ from**"
    return [
        f"| the same build SIGKILLed at about half, then run again | killed with {s.killed_with_chunks:,} of "
        f"{total:,} chunks written; the second run encoded {s.resumed_chunks_encoded:,} chunks in "
        f"{s.resumed_total_s} s (peak RSS {s.resumed_peak_rss_mb:,} MB) and finished with {same} the "
        "uninterrupted build |"
    ]


def _bm25_cost(b: Bm25Part) -> list[str]:
    """What a BM25 update costs, in words, from the measured part."""
    if b.update_s is None:
        return []
    per_document = b.update_s / b.texts * 1e6
    return [
        f"BM25 update cost: a rebuild per field, not incremental (bm25s cannot add documents, and every added "
        f"document changes the IDF and average length every score uses). An update re-indexes each field from the "
        f"kept documents' stored term ids plus the new texts, and only the new texts are tokenized: "
        f"{b.update_s} s per field to add {b.added or 0:,} texts to {b.texts:,}, "
        f"{b.update_s / b.build_s:.0%} of the {b.build_s} s full BM25 build. It grows linearly with the "
        f"index ({per_document:.0f} us per indexed document per field)"
        + (
            f", so at 1M reports about {per_document:.0f} s per field by extrapolation."
            if b.texts < DEFAULT_SIZE
            else "."
        ),
        "",
    ]


def _drift_table(drift: DriftPart | None) -> list[str]:
    """The drift measurement: the statistic and recall@10 per drift level, and the threshold it justifies."""
    if not drift:
        return []
    from retriever.index.drift import DRIFT_WARN

    lines = [
        f"### Drift of a growing IVF-PQ index ({_stamp(drift)})",
        "",
        f"{drift.vectors:,} synthetic vectors (basis: {drift.real:,} real report embeddings) in IVF-PQ "
        f"({drift.lists} lists), then a batch of {drift.batch:,} added to the trained quantizer: in "
        "distribution (level 0) or drifted (the basis moved that far towards a random rotation of itself: the same "
        "clustered shape in another region, as a new site's templates or another language would be). Ratio: the "
        "batch's mean squared distance to its IVF centroids over that of build vectors left out of training "
        "(retriever/index/drift.py). recall@10 against exact search of queries near the batch's vectors, "
        f"with the product's nprobe 256 and with nprobe {drift.scaled_nprobe}, the share of lists 256 is at "
        "1M (1/8; at this size 256 probes half of them, which hides what drift does).",
        "",
        "| drift level | ratio | recall@10 after add | retrained | after add, nprobe "
        f"{drift.scaled_nprobe} | retrained, nprobe {drift.scaled_nprobe} |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for row in drift.levels:
        lines.append(
            f"| {row.level} | {row.ratio} | {row.recall_at_10_after_add} | {row.recall_at_10_retrained} | "
            f"{row.recall_at_10_after_add_scaled_nprobe} | {row.recall_at_10_retrained_scaled_nprobe} |"
        )
    return [*lines, "", f"`assistant update` warns above a ratio of {DRIFT_WARN} (see the README).", ""]


if __name__ == "__main__":
    raise SystemExit(main())
