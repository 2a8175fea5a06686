"""Importers for the public report collections (Open-i, CT-RATE, MTSamples, MedPix) in their distributed CSVs.

Each is recognized by its header, so `assistant index path/to/indiana_reports.csv` needs no options. Label files
distributed beside the reports (Open-i NegBio labels, CT-RATE predicted labels) are joined when present. An importer
sees only the file's well-formed rows: `load_public` rejects the others (and unreadable files) for all of them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from retriever.reports.record import Report
from retriever.reports.sections import clean_text, parse_sections
from retriever.reports.sources.base import Outcome, Rejection, normalize_modality
from retriever.reports.sources.files import RowError, UnreadableFile, iter_csv_rows
from retriever.reports.sources.tabular import compose_full_text

log = logging.getLogger(__name__)

#: (line number, row) of a file's well-formed rows.
Rows = Iterable[tuple[int, dict[str, str]]]


def _positive_labels(path: Path, key_column: str, key: Callable[[str], str]) -> dict[str, set[str]]:
    """key -> names of columns whose value is 1 in a 0/1 label table (empty if the file is absent).

    Labels are optional metadata: an unusable label file or row costs the labels (logged), not the reports.
    """
    labels: dict[str, set[str]] = {}
    if not path.is_file():
        return labels
    try:
        for number, row in iter_csv_rows(path):
            if isinstance(row, RowError):
                log.warning("label file %s:%d skipped: %s (%s)", path, number, row.reason, row.detail)
                continue
            names = {name for name, value in row.items() if name != key_column and value in ("1", "1.0")}
            labels.setdefault(key(row.get(key_column, "")), set()).update(names)
    except UnreadableFile as exc:
        log.warning("label file %s not used: %s", path, exc)
    return labels


def _sectioned_report(
    source: str,
    key: str,
    sections: dict[str, str],
    modality: str,
    labels: Iterable[str],
    meta: dict[str, str],
    body_part: str = "",
) -> Report:
    """A report from its cleaned sections: findings and impression as they are, the full text composed of all."""
    return Report(
        id=f"{source}:{key}",
        findings=sections["findings"],
        impression=sections["impression"],
        full_text=compose_full_text(sections),
        modality=modality,
        labels=tuple(sorted(labels)),
        source=source,
        meta=meta,
        body_part=body_part,
    )


def load_openi(path: Path, rows: Rows) -> Iterator[Outcome]:
    """Indiana University chest X-rays; labels from `negbio_labels14.csv` (filename CXR<uid>) if beside it."""
    labels = _positive_labels(path.with_name("negbio_labels14.csv"), "filename", lambda f: f.removeprefix("CXR"))
    for number, row in rows:
        uid = row.get("uid", "")
        if not uid:
            yield Rejection("openi", f"{path}:{number}", "missing uid")
            continue
        sections = {k: clean_text(row.get(k, "")) for k in ("indication", "comparison", "findings", "impression")}
        row_labels = labels.get(uid) or {p.strip() for p in row.get("Problems", "").split(";") if p.strip()}
        meta = {"exam": row.get("image", "")}
        yield _sectioned_report("openi", uid, sections, "XR", row_labels, meta, body_part="chest")


def load_ctrate(path: Path, rows: Rows) -> Iterator[Outcome]:
    """CT-RATE chest CTs. Several reconstructions (valid_1_a_1, valid_1_a_2) share one report: kept once."""
    labels = _positive_labels(path.with_name("valid_predicted_labels.csv"), "VolumeName", lambda v: _ctrate_study(v))
    seen: dict[str, str] = {}
    for number, row in rows:
        volume = row.get("VolumeName", "")
        study = _ctrate_study(volume)
        if not study:
            yield Rejection("ctrate", f"{path}:{number}", "missing VolumeName")
            continue
        if study in seen:
            yield Rejection("ctrate", f"{path}:{number}", "another reconstruction of a study (same report)", study)
            continue
        seen[study] = volume
        sections = {
            "indication": clean_text(row.get("ClinicalInformation_EN", "")),
            "technique": clean_text(row.get("Technique_EN", "")),
            "findings": clean_text(row.get("Findings_EN", "")),
            "impression": clean_text(row.get("Impressions_EN", "")),
        }
        meta = {"volume": volume}
        yield _sectioned_report("ctrate", study, sections, "CT", labels.get(study, ()), meta, body_part="chest")


def _ctrate_study(volume: str) -> str:
    """valid_1_a_2.nii.gz -> valid_1_a (the study; the last number is the reconstruction)."""
    return re.sub(r"_\d+$", "", volume.removesuffix(".gz").removesuffix(".nii"))


def load_mtsamples(path: Path, rows: Rows) -> Iterator[Outcome]:
    """MTSamples imaging transcriptions; sections from the CSV's columns, else parsed from the transcription."""
    for number, row in rows:
        note = row.get("note_id", "")
        text = row.get("transcription", "")
        if not note:
            yield Rejection("mtsamples", f"{path}:{number}", "missing note_id")
            continue
        parsed = parse_sections(text)
        yield Report(
            id=f"mtsamples:{note}",
            findings=clean_text(row.get("findings", "")) or parsed.findings,
            impression=clean_text(row.get("impression", "")) or parsed.impression,
            full_text=text.replace(",", ", ").strip() if text else "",
            modality=normalize_modality(row.get("modality", "")),
            source="mtsamples",
            meta={"exam": row.get("sample_name", ""), "specialty": row.get("medical_specialty", "")},
        )


def load_medpix(path: Path, rows: Rows) -> Iterator[Outcome]:
    """MedPix teaching cases: findings, and the case diagnosis as the impression (cases have no impression)."""
    for number, row in rows:
        uid = row.get("uid", "")
        if not uid:
            yield Rejection("medpix", f"{path}:{number}", "missing uid")
            continue
        sections = {
            "history": clean_text(row.get("history", "")),
            "findings": clean_text(row.get("findings", "")),
            "impression": clean_text(row.get("case_diagnosis", "")),
        }
        labels = {row.get(k, "").strip() for k in ("location_category", "topic_category")} - {"", "N/A"}
        meta = {"title": row.get("title", ""), "differential": clean_text(row.get("differential_diagnosis", ""))}
        modality = normalize_modality(row.get("image_modalities", ""))
        yield _sectioned_report("medpix", uid, sections, modality, labels, meta)


#: Format name -> (columns that identify it, importer).
FORMATS: dict[str, tuple[frozenset[str], Callable[[Path, Rows], Iterator[Outcome]]]] = {
    "openi": (frozenset({"uid", "MeSH", "Problems", "findings", "impression"}), load_openi),
    "ctrate": (frozenset({"VolumeName", "Findings_EN", "Impressions_EN"}), load_ctrate),
    "mtsamples": (frozenset({"note_id", "transcription", "modality"}), load_mtsamples),
    "medpix": (frozenset({"uid", "findings", "case_diagnosis"}), load_medpix),
}


def detect_format(header: list[str]) -> str | None:
    """Name of the public format whose identifying columns are all in `header`, else None."""
    columns = set(header)
    return next((name for name, (needed, _) in FORMATS.items() if needed <= columns), None)


def load_public(path: Path, name: str) -> Iterator[Outcome]:
    """Run the importer for format `name` on the well-formed rows; the others and an unreadable file are rejected."""
    try:
        rows = list(iter_csv_rows(path))
    except UnreadableFile as exc:
        yield Rejection(name, str(path), str(exc))
        return
    for number, row in rows:
        if isinstance(row, RowError):
            yield Rejection(name, f"{path}:{number}", row.reason, row.detail)
    yield from FORMATS[name][1](path, ((n, r) for n, r in rows if not isinstance(r, RowError)))
