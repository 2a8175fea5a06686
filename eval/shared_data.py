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
import os
from collections.abc import Mapping
from pathlib import Path

from models.paths import data_home
from retriever.ingest import IngestResult, ingest

REPO = Path(__file__).resolve().parents[1]
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


def eval_home() -> Path:
    """Benchmark working files (built cases, prediction caches, cached indexes): user data, not the repo,
    because they hold report text."""
    return data_home() / "eval"


def load_shared(data: Path = SHARED_DATA) -> IngestResult:
    """All shared reports through the project's importers with the RadSearch exclusions."""
    return ingest(str(data / c) for c in CORPORA)
