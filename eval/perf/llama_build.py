"""How llama.cpp is compiled, measured: `assistant ask`'s latency with a portable and a CPU-specific build.

    python -m eval.perf.llama_build --threads 2                     # portable vs native, 2 rounds of 8 questions
    python -m eval.perf.llama_build --build avx2=-DGGML_NATIVE=OFF --build native=-DGGML_NATIVE=ON --rounds 3

pip builds llama-cpp-python from source here (no Linux wheel on PyPI), so the CMake arguments decide which SIMD
kernels the library has. `-DGGML_NATIVE=OFF` gives a library that runs on any x86-64 CPU with AVX2; `ON` compiles
for the building CPU (AVX-512 and VNNI on this project's machine), which reads prompts faster. Each build is
installed once into its own folder under the evaluation home (`llama-builds/`, ~7 minutes of compiling on 2 cores)
and reused; the measurement is `eval.perf.ask_latency` (a fresh model per question, `assistant ask`'s defaults, the
system prompt cold and loaded from its saved state) run in a subprocess that imports that build, the builds
alternating round by round so that a change in the machine's load falls on both. Same model, same questions, the
same prompts: only the compiled kernels differ (greedy answers may still part where two tokens are nearly tied).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from eval.common.shared_data import eval_home
from eval.perf import results
from eval.perf.sections import AskLatency
from models.preset import PRESET

VERSION = "0.3.36"
DEFAULT_BUILDS = {"portable": "-DGGML_NATIVE=OFF", "native": "-DGGML_NATIVE=ON"}
REPO = Path(__file__).resolve().parents[2]


def folder_for(cmake_args: str, root: Path | None = None) -> Path:
    """Where llama-cpp-python VERSION compiled with `cmake_args` is installed (built or not)."""
    digest = hashlib.sha256(f"{VERSION}:{cmake_args}".encode()).hexdigest()[:12]
    return (root or eval_home() / "llama-builds") / f"{VERSION}-{digest}"


def build_folder(cmake_args: str, root: Path | None = None) -> Path:
    """`folder_for(cmake_args)`, built on first use (atomically: an interrupted build leaves no folder that looks
    finished)."""
    folder = folder_for(cmake_args, root)
    if (folder / "llama_cpp" / "__init__.py").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    print(f"building llama-cpp-python {VERSION} with CMAKE_ARGS={cmake_args!r} (several minutes)", flush=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as tmp:
        staging = Path(tmp) / "site"
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-cache-dir", "--target",
             str(staging), f"llama-cpp-python=={VERSION}"],
            env=os.environ | {"CMAKE_ARGS": cmake_args}, check=True,
        )  # fmt: skip
        (staging / "radsearch_cmake_args.txt").write_text(cmake_args + "\n", encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        staging.rename(folder)
    return folder


def _with_build(folder: Path) -> dict[str, str]:
    """The environment of a process that imports llama_cpp from `folder` before the venv's own."""
    path = os.pathsep.join(p for p in (str(folder), str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return os.environ | {"PYTHONPATH": path}


def cpu_features(folder: Path) -> str:
    """llama.cpp's own list of the SIMD features the build uses on this CPU."""
    code = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
    shown = subprocess.run([sys.executable, "-c", code], env=_with_build(folder), capture_output=True, text=True,
                           check=True).stdout  # fmt: skip
    flags = [part.split("=")[0].strip() for part in shown.split("|") if part.strip().endswith("= 1")]
    return ", ".join(flag.removeprefix("CPU : ") for flag in flags)


def one_round(folder: Path, threads: int, queries: int, model: str, quick: bool = False) -> AskLatency | None:
    """eval.perf.ask_latency's section, measured in a process importing the build in `folder` (None when it
    skipped: no shared data)."""
    with tempfile.TemporaryDirectory(prefix="radsearch-build-") as tmp:
        out = Path(tmp) / "latency.json"
        subprocess.run(
            [sys.executable, "-m", "eval.perf.ask_latency", "--threads", str(threads), "--queries", str(queries),
             "--model", model, "--results", str(out), *(["--quick"] if quick else [])],
            env=_with_build(folder), cwd=REPO, check=True,
        )  # fmt: skip
        if not out.is_file():
            return None
        return results.sections_of(AskLatency, out)["ask_latency_quick" if quick else "ask_latency"]


def summarize(rounds: list[AskLatency]) -> dict[str, Any]:
    """Medians over every question of every round, per side (cold, saved_prefix)."""
    summary: dict[str, Any] = {"rounds": len(rounds)}
    for side in ("cold", "saved_prefix"):
        runs = [run for section in rounds for run in section.runs[side]]
        for key in ("ttft_s", "total_s"):
            summary[f"{side}_{key}"] = round(statistics.median(getattr(run, key) for run in runs), 3)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = results.parser(__doc__, threads_help="threads for llama.cpp and the encoder (2 = this machine)")
    parser.add_argument("--build", action="append", metavar="NAME=CMAKE_ARGS",
                        help="a build to compare (repeatable; default: portable and native)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=2, help="times each build is measured, alternating")
    parser.add_argument("--queries", type=int, default=8, help="held-out findings per round (each asked twice)")
    parser.add_argument("--model", default=PRESET.answer.llm, help="embedded GGUF: qwen1.5b, smollm2 or a path")
    args = results.parse_args(parser, argv)
    builds = dict(spec.split("=", 1) for spec in args.build) if args.build else dict(DEFAULT_BUILDS)
    folders = {name: build_folder(cmake) for name, cmake in builds.items()}
    measured: dict[str, list[AskLatency]] = {name: [] for name in builds}
    for round_no in range(1 if args.quick else args.rounds):
        for name, folder in folders.items():
            print(f"round {round_no + 1}: {name}", flush=True)
            section = one_round(folder, args.threads, 1 if args.quick else args.queries, args.model, args.quick)
            if not section:
                print("skipped: no held-out findings (shared data absent)")
                return 0
            measured[name].append(section)
    data = {
        "version": VERSION,
        "model": measured[next(iter(builds))][0].model,
        "queries": 1 if args.quick else args.queries,
        "builds": {
            name: {"cmake_args": builds[name], "cpu_features": cpu_features(folders[name])} | summarize(measured[name])
            for name in builds
        },  # fmt: skip
    }
    results.store_run("llama_build", data, args, "eval.perf.llama_build", argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
