"""Four small hand-written reports of two sites the index tests (and those of the chat and updates) build on."""

from __future__ import annotations

from retriever.reports.record import Field, Report
from retriever.search.hit import Hit

REPORTS = [
    Report(
        "t:1",
        "Large left pleural effusion with compressive atelectasis.",
        "Left pleural effusion.",
        modality="XR",
        labels=("effusion",),
        source="site-a",
    ),
    Report(
        "t:2",
        "Right upper lobe consolidation with air bronchograms.",
        "Right upper lobe pneumonia.",
        modality="XR",
        labels=("pneumonia",),
        source="site-a",
    ),
    Report(
        "t:3",
        "Enlarged cardiac silhouette, cephalization of vessels.",
        "Cardiomegaly with mild edema.",
        modality="XR",
        labels=("cardiomegaly", "edema"),
        source="site-b",
    ),
    Report(
        "t:4",
        "4 mm nodule in the right lower lobe.",
        "Small pulmonary nodule.",
        modality="CT",
        labels=("nodule",),
        source="site-b",
    ),
    Report(
        "t:5",
        "Hypodense lesion in segment IV along the falciform ligament.",
        "Focal fatty infiltration.",
        modality="CT",
        labels=("liver",),
        source="site-b",
    ),
    Report("t:6", "", "Impression-only report about pneumothorax.", modality="XR", source="site-a"),
]


def hit(
    report_id: str,
    rank: int,
    score: float,
    field: Field,
    impression: str,
    *,
    findings: str = "",
    full_text: str = "",
    modality: str = "",
    source: str = "",
    contradicts: bool = False,
    partly_contradicts: bool = False,
) -> Hit:
    """A hit of a report with these sections, for tests of what ask and the chat show of one."""
    report = Report(report_id, findings, impression, full_text, modality=modality, source=source)
    return Hit(rank, score, field, report, contradicts=contradicts, partly_contradicts=partly_contradicts)
