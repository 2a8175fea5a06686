"""Run every performance benchmark in turn, then write performance.md (what `make bench` does).

    python -m eval.perf                  # the full run: ~45 min on 2 cores
    python -m eval.perf --threads 2      # every benchmark at 2 threads (default: each benchmark's own, see --help)
    python -m eval.perf --quick          # smoke run of every script (~5 min), stored under *_quick sections
    python -m eval.perf --only search    # one benchmark

A benchmark that cannot run here (no shared data, no vLLM venv, no index) says so and the others go on.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from eval.perf import report
from eval.perf.results import RESULTS_FILE

#: Module -> arguments of its full run and of its smoke run.
BENCHMARKS: dict[str, tuple[list[str], list[str]]] = {
    "embedding": ([], ["--encoders", "minilm"]),
    "fusions": ([], ["--texts", "8", "--calls", "3"]),
    "search": ([], ["--sizes", "2000", "--queries", "10"]),
    "second_stage": ([], []),
    "answer": ([], ["--backends", "embedded", "--model", "smollm2", "--queries", "1", "--max-tokens", "16"]),
    "ask_latency": (["--threads", "2"], ["--model", "smollm2", "--queries", "1"]),
    "ask_vs_chat": (["--threads", "2"], ["--model", "smollm2", "--load", "1"]),
    "coldstart": ([], ["--skip-ask", "--repeats", "1"]),
    "concurrency": ([], ["--cases", "4", "--workers", "2"]),
    "index_throughput": (["--baseline", "a3b4a67"], []),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--threads", type=int, help="threads for every benchmark (default: embedding at 1 and every core, others 1)"
    )
    parser.add_argument("--only", default=",".join(BENCHMARKS), help="comma-separated: " + ", ".join(BENCHMARKS))
    parser.add_argument("--results", type=Path, default=RESULTS_FILE)
    args = parser.parse_args(argv)
    failed = []
    for name in args.only.split(","):
        full, quick = BENCHMARKS[name]
        common = ["--results", str(args.results), *(["--threads", str(args.threads)] if args.threads else [])]
        print(f"== {name}", flush=True)
        try:
            code = importlib.import_module(f"eval.perf.{name}").main(
                [*(quick + ["--quick"] if args.quick else full), *common]
            )
        except Exception as exc:  # one benchmark's environment problem must not hide the others' results
            print(f"{name} failed: {exc!r}", flush=True)
            code = 1
        if code:
            failed.append(name)
    print(f"wrote {report.write(args.results)}")
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
