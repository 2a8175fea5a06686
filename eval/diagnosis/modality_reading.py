"""How often the modality read from a report's findings contradicts the report's own modality field.

Why: a report of another modality than the question's does not vote (assistant/rag/question.py), and the
question's modality is read from its words. Every usable report of the shared data with a modality field is a
labelled question for free: its findings are the question, its field the answer. Read both ways side by side: with
every sentence (before), and without the sentences that name another study the text compares with or recommends
(retriever.search.region.OTHER_STUDY_WORDS; now). Report ids only (most sources may not be redistributed). Rule and
adoption: docs/decisions/2026-11-29-other-studies-modality.md.

    python -m eval.diagnosis.modality_reading --split train  # eval/results/modality_reading_train.*
    python -m eval.diagnosis.modality_reading --split dev
"""

from __future__ import annotations

from collections import defaultdict

from eval.common.shared_data import SHARED_DATA, split_reading_main, split_reports
from eval.diagnosis.results import ModalityCounts, ModalityReading
from retriever.search.region import compatible, modalities

#: (report id, field's modality, read before, read now)
_Row = tuple[str, frozenset[str], frozenset[str], frozenset[str]]


def measure(split: str) -> ModalityReading:
    """Read every usable report's findings of `split` that has a modality field."""
    groups: dict[str, list[_Row]] = defaultdict(list)
    for report in split_reports(SHARED_DATA, split):
        field = modalities("", report.modality)
        if field:
            before = modalities(report.findings, other_studies=True)
            groups[report.id.split(":")[0]].append((report.id, field, before, modalities(report.findings)))
    by_source = {source: _counts(rows) for source, rows in sorted(groups.items())}
    return ModalityReading(split, _counts([r for rows in groups.values() for r in rows]), by_source)


def _contradicts(read: frozenset[str], field: frozenset[str]) -> bool:
    return bool(read) and not compatible(read, field)


def _counts(rows: list[_Row]) -> ModalityCounts:
    was = {i for i, field, before, _ in rows if _contradicts(before, field)}
    now = {i for i, field, _, after in rows if _contradicts(after, field)}
    return ModalityCounts(
        reports=len(rows),
        read_before=sum(bool(before) for _, _, before, _ in rows),
        read_now=sum(bool(after) for _, _, _, after in rows),
        contradicted_before=len(was),
        contradicted_now=len(now),
        fixed_ids=sorted(was - now),
        new_ids=sorted(now - was),
    )


def render(result: ModalityReading) -> str:
    lines = [
        f"# The modality read from findings against the report's own field ({result.split} split)",
        "",
        "Each usable report with a modality field: its findings read by `retriever.search.region.modalities`, with",
        "every sentence (before) and without the sentences naming another study (now). A reading contradicts the",
        "field when it names modalities and none is the field's. Written by `eval/diagnosis/modality_reading.py`.",
        "",
        "| source | reports | findings name a modality (before -> now) | contradict the field (before -> now) "
        "| fixed | new |",
        "|---|---|---|---|---|---|",
    ]
    for name, c in [("all", result.overall), *result.by_source.items()]:
        lines.append(
            f"| {name} | {c.reports} | {c.read_before} -> {c.read_now} | {c.contradicted_before} -> "
            f"{c.contradicted_now} | {len(c.fixed_ids)} | {len(c.new_ids)} |"
        )
    o = result.overall
    lines += ["", "Fixed: " + (", ".join(o.fixed_ids) or "none"), "", "New: " + (", ".join(o.new_ids) or "none"), ""]
    return "\n".join(lines)


def main() -> None:
    split_reading_main(__doc__, "modality_reading", measure, render, default="train")


if __name__ == "__main__":
    main()
