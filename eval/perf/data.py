"""The real texts the performance benchmarks use: the shared development reports, read by the project's importers.

Throughput is measured on full report texts (what `assistant index` encodes most of), quality and query latency
on the held-out test split (retriever.reports.splits), so no benchmark here looks at data a trained model was fitted on.
"""

from __future__ import annotations

import random
from pathlib import Path

from eval.common.shared_data import SHARED_DATA, load_shared
from retriever.reports.record import Report
from retriever.reports.splits import split_reports


class NoData(Exception):
    """The shared data folder is absent: the benchmark skips (it needs real report text)."""


def shared_reports(data: Path = SHARED_DATA) -> list[Report]:
    if not data.is_dir():
        raise NoData(f"shared data folder {data} is absent")
    return load_shared(data).reports


def shared_reports_or_skip() -> list[Report] | None:
    """The shared reports, or None after saying why the benchmark skips (it measures real report text only)."""
    try:
        return shared_reports()
    except NoData as exc:
        print(f"skipped: {exc}")
        return None


def test_split(reports: list[Report]) -> list[Report]:
    """Held-out test reports (the split training never sees)."""
    return split_reports(reports)["test"]


def held_out_findings(count: int) -> list[str] | None:
    """Up to `count` findings sections of test-split reports, of the length a resident pastes (what `ask` is sent);
    None after saying why when the shared data is absent."""
    reports = shared_reports_or_skip()
    if reports is None:
        return None
    return [r.findings for r in test_split(reports) if 40 < len(r.findings) < 600][:count]


def sample_texts(reports: list[Report], count: int, *, seed: int = 0) -> list[str]:
    """`count` full report texts drawn without replacement (fixed seed: every backend encodes the same ones)."""
    texts = [r.full_text for r in reports if r.full_text.strip()]
    return random.Random(seed).sample(texts, min(count, len(texts)))
