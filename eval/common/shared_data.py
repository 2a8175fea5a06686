"""Where the benchmarks read the shared development data from and write their results to.

The benchmarks run from a checkout of the project (`python -m eval.NAME` from its root; they are not installed with
the product), so their defaults are folders of that checkout: results go to eval/results (what the repository
commits), the datasets they build to eval/datasets. Every benchmark's `--out` writes elsewhere.

The shared data is never copied into the repository (its README forbids it and the project must run without it):
RADSEARCH_SHARED_DATA names its folder, else it is `shared/data` beside the checkout. Every benchmark and dataset
builder reads it through the project's own importers and skips cleanly when it is absent.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from eval.common.provenance import stamp
from models.atomic import write_atomic
from models.paths import data_home
from retriever.reports.ingest import IngestResult, ingest
from retriever.reports.record import Report
from retriever.reports.splits import SPLITS, split_of

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA_VARIABLE = "RADSEARCH_SHARED_DATA"
#: The four report collections the benchmarks use, relative to the shared data folder.
CORPORA = ("openi", "ctrate", "mtsamples/mtsamples_imaging.csv", "medpix")
RESULTS = REPO / "eval" / "results"
DATASETS = REPO / "eval" / "datasets"


def shared_data_folder(env: Mapping[str, str] = os.environ) -> Path:
    """RADSEARCH_SHARED_DATA if set, else `shared/data` beside the checkout."""
    return Path(env[SHARED_DATA_VARIABLE]) if env.get(SHARED_DATA_VARIABLE) else REPO.parent / "shared" / "data"


#: Read once, when a benchmark starts (its entry point imports this module).
SHARED_DATA = shared_data_folder()


def add_out_option(parser: argparse.ArgumentParser, default: Path) -> None:
    """A benchmark's `--out`: the folder its results are written to, `default` (inside the checkout) unless told."""
    where = f"{default.relative_to(REPO)} in this checkout"
    parser.add_argument("--out", type=Path, default=default, help=f"where results are written (default: {where})")


def index_backend(env: Mapping[str, str] = os.environ) -> str:
    """The encoder backend `assistant index` builds users' indexes with, read as the product reads it
    (assistant.settings.EncoderSettings: RADSEARCH_ENCODER_BACKEND, else retriever.encoders.backends.INDEX_BACKEND)."""
    from assistant.settings import EncoderSettings

    return EncoderSettings.from_env(env).backend


def add_encoder_backend_option(parser: argparse.ArgumentParser, env: Mapping[str, str] = os.environ) -> None:
    """A benchmark's `--encoder-backend`: who runs the encoders; by default `index_backend`, so the numbers are those
    of users' indexes."""
    from retriever.encoders.backends import BACKENDS

    default = index_backend(env)
    parser.add_argument(
        "--encoder-backend",
        default=default,
        choices=BACKENDS,
        help=f"encoder backend (default: {default}, what new indexes are built with)",
    )


def write_results(stem: Path, payload: Any, render: Callable[[Any], str], *, indent: int = 1) -> str:
    """Write a benchmark's results: `stem`.json (the payload, or its `to_json()`, with its provenance: commit,
    command, preset hash) and `stem`.md (`render(payload)`), each replaced atomically, the folder made if needed.
    Returns the Markdown (benchmarks also print it)."""
    data = stamp(payload.to_json() if hasattr(payload, "to_json") else payload)
    markdown = render(payload)
    write_atomic(stem.with_name(f"{stem.name}.json"), json.dumps(data, indent=indent) + "\n")
    write_atomic(stem.with_name(f"{stem.name}.md"), markdown)
    return markdown


def eval_home() -> Path:
    """Benchmark working files (built cases, prediction caches, cached indexes): user data, not the repo,
    because they hold report text."""
    return data_home() / "eval"


def load_shared(data: Path = SHARED_DATA) -> IngestResult:
    """All shared reports through the project's importers with the RadSearch exclusions."""
    return ingest(str(data / c) for c in CORPORA)


def usable(reports: list[Report]) -> list[Report]:
    """Reports with both a findings and an impression section (the retrieval benchmark's rule)."""
    return [r for r in reports if r.findings.strip() and r.impression.strip()]


def split_reports(data: Path, split: str) -> list[Report]:
    """The usable reports of one split of the shared data: `dev` to choose on, `test` to report once."""
    return usable([r for r in load_shared(data).reports if split_of(r.id) == split])


def split_reading_main(
    doc: str, stem: str, measure: Callable[[str], Any], render: Callable[[Any], str], default: str
) -> None:
    """The command line of a measurement that reads one split of the shared reports (the question reader's checks:
    eval.diagnosis.normal_questions, modality_reading, normal_organs): `--split`, `--name`, `--out`; writes
    `<stem>_<split>` (or `--name`) and prints its Markdown."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--split", choices=SPLITS, default=default)
    parser.add_argument("--name", help=f"the results' file stem (default: {stem}_<split>)")
    add_out_option(parser, RESULTS)
    args = parser.parse_args()
    print(write_results(args.out / (args.name or f"{stem}_{args.split}"), measure(args.split), render))
