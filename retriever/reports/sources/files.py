"""Robust reading of report files: encodings, binary files, CSV quirks, JSON Lines.

Exported reports are often Windows-1252 rather than UTF-8, and folders contain stray binaries; both must be
handled without losing the other records. A file that is not UTF-8 is decoded line by line: each line that is not
UTF-8 falls back to cp1252 (then latin-1, which cannot fail), so one stray byte costs nothing to the other lines,
and the lines decoded otherwise are recorded; a file with NUL bytes is treated as binary and rejected as a whole.
A column named twice in a CSV header keeps the text of both (joined by a line break).

A row that cannot be read as it was meant is never guessed at: it comes back as a `RowError` (reason and line),
the rows around it are read as usual, and every row read is one record, kept or rejected.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


class UnreadableFile(Exception):
    """The whole file cannot be used (binary, unreadable, empty, no records); the message says why."""


@dataclass(frozen=True)
class RowError:
    """A row that was read but cannot be used: `reason` is the kind (counted), `detail` the specifics."""

    reason: str
    detail: str = ""


@dataclass(frozen=True)
class Decoded:
    """A file's text; `encoding` is "utf-8" or the fallback most of its other lines took, `fallback_lines` the line
    numbers (from 1) that were not UTF-8 and the encoding each was read with."""

    text: str
    encoding: str = "utf-8"
    fallback_lines: Mapping[int, str] = field(default_factory=dict)


def _decode_line(line: bytes) -> tuple[str, str]:
    for encoding in ("utf-8", "cp1252", "latin-1"):
        try:
            return line.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decoding cannot fail")  # pragma: no cover


#: Byte order marks of the wide Unicode encodings, longest first (UTF-32 LE's starts with UTF-16 LE's).
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)


def _wide_encoding(data: bytes) -> str | None:
    """UTF-16 or UTF-32 when the file says so by its byte order mark, or UTF-16 without one when its NUL bytes fall on
    every other byte as ASCII text's do in it (Excel's "Unicode text", Windows tools' exports); None otherwise. Such
    files hold NUL bytes and were once rejected as binary (issue 51)."""
    for bom, encoding in _WIDE_BOMS:
        if data.startswith(bom):
            return encoding
    head = data[:4096]
    if len(head) < 4 or len(head) % 2:
        return None
    even, odd = head[0::2].count(0), head[1::2].count(0)
    if odd >= 0.9 * len(head) // 2 and even == 0:
        return "utf-16-le"
    if even >= 0.9 * len(head) // 2 and odd == 0:
        return "utf-16-be"
    return None


def read_text(path: Path) -> Decoded:
    """The file's text, decoded line by line where it is not UTF-8. Raises `UnreadableFile` for binary or
    unreadable files."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableFile(f"cannot read file: {exc.strerror or exc}") from exc
    if (wide := _wide_encoding(data)) is not None:
        try:
            return Decoded(data.decode(wide).removeprefix("\ufeff"), wide[:6])  # "utf-16" or "utf-32"
        except UnicodeDecodeError as exc:
            raise UnreadableFile(f"looks like {wide.upper()} text but does not decode as it: {exc.reason}") from exc
    if b"\x00" in data[:65536]:
        raise UnreadableFile("binary file (contains NUL bytes), not a text report")
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        return Decoded(data.decode("utf-8"))
    except UnicodeDecodeError:
        pass
    pieces, fallback = [], {}
    for number, line in enumerate(data.splitlines(keepends=True), start=1):  # \n, \r\n, \r: the csv module's lines
        text, encoding = _decode_line(line)
        pieces.append(text)
        if encoding != "utf-8":
            fallback[number] = encoding
    most = max(set(fallback.values()), key=list(fallback.values()).count)
    return Decoded("".join(pieces), most, fallback)


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
    text = read_text(path).text
    header = next((cells for _, cells in _csv_records(text) if cells), [])
    return [] if isinstance(header, RowError) else [c.strip() for c in header]


def _join_repeated(names: list[str], cells: list[str]) -> dict[str, str]:
    """Cells by column name, stripped; a name the header repeats keeps each distinct non-empty cell, in order."""
    row: dict[str, list[str]] = {}
    for name, value in zip(names, cells, strict=True):
        kept = row.setdefault(name, [])
        if value.strip() and value.strip() not in kept:
            kept.append(value.strip())
    return {name: "\n".join(values) for name, values in row.items()}


def iter_csv_rows(path: Path, decoded: Decoded | None = None) -> Iterator[tuple[int, dict[str, str] | RowError]]:
    """Yield (line the record starts on, row) with stripped values, or a `RowError`; quoted newlines stay in fields.

    A row whose cell count differs from the header's is an error, not padded or cut: an unquoted comma adds a
    cell and shifts every field after it, and a missing cell cannot be placed, so either would put text in the
    wrong field. Raises `UnreadableFile` for a file with no header, a broken header or no rows. `decoded`: the
    file as `read_text` gave it, when the caller has read it already.
    """
    text = (decoded or read_text(path)).text
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
            yield number, _join_repeated(names, cells)
    if not rows:
        raise UnreadableFile("header only, no records")


def iter_jsonl(path: Path, decoded: Decoded | None = None) -> Iterator[tuple[int, dict[str, object] | RowError]]:
    """Yield (line number, object), or a `RowError` for a line that is not a JSON object.

    Lines end at \\n only (JSON Lines): other Unicode line breaks may appear raw inside JSON strings. Raises
    `UnreadableFile` for a file without any non-blank line.
    """
    text = (decoded or read_text(path)).text
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
