"""Free-text reports, one per `.txt` file: sections come from the section parser."""

from __future__ import annotations

from pathlib import Path

from retriever.reports.record import Report
from retriever.reports.sections import parse_sections
from retriever.reports.sources.base import MAX_REPORT_CHARS, Outcome, Rejection
from retriever.reports.sources.files import UnreadableFile, read_text


def load_text_file(path: Path, source: str, report_id: str) -> Outcome:
    """One report from one text file, or a Rejection (binary, empty)."""
    try:
        decoded = read_text(path)
    except UnreadableFile as exc:
        return Rejection(source, str(path), str(exc))
    text, encoding = decoded.text, decoded.encoding
    if not text.strip():
        return Rejection(source, str(path), "empty file")
    if len(text) > MAX_REPORT_CHARS:
        detail = f"{len(text)} characters; split it into one file per report"
        return Rejection(
            source, str(path), f"text file too long for one report (> {MAX_REPORT_CHARS} characters)", detail
        )
    sections = parse_sections(text)
    meta = {"file": str(path)} | ({"encoding": encoding} if encoding != "utf-8" else {})
    return Report(
        id=f"{source}:{report_id}",
        findings=sections.findings,
        impression=sections.impression,
        addendum=sections.addendum,
        full_text=text.strip(),
        source=source,
        meta=meta,
    )
