"""sentence-transformers' own ONNX backend and int8 helper against the project's export (issue 18), for MiniLM.

    python -m eval.perf.st_onnx --library-python /path/to/other/venv/bin/python

The library's path is `SentenceTransformer(folder, backend="onnx")` (an export through optimum-onnx) and, for int8,
`export_dynamic_quantized_onnx_model(model, "avx2", folder)`. It needs optimum-onnx, whose newest release (0.1.0)
requires transformers < 4.58 while the product runs transformers 5 (it fails to import there: `get_parameter_dtype`
is gone), so it cannot be installed beside the product. It is measured in another environment (`--library-python`:
an interpreter with torch, sentence-transformers < 6, transformers < 4.58 and optimum-onnx[onnxruntime]), run by
this script as a child process on the same texts and the same weights (a copy of the registry's model folder: the
library writes its exports into the folder it loads). Such an environment, from this machine's torch wheel:

    python3.11 -m venv V && V/bin/pip install torch==2.13.0 "transformers<4.58" "sentence-transformers<6" \
        "optimum-onnx[onnxruntime]==0.1.0" onnxruntime==1.31.1

Both sides encode the same TEXTS full report texts of the shared data (eval.perf.data.sample_texts) on 1 thread
(ONNX Runtime intra- and inter-op threads, torch), each path with its own default batch size, after a warm-up, in
ROUNDS interleaved rounds; reports/s = texts encoded / time. Quality is the cosine of every vector to the torch
(fp32) vector of the same text from the product's own sentence-transformers: equal quality = a mean cosine of at
least retriever.encoders.onnx.quantize.MIN_COSINE, the bar the project's int8 recipe must pass. Writes
eval/results/st_onnx.{json,md}, stamped with the load average (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from eval.common.machine import Machine
from eval.common.records import Record, ResultsFile

ENCODER = "minilm"
TEXTS = 256
ROUNDS = 3
#: The library's path counts as a replacement when it is at least this share of the project's speed at equal quality.
WITHIN = 0.9
#: optimum's dynamic int8 configuration for this CPU family (the machine has AVX2, no AVX-512/VNNI).
QUANTIZATION = "avx2"
LIBRARY_BATCH = 32  # SentenceTransformer.encode's default


@dataclass
class OnnxPath(Record):
    """One way of running the encoder: its speed, time to a usable encoder and closeness to torch's vectors."""

    path: str
    reports_per_s: float
    ready_s: float
    batch: int
    cosine_to_torch_mean: float
    cosine_to_torch_min: float


@dataclass
class LibraryVerdict(Record):
    """The library's speed as a share of the project's at one precision, and whether it may replace it."""

    library_speed_share: float
    equal_quality: bool
    library_within: bool


@dataclass
class StOnnx(ResultsFile):
    """The library's ONNX path against the project's export (eval/results/st_onnx.json)."""

    KIND = "sentence-transformers ONNX results"

    created: str
    command: str
    encoder: str
    texts: int
    threads: int
    rounds: int
    quantization_config: str
    equal_quality_cosine: float
    machine: Machine
    library_versions: dict[str, str]
    #: Load averages at the start, after the project's side and after the library's.
    load_average: dict[str, list[float]]
    rows: list[OnnxPath]
    verdict: dict[str, LibraryVerdict]


def timed_rounds(encoders: dict[str, Any], texts: list[str], rounds: int = ROUNDS) -> dict[str, tuple[Any, float]]:
    """name -> (vectors, reports/s) for name -> encode(texts) callables: a warm-up each, then `rounds` rounds with
    the order rotating, so a change in the machine's load hits every path alike."""
    for encode in encoders.values():
        encode(texts[:4])
    names, seconds, vectors = list(encoders), dict.fromkeys(encoders, 0.0), {}
    for round_ in range(rounds):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            start = time.perf_counter()
            vectors[name] = np.asarray(encoders[name](texts), dtype=np.float32)
            seconds[name] += time.perf_counter() - start
    return {name: (vectors[name], rounds * len(texts) / seconds[name]) for name in names}


def library_side(texts_file: Path, model_dir: Path, out_file: Path) -> None:
    """Run in the library's environment: export, quantize, time and encode with sentence-transformers' ONNX path."""
    import importlib.metadata as metadata

    import onnxruntime as ort
    import torch
    from sentence_transformers import SentenceTransformer, export_dynamic_quantized_onnx_model

    torch.set_num_threads(1)
    texts = json.loads(texts_file.read_text(encoding="utf-8"))
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    ready = {}
    started = time.perf_counter()
    fp32 = SentenceTransformer(str(model_dir), backend="onnx", device="cpu", model_kwargs={"session_options": options})
    ready["library onnx"] = time.perf_counter() - started
    started = time.perf_counter()
    export_dynamic_quantized_onnx_model(fp32, QUANTIZATION, str(model_dir))  # onnx/model_q[u]int8_<config>.onnx
    (written,) = model_dir.glob(f"onnx/model_*int8_{QUANTIZATION}.onnx")
    int8_file = written.relative_to(model_dir).as_posix()
    kwargs = {"session_options": options, "file_name": int8_file}
    int8 = SentenceTransformer(str(model_dir), backend="onnx", device="cpu", model_kwargs=kwargs)
    ready["library onnx-int8"] = time.perf_counter() - started
    models = {"library onnx": fp32, "library onnx-int8": int8}
    timed = timed_rounds({n: (lambda t, m=m: m.encode(t, batch_size=LIBRARY_BATCH)) for n, m in models.items()}, texts)
    packages = ("sentence-transformers", "transformers", "optimum", "optimum-onnx", "onnxruntime", "torch")
    out = {
        "versions": {p: metadata.version(p) for p in packages},
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "paths": {
            name: {"reports_per_s": rate, "ready_s": ready[name], "batch": LIBRARY_BATCH, "vectors": vectors.tolist()}
            for name, (vectors, rate) in timed.items()
        },
    }
    out_file.write_text(json.dumps(out), encoding="utf-8")


def project_side(texts: list[str]) -> tuple[dict[str, tuple[np.ndarray, float]], dict[str, float], np.ndarray]:
    """The project's export (onnx, onnx-int8) timed on 1 thread, and the torch reference vectors."""
    from eval.common.machine import limit_threads
    from retriever.encoders.encoder import load_encoder
    from retriever.encoders.onnx.runner import MAX_BATCH

    limit_threads(1)
    ready, encoders = {}, {}
    for backend in ("onnx", "onnx-int8"):
        started = time.perf_counter()
        encoder = load_encoder(ENCODER, backend=backend, threads=1)
        encoder.encode(["warm-up"])  # exports and quantizes on first use (cached afterwards)
        ready[f"project {backend}"] = time.perf_counter() - started
        encoders[f"project {backend}"] = lambda t, e=encoder: e.encode(t, batch_size=MAX_BATCH)
    timed = timed_rounds(encoders, texts)
    reference = load_encoder(ENCODER, backend="torch").encode(texts, batch_size=LIBRARY_BATCH)
    return timed, ready, reference


def measure(library_python: str) -> dict[str, Any]:
    """Both sides on the same texts and weights; rows of reports/s, time to ready and cosine to torch."""
    from eval.common.machine import describe, load_average
    from eval.perf.data import sample_texts, shared_reports
    from models.resolve import resolve_encoder
    from retriever.encoders.onnx.quantize import MIN_COSINE
    from retriever.encoders.onnx.runner import MAX_BATCH

    texts = sample_texts(shared_reports(), TEXTS)
    load = {"start": load_average()}
    project, ready, reference = project_side(texts)
    load["after_project"] = load_average()
    with tempfile.TemporaryDirectory(prefix="st-onnx-") as tmp:
        model_dir = Path(tmp) / ENCODER
        shutil.copytree(resolve_encoder(ENCODER)[0], model_dir)
        texts_file, out_file = Path(tmp) / "texts.json", Path(tmp) / "library.json"
        texts_file.write_text(json.dumps(texts), encoding="utf-8")
        command = [
            library_python,
            "-m",
            "eval.perf.st_onnx",
            "--library-side",
            str(texts_file),
            str(model_dir),
            str(out_file),
        ]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
        subprocess.run(command, check=True, cwd=Path(__file__).resolve().parents[2], env=env)
        library = json.loads(out_file.read_text(encoding="utf-8"))
    load["after_library"] = library["load_average_at_end"]
    rows = []
    for name, (vectors, rate) in project.items():
        rows.append(_row(name, rate, ready[name], MAX_BATCH, vectors, reference))
    for name, path in library["paths"].items():
        vectors = np.asarray(path["vectors"], dtype=np.float32)
        rows.append(_row(name, path["reports_per_s"], path["ready_s"], path["batch"], vectors, reference))
    return {
        "encoder": ENCODER,
        "texts": len(texts),
        "threads": 1,
        "rounds": ROUNDS,
        "quantization_config": QUANTIZATION,
        "equal_quality_cosine": MIN_COSINE,
        "machine": describe(),
        "library_versions": library["versions"],
        "load_average": load,
        "rows": rows,
        "verdict": verdict(rows, MIN_COSINE),
    }


def _row(name: str, rate: float, ready_s: float, batch: int, vectors: np.ndarray, reference: np.ndarray) -> OnnxPath:
    cosine = np.sum(vectors * reference, axis=1)
    return OnnxPath(
        path=name,
        reports_per_s=round(rate, 1),
        ready_s=round(ready_s, 1),
        batch=batch,
        cosine_to_torch_mean=round(float(cosine.mean()), 5),
        cosine_to_torch_min=round(float(cosine.min()), 5),
    )


def verdict(rows: list[OnnxPath], min_cosine: float) -> dict[str, LibraryVerdict]:
    """Per precision (onnx, onnx-int8): the library's speed as a share of the project's, and whether it is within
    WITHIN at equal quality (mean cosine to torch >= min_cosine on both sides)."""
    by_path = {row.path: row for row in rows}
    out = {}
    for backend in ("onnx", "onnx-int8"):
        mine, theirs = by_path[f"project {backend}"], by_path[f"library {backend}"]
        share = theirs.reports_per_s / mine.reports_per_s
        equal = min(mine.cosine_to_torch_mean, theirs.cosine_to_torch_mean) >= min_cosine
        out[backend] = LibraryVerdict(round(share, 3), equal_quality=equal, library_within=equal and share >= WITHIN)
    return out


def render(results: StOnnx) -> str:
    lines = [
        "# sentence-transformers' ONNX path vs the project's export",
        "",
        f"Written {results.created} by `{results.command}`. {results.encoder}, {results.texts} full report "
        f"texts of the shared data, {results.threads} thread, {results.rounds} interleaved rounds per side. "
        f"Library side: {', '.join(f'{p} {v}' for p, v in results.library_versions.items())} (in its own "
        f"environment: optimum-onnx needs transformers < 4.58, the product runs transformers 5); int8 with "
        f'`export_dynamic_quantized_onnx_model(model, "{results.quantization_config}", folder)`. Load average '
        f"(1/5/15 min, 2 cores shared with other jobs): {json.dumps(results.load_average)}.",
        "",
        "| path | reports/s | ready (s) | batch | cosine to torch, mean | min |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r.path} | {r.reports_per_s} | {r.ready_s} | {r.batch} | {r.cosine_to_torch_mean:.5f} | "
        f"{r.cosine_to_torch_min:.5f} |"
        for r in results.rows
    ]
    lines += [
        "",
        f"Equal quality: mean cosine to torch >= {results.equal_quality_cosine} "
        '(retriever.encoders.onnx.quantize.MIN_COSINE). "ready" = time to a usable encoder: the library '
        "exports (and quantizes) in the run; the project's export is cached under the models folder after its "
        "first use, so its figure is usually a load alone.",
        "",
    ]
    for backend, v in results.verdict.items():
        lines.append(
            f"- {backend}: the library runs at {v.library_speed_share:.0%} of the project's speed, quality "
            f"{'equal' if v.equal_quality else 'NOT equal'}: "
            f"{'within' if v.library_within else 'not within'} {1 - WITHIN:.0%}."
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library-python", help="interpreter of an environment with the library's ONNX path")
    parser.add_argument(
        "--library-side", nargs=3, type=Path, metavar=("TEXTS", "MODEL", "OUT"), help=argparse.SUPPRESS
    )  # the child process
    parser.add_argument("--out", type=Path, default=None, help="results stem (default: eval/results/st_onnx)")
    args = parser.parse_args(argv)
    if args.library_side:
        library_side(*args.library_side)
        return 0
    from eval.common.shared_data import RESULTS, write_results
    from eval.perf.data import NoData

    if not args.library_python:
        parser.error("--library-python is required (see the module docstring)")
    try:
        data = measure(args.library_python)
    except NoData as exc:
        print(f"skipped: {exc}")
        return 0
    results = StOnnx(
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        command=" ".join(["python -m eval.perf.st_onnx", *(argv if argv is not None else sys.argv[1:])]),
        **data,
    )
    print(write_results(args.out or RESULTS / "st_onnx", results, render))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
