"""Training pairs from reports: findings (anchor) -> impression (positive), with every skipped report counted.

The radiologist's own impression is the label, so any site can train on its archive without annotating
anything. Reports missing either section cannot form a pair: they are skipped and counted by reason for the
model card.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from retriever.report import Report


class TrainingError(ValueError):
    """Training cannot start or continue (bad data, existing output, no checkpoint); the message says what to
    do."""


@dataclass
class PairSet:
    """Findings -> impression pairs (one per report, report ids kept) and the reports skipped, by reason."""

    anchors: list[str] = field(default_factory=list)
    positives: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)

    def __len__(self) -> int:
        return len(self.anchors)

    @property
    def unique_positives(self) -> int:
        return len(set(self.positives))

    def fingerprint(self) -> str:
        """SHA-256 over the pairs: a resumed run must continue on exactly the data it started with."""
        digest = hashlib.sha256()
        for anchor, positive in zip(self.anchors, self.positives, strict=True):
            digest.update(anchor.encode() + b"\0" + positive.encode() + b"\1")
        return digest.hexdigest()


def build_pairs(reports: Iterable[Report]) -> PairSet:
    """One (findings, impression) pair per report that has both sections."""
    pairs = PairSet()
    for report in reports:
        findings, impression = report.findings.strip(), report.impression.strip()
        if not findings and not impression:
            pairs.skipped["missing findings and impression"] += 1
        elif not findings:
            pairs.skipped["missing findings"] += 1
        elif not impression:
            pairs.skipped["missing impression"] += 1
        else:
            pairs.anchors.append(findings)
            pairs.positives.append(impression)
            pairs.ids.append(report.id)
    return pairs


def check_contrastive(pairs: PairSet, batch_size: int) -> int:
    """The batch size to train with, or TrainingError when the pairs have nothing to contrast.

    In-batch negatives need at least two different impressions, and the no-duplicates sampler never puts the
    same impression twice in a batch, so a batch can hold at most as many pairs as there are distinct
    impressions.
    """
    if not pairs:
        raise TrainingError(
            "no findings -> impression pairs to train on: every report lacks a findings or an impression "
            f"section (skipped: {dict(pairs.skipped) or 'none'}); check the section headers or the --map "
            "column mapping"
        )
    if pairs.unique_positives < 2:
        raise TrainingError(
            f"all {len(pairs)} training impressions are identical: nothing to contrast (in-batch negatives "
            "need reports with different impressions)"
        )
    return min(batch_size, pairs.unique_positives)
