"""The results file: one JSON object with a section per benchmark, updated section by section.

Sections are written as they finish, so a long run that is interrupted keeps what it measured and a single
benchmark can be rerun without the others.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval.common.provenance import provenance
from eval.common.shared_data import RESULTS
from eval.perf.machine import describe, limit_threads, load_average

RESULTS_FILE = RESULTS / "performance.json"


def read(path: Path = RESULTS_FILE) -> dict[str, Any]:
    """The current results, or an empty skeleton."""
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    return {"machine": describe(), "sections": {}}


def store(section: str, data: dict[str, Any], *, threads: int, command: str, path: Path = RESULTS_FILE) -> None:
    """Replace one section, stamped with when, how and under what load it was measured."""
    results = read(path)
    results["machine"] = describe()
    results["sections"][section] = {
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command,
        "threads": threads,
        "load_average_at_end": load_average(),
        "provenance": provenance(),
        **data,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


def parser(
    doc: str | None, *, threads_help: str = "threads for torch, FAISS, ONNX Runtime and llama.cpp"
) -> argparse.ArgumentParser:
    """The options every benchmark shares: --threads, --quick (smoke run, stored as SECTION_quick), --results."""
    cli = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--threads", type=int, default=1, help=threads_help)
    cli.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, stored under SECTION_quick")
    cli.add_argument("--results", type=Path, default=RESULTS_FILE, help="results JSON to update")
    return cli


def parse_args(cli: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """A benchmark's options, with torch, FAISS and BLAS held to --threads before anything is loaded or timed."""
    args = cli.parse_args(argv)
    limit_threads(args.threads)
    return args


def store_run(
    section: str, data: dict[str, Any], args: argparse.Namespace, module: str, argv: list[str] | None
) -> None:
    """Store a benchmark's section as run from the command line (quick runs under their own name)."""
    command = " ".join([f"python -m {module}", *(argv if argv is not None else sys.argv[1:])])
    name = f"{section}_quick" if args.quick else section
    store(name, data, threads=args.threads, command=command, path=args.results)
