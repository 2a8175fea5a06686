"""The results file: one JSON object with a section per benchmark, updated section by section.

Sections are written as they finish, so a long run that is interrupted keeps what it measured and a single
benchmark can be rerun without the others. The file is a `PerformanceResults` record (performance.json, ingest.json,
ray_build.json), each section the record eval.perf.sections names for it.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self, TypeVar

from eval.common.machine import Machine, describe, limit_threads, load_average
from eval.common.provenance import provenance
from eval.common.records import ResultsFile
from eval.common.shared_data import RESULTS
from eval.perf.sections import Section, section_type

RESULTS_FILE = RESULTS / "performance.json"
#: A kind of section (eval.perf.sections).
Kind = TypeVar("Kind", bound=Section)


@dataclass
class PerformanceResults(ResultsFile):
    """The machine of the last section stored, and every section by name (`SECTION_quick` for smoke runs)."""

    KIND = "performance results"

    machine: Machine
    sections: dict[str, Section]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        results = super().from_json({**data, "sections": {}})
        results.sections = {name: section_type(name).from_json(s) for name, s in data["sections"].items()}
        return results


def read(path: Path = RESULTS_FILE) -> PerformanceResults:
    """The current results, or an empty skeleton."""
    if path.is_file():
        return PerformanceResults.read(path)
    return PerformanceResults(describe(), {})


def sections_of(kind: type[Kind], path: Path = RESULTS_FILE) -> dict[str, Kind]:
    """The sections of `path` that are `kind` records, by name: a benchmark's own (full and quick, every size)."""
    return {name: section for name, section in read(path).sections.items() if isinstance(section, kind)}


def store(section: str, data: dict[str, Any], *, threads: int, command: str, path: Path = RESULTS_FILE) -> None:
    """Replace one section, stamped with when, how and under what load it was measured; the section's record
    (eval.perf.sections) is built from `data`, so a benchmark's measurements must fit it."""
    results = read(path)
    results.machine = describe()
    stamp = {
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command,
        "threads": threads,
        "load_average_at_end": load_average(),
        "provenance": provenance(),
    }
    results.sections[section] = section_type(section).from_json(stamp | data)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results.to_json(), indent=2) + "\n", encoding="utf-8")


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
