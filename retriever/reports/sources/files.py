"""Robust reading of report files: encodings, binary files, CSV quirks, JSON Lines.

Exported reports are often Windows-1252 rather than UTF-8, and folders contain stray binaries; both must be
handled without losing the other records. Decoding falls back to cp1252 (then latin-1, which cannot fail) and the
encoding used is recorded; a file with NUL bytes is treated as binary and rejected as a whole.

A row that cannot be read as it was meant is never guessed at: it comes back as a `RowError` (reason and line),
the rows around it are read as usual, and every row read is one record, kept or rejected.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


class UnreadableFile(Exception):
    """The whole file cannot be used (binary, unreadable, empty, no records); the message says why."""


@dataclass(frozen=True)
class RowError:
    """A row that was read but cannot be used: `reason` is the kind (counted), `detail` the specifics."""

    reason: str
    detail: str = ""


def read_text(path: Path) -> tuple[str, str]:
    """Return (text, encoding). Raises `UnreadableFile` for binary or unreadable files."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableFile(f"cannot read file: {exc.strerror or exc}") from exc
    if b"\x00" in data[:65536]:
        raise UnreadableFile("binary file (contains NUL bytes), not a text report")
    for encoding in ("utf-8-sig", "cp1252", "latin-1"):
        try:
            return data.decode(encoding), encoding.replace("-sig", "")
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decoding cannot fail")  # pragma: no cover


def _csv_records(text: str) -> Iterator[tuple[int, list[str] | RowError]]:
    """(line the record starts on, its cells) per CSV record; blank lines give no cells.

    Parsed strictly (a closing quote must end its field, the text must not end inside quotes) because a quote
    left open otherwise swallows the following rows into one field without a trace. Such a record becomes a
    `RowError` at the line it starts on, and reading resumes on the next line, so the rows it swallowed are read
    as rows again (lines that were in fact the rest of a broken field mostly fail the cell count in turn). Not
    caught: an open quote that a later stray quote closes right before a comma or line end, with the cell count
    still right; it reads exactly like a field with line breaks in it.
    """
    lines = io.StringIO(text, newline="").readlines()  # \n, \r\n and \r end lines, as they do for the csv module
    start = 0
    while start < len(lines):
        reader = csv.reader(iter(lines[start:]), strict=True)
        consumed = 0
        try:
            for cells in reader:
                yield start + consumed + 1, cells
                consumed = reader.line_num
            return
        except csv.Error as exc:
            first, last = start + consumed + 1, start + reader.line_num
            where = f"line {first}" if last == first else f"lines {first} to {last}"
            if "end of data" in str(exc):
                detail = "a quote opened in this row is never closed; the lines after it were read as rows"
                yield first, RowError("unterminated quote", detail)
            else:
                detail = f"{exc} ({where}): a quote in this row may be unclosed; the lines after it were read as rows"
                yield first, RowError("malformed CSV row", detail)
            start = first


def read_csv_header(path: Path) -> list[str]:
    """Column names of a CSV file (empty list when the file is empty or its header row is broken)."""
    text, _ = read_text(path)
    header = next((cells for _, cells in _csv_records(text) if cells), [])
    return [] if isinstance(header, RowError) else [c.strip() for c in header]


def iter_csv_rows(path: Path) -> Iterator[tuple[int, dict[str, str] | RowError]]:
    """Yield (line the record starts on, row) with stripped values, or a `RowError`; quoted newlines stay in fields.

    A row whose cell count differs from the header's is an error, not padded or cut: an unquoted comma adds a
    cell and shifts every field after it, and a missing cell cannot be placed, so either would put text in the
    wrong field. Raises `UnreadableFile` for a file with no header, a broken header or no rows.
    """
    text, _ = read_text(path)
    if not text.strip():
        raise UnreadableFile("empty file")
    records = (record for record in _csv_records(text) if record[1] != [])
    _, header = next(records)
    if isinstance(header, RowError):
        raise UnreadableFile(f"header row: {header.reason} ({header.detail})")
    names = [c.strip() for c in header]
    rows = 0
    for number, cells in records:
        rows += 1
        if isinstance(cells, RowError):
            yield number, cells
        elif len(cells) != len(names):
            relation = "more" if len(cells) > len(names) else "fewer"
            detail = f"{len(cells)} cells, header has {len(names)}"
            yield number, RowError(f"row has {relation} cells than the header", detail)
        else:
            yield number, {name: value.strip() for name, value in zip(names, cells, strict=True)}
    if not rows:
        raise UnreadableFile("header only, no records")


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, object] | RowError]]:
    """Yield (line number, object), or a `RowError` for a line that is not a JSON object.

    Lines end at \\n only (JSON Lines): other Unicode line breaks may appear raw inside JSON strings. Raises
    `UnreadableFile` for a file without any non-blank line.
    """
    text, _ = read_text(path)
    lines = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        lines += 1
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, RowError("invalid JSON", f"{exc.msg} at column {exc.colno}")
            continue
        except (ValueError, RecursionError) as exc:  # numbers too long to convert, nesting too deep
            yield number, RowError("invalid JSON", str(exc) or type(exc).__name__)
            continue
        yield number, obj if isinstance(obj, dict) else RowError("a JSON line must be an object")
    if not lines:
        raise UnreadableFile("empty file")
