"""Generic CSV / JSON Lines importer with a column mapping (your own reports).

Columns are found by common names unless mapped explicitly (`--map findings=Befund,impression=Beurteilung`),
compared without case, spaces or punctuation, so the spellings of RIS/PACS exports (`AccessionNumber`, `Accession
No.`, `ReportText`, `Study Date`, `ReportStatus`, `StudyDescription`, `BodyPartExamined`) are found too. A row may
give findings/impression columns, or one free-text column that the section parser splits; either way sign-offs and
disclaimers are not part of findings or impression (signoffs.py). The study date (as ISO, study_dates.py) is kept in
the report's meta; status (normalised, study_status.py), exam description and body part on the report.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from retriever.reports.record import Report
from retriever.reports.sections import clean_text, parse_sections
from retriever.reports.signoffs import strip_signoffs
from retriever.reports.sources.base import MAX_REPORT_CHARS, Outcome, Rejection, normalize_modality
from retriever.reports.sources.files import Decoded, RowError, UnreadableFile, iter_csv_rows, iter_jsonl, read_text
from retriever.reports.sources.study_dates import DateColumn, date_meta
from retriever.reports.sources.study_status import normalize_status

#: Target field -> column names tried in order when not mapped explicitly, compared as `column_key` makes them.
DEFAULT_COLUMNS: dict[str, tuple[str, ...]] = {
    "id": (
        "id",
        "report_id",
        "accession",
        "accession_number",
        "accession_no",
        "acc_no",
        "accession_id",
        "uid",
        "study_id",
        "exam_id",
        "order_id",
        "note_id",
        "study_instance_uid",
    ),
    "findings": ("findings", "finding", "findings_en"),
    "impression": ("impression", "impressions", "impressions_en", "conclusion", "conclusions", "opinion"),
    "addendum": ("addendum", "addenda", "addendum_text", "report_addendum"),
    "text": (
        "text",
        "report",
        "report_text",
        "full_text",
        "transcription",
        "body",
        "report_body",
        "narrative",
        "final_report",
        "result_text",
        "observation_value",
        "report_value",
    ),
    "modality": (
        "modality",
        "modality_code",
        "modalities",
        "exam",
        "examination",
        "exam_type",
        "image_modalities",
        "study_type",
        "study_description",
        "procedure_description",
        "exam_description",
    ),
    "labels": ("labels", "label", "findings_labels", "diagnosis_labels"),
    "date": ("study_date", "exam_date", "study_datetime", "date_of_exam", "performed_date", "report_date", "date"),
    "body_part": ("body_part", "body_part_examined", "anatomy", "body_region"),
    "status": (
        "report_status",
        "status",
        "result_status",
        "study_status",
        "exam_status",
        "order_status",
        "report_state",
        "verification_status",
    ),
    "exam": (
        "study_description",
        "procedure_description",
        "exam_description",
        "requested_procedure_description",
        "procedure",
        "procedure_name",
        "exam_name",
        "study_name",
        "exam",
        "examination",
        "exam_type",
        "study_type",
        "description",
    ),
}
#: A field that may read the column another field took, when that column bears one of its own names: a file whose
#: only description column is `StudyDescription` gives its modality ("XR") and its exam ("XR CHEST 2 VIEWS").
SHARED_COLUMNS = {"exam": "modality"}


def column_key(name: str) -> str:
    """A column name compared without case, spaces or punctuation: `Accession No.` and `accession_no` are one."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


MAPPABLE = tuple(DEFAULT_COLUMNS)


@dataclass(frozen=True)
class ColumnMap:
    """Explicit column names per target field; unset fields are auto-detected."""

    columns: Mapping[str, str]

    @classmethod
    def parse(cls, spec: str | None) -> ColumnMap:
        """Parse "findings=Col A,impression=Col B"; raises ValueError naming the bad part."""
        columns: dict[str, str] = {}
        for part in filter(None, (p.strip() for p in (spec or "").split(","))):
            key, sep, value = part.partition("=")
            key = key.strip().lower()
            if not sep or not value.strip():
                raise ValueError(f"bad column mapping {part!r}: use FIELD=COLUMN")
            if key not in MAPPABLE:
                raise ValueError(f"unknown field {key!r} in column mapping; fields: {', '.join(MAPPABLE)}")
            columns[key] = value.strip()
        return cls(columns)

    def resolve(self, header: list[str]) -> dict[str, str]:
        """Field -> actual column for this header (each column serves one field; mapped ones first). Raises
        ValueError if a mapped column is absent."""
        by_key: dict[str, str] = {}
        for name in header:
            by_key.setdefault(column_key(name), name)
        resolved: dict[str, str] = {}
        for field_name, wanted in self.columns.items():
            if column_key(wanted) not in by_key:
                raise ValueError(f"mapped column {wanted!r} for {field_name} is not in the file")
            resolved[field_name] = by_key[column_key(wanted)]
        for field_name, names in DEFAULT_COLUMNS.items():
            taken = set(resolved.values())
            found = (by_key.get(column_key(n)) for n in names if field_name not in resolved)
            column = next((c for c in found if c is not None and c not in taken), None)
            if column is not None:
                resolved[field_name] = column
        for field_name, other in SHARED_COLUMNS.items():
            column = resolved.get(other, "")
            if field_name not in resolved and column_key(column) in map(column_key, DEFAULT_COLUMNS[field_name]):
                resolved[field_name] = column
        return resolved


def compose_full_text(sections: Mapping[str, str]) -> str:
    """A full report text from named sections, in reading order, each under its header."""
    return "\n".join(f"{name.upper()}: {text}" for name, text in sections.items() if text)


#: An id holding one of these could never be named again: `--remove` reads one id a line, a terminal shows them not.
_UNNAMEABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def report_from_row(
    row: Mapping[str, str],
    columns: Mapping[str, str],
    *,
    source: str,
    default_id: str,
    dates: DateColumn,
) -> Report | str:
    """Build a Report from one row, or return the reason it cannot be used. `dates`: how the file's date column is
    read (decided from the whole column)."""

    def get(field_name: str) -> str:
        return row.get(columns.get(field_name, ""), "") or ""

    findings, impression, text = _section(get("findings")), _section(get("impression")), get("text")
    if not (findings or impression or text.strip()):
        return "empty record (no findings, impression or report text)"
    if _UNNAMEABLE.search(get("id")):
        return "id with a line break or control character"
    if len(findings) + len(impression) + len(text) > MAX_REPORT_CHARS:
        return f"report too long (> {MAX_REPORT_CHARS} characters)"
    parsed = parse_sections(text) if text.strip() else None
    addendum = _section(get("addendum"))
    if parsed is not None:
        findings = findings or parsed.findings
        impression = impression or parsed.impression
        addendum = " ".join(p for p in (parsed.addendum, addendum) if p)
    # The export's own words, sign-offs included, when it gave no report text.
    cells = {name: clean_text(get(name)) for name in ("findings", "impression", "addendum")}
    full = text.strip() or compose_full_text(cells)
    labels = tuple(sorted({x.strip() for x in get("labels").replace("|", ";").split(";") if x.strip()}))
    modality, status = normalize_modality(get("modality")), normalize_status(get("status"))
    return Report(
        id=f"{source}:{get('id') or default_id}",
        findings=findings,
        impression=impression,
        full_text=full,
        modality=modality,
        labels=labels,
        source=source,
        meta=_originals(modality=(get("modality"), modality), status=(get("status"), status))
        | date_meta(get("date"), dates),
        status=status,
        exam=" ".join(get("exam").split()),
        body_part=get("body_part").strip(),
        addendum=addendum,
    )


def _section(cell: str) -> str:
    """A findings, impression or addendum column's text as a section: without sign-offs, whitespace cleaned."""
    return clean_text(strip_signoffs(cell.replace("\r\n", "\n").replace("\r", "\n")))


def _originals(**values: tuple[str, str]) -> dict[str, str]:
    """`NAME_original` meta entries for the cells whose normalised value differs from what the export wrote, case
    aside ("CR" read as XR, "Signed" as final, not "Final"): nothing the export said is lost."""
    return {
        f"{name}_original": cell.strip()
        for name, (cell, normalised) in values.items()
        if cell.strip() and cell.strip().lower() != normalised.lower()
    }


def _json_cell(value: object, separator: str) -> str:
    """A JSON value as cell text, never a Python repr: a list of plain values joined by `separator`, null empty,
    anything else (numbers, objects, nested lists) as JSON."""
    if isinstance(value, list) and not any(isinstance(item, list | dict) for item in value):
        return separator.join(_json_cell(item, separator) for item in value if item is not None)
    if value is None or isinstance(value, str):
        return value or ""
    return json.dumps(value, ensure_ascii=False)


def _cells(row: Mapping[str, object], columns: Mapping[str, str]) -> dict[str, str]:
    """A row's values as text: a list in the labels column is names (joined by ';'), elsewhere lines of text."""
    labels = columns.get("labels")
    return {name: _json_cell(value, ";" if name == labels else "\n") for name, value in row.items()}


def _columns(mapping: ColumnMap, header: list[str], rows: list[tuple[int, object]]) -> dict[str, str] | RowError:
    """Field -> column for this file's header, or why none of its rows can be used."""
    detail = f"columns: {', '.join(header) or 'none'}"
    try:
        columns = mapping.resolve(header)
    except ValueError as exc:
        return RowError(str(exc), detail)
    if not {"findings", "impression", "text"} & columns.keys():
        guess = f" (the longest column here: --map text={longest_column(rows, header)})" if header else ""
        reason = f"missing columns: no findings, impression or report-text column; map one with --map{guess}"
        return RowError(reason, detail)
    return columns


def longest_column(rows: list[tuple[int, object]], header: list[str]) -> str:
    """The column whose cells are longest on average over the first rows: a report's text, where there is one."""
    sample = [row for _, row in rows[:200] if isinstance(row, dict)]
    return max(header, key=lambda name: sum(len(str(row.get(name) or "")) for row in sample))


def _line_ids(path: Path, rows: list[tuple[int, object]], columns: Mapping[str, str]) -> dict[int, str]:
    """Ids for the rows without one, by line: `STEM-LINE`, with `-2`, `-3`... added while a row of the file has that
    id itself, so a line's id never takes a real one."""
    column = columns.get("id", "")
    real = {str(row.get(column) or "").strip() for _, row in rows if isinstance(row, dict)}
    ids: dict[int, str] = {}
    for number, _ in rows:
        candidate, suffix = f"{path.stem}-{number}", 1
        while candidate in real:
            suffix += 1
            candidate = f"{path.stem}-{number}-{suffix}"
        ids[number] = candidate
    return ids


def _date_column(rows: list[tuple[int, object]], columns: Mapping[str, str] | RowError) -> DateColumn:
    """How this file's study dates are read, decided from all of them (study_dates.py)."""
    column = columns.get("date") if isinstance(columns, dict) else None
    if column is None:
        return DateColumn()
    return DateColumn.of(_json_cell(row.get(column), "\n") for _, row in rows if isinstance(row, dict))


def _encoding_of(decoded: Decoded, starts: list[int], number: int) -> str | None:
    """The fallback encoding of any line of the record starting on line `number` (it ends where the next starts)."""
    following = bisect_right(starts, number)
    end = starts[following] if following < len(starts) else None
    return next(
        (enc for line, enc in decoded.fallback_lines.items() if number <= line and (end is None or line < end)), None
    )


def load_table(path: Path, mapping: ColumnMap | None = None, source: str | None = None) -> Iterator[Outcome]:
    """Import a .csv or .jsonl file of reports; every unusable row becomes a Rejection. A row with a line that was
    not UTF-8 records the encoding it was read with in its meta."""
    source = source or path.stem
    try:
        decoded = read_text(path)
        read = iter_jsonl if path.suffix.lower() == ".jsonl" else iter_csv_rows
        rows = list(read(path, decoded))
    except UnreadableFile as exc:
        yield Rejection(source, str(path), str(exc))
        return
    header = list(dict.fromkeys(k for _, r in rows if isinstance(r, dict) for k in r))
    columns = _columns(mapping or ColumnMap({}), header, rows)
    line_ids = _line_ids(path, rows, columns if isinstance(columns, dict) else {})
    dates = _date_column(rows, columns)
    starts = [number for number, _ in rows]
    for number, row in rows:
        ref = f"{path}:{number}"
        raw = {str(k): "" if v is None else str(v) for k, v in row.items()} if isinstance(row, dict) else None
        if isinstance(row, RowError) or isinstance(columns, RowError):
            error = row if isinstance(row, RowError) else columns
            yield Rejection(source, ref, error.reason, error.detail, raw)
            continue
        made = report_from_row(_cells(row, columns), columns, source=source, default_id=line_ids[number], dates=dates)
        if isinstance(made, str):
            yield Rejection(source, ref, made, row=raw)
        elif decoded.fallback_lines and (encoding := _encoding_of(decoded, starts, number)) is not None:
            yield replace(made, meta={**made.meta, "encoding": encoding})
        else:
            yield made
