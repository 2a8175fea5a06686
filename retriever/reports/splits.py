"""Deterministic train/dev/test split by report, so training never sees the reports it is judged on.

Each report goes to a split by a salted SHA-256 of its id, not by position or a random draw: the same report
lands in the same split on every machine, whatever order the files are read in and whatever other reports are
added later (adding reports never moves an existing one between splits). Splitting by report (not by pair or
sentence) keeps a report's findings and impression together on one side of the line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from retriever.reports.record import Report

#: Changing the salt reshuffles every split; keep it fixed so results stay comparable across runs.
DEFAULT_SALT = "radsearch-split-v1"
SPLITS = ("train", "dev", "test")


@dataclass(frozen=True)
class SplitSpec:
    """Fractions of reports in dev and test (train gets the rest) and the salt of the hash."""

    dev: float = 0.1
    test: float = 0.1
    salt: str = DEFAULT_SALT

    def __post_init__(self) -> None:
        if self.dev < 0 or self.test < 0 or self.dev + self.test >= 1:
            raise ValueError(f"dev ({self.dev}) and test ({self.test}) fractions must be >= 0 and sum to < 1")


#: 80 % train, 10 % dev, 10 % test.
DEFAULT_SPLIT = SplitSpec()


def split_of(report_id: str, spec: SplitSpec = DEFAULT_SPLIT) -> str:
    """`train`, `dev` or `test` for one report id, from a uniform number in [0, 1) made of its salted hash."""
    digest = hashlib.sha256(f"{spec.salt}\0{report_id}".encode()).digest()
    position = int.from_bytes(digest[:8], "big") / 2**64
    if position < spec.test:
        return "test"
    if position < spec.test + spec.dev:
        return "dev"
    return "train"


def split_reports(reports: Iterable[Report], spec: SplitSpec = DEFAULT_SPLIT) -> dict[str, list[Report]]:
    """Reports grouped by split, input order kept within each split."""
    groups: dict[str, list[Report]] = {name: [] for name in SPLITS}
    for report in reports:
        groups[split_of(report.id, spec)].append(report)
    return groups


def held_out_by_source(reports: Iterable[Report], spec: SplitSpec = DEFAULT_SPLIT) -> dict[str, list[Report]]:
    """Held-out test reports of each source (sorted by source name): what benchmarks evaluate a trained model
    on."""
    by_source: dict[str, list[Report]] = {}
    for report in split_reports(reports, spec)["test"]:
        by_source.setdefault(report.source, []).append(report)
    return dict(sorted(by_source.items()))
