"""Where the shared development data lives and how the benchmarks read it.

The data is never copied into the repository (its README forbids it and the project must run without it), so
every benchmark and dataset builder finds it here, reads it through the project's own importers, and skips
cleanly when the folder is absent.
"""

from __future__ import annotations

from pathlib import Path

from models.paths import data_home
from retriever.ingest import IngestResult, ingest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
#: The four report collections the benchmarks use, relative to the shared data folder.
CORPORA = ("openi", "ctrate", "mtsamples/mtsamples_imaging.csv", "medpix")
RESULTS = REPO / "eval" / "results"
DATASETS = REPO / "eval" / "datasets"


def eval_home() -> Path:
    """Benchmark working files (built cases, prediction caches, cached indexes): user data, not the repo,
    because they hold report text."""
    return data_home() / "eval"


def load_shared(data: Path = SHARED_DATA) -> IngestResult:
    """All shared reports through the project's importers with the RadSearch exclusions."""
    return ingest(str(data / c) for c in CORPORA)
