"""Robust reading of report files: encodings, binary files, CSV quirks, JSON Lines.

Exported reports are often Windows-1252 rather than UTF-8, and folders contain stray binaries; both must be
handled without losing the other records. Decoding falls back to cp1252 (then latin-1, which cannot fail) and the
encoding used is recorded; a file with NUL bytes is treated as binary and rejected as a whole.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


class UnreadableFile(Exception):
    """The whole file cannot be used (binary, unreadable); the message says why."""


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


def read_csv_header(path: Path) -> list[str]:
    """Column names of a CSV file (empty list when the file is empty)."""
    text, _ = read_text(path)
    reader = csv.reader(text.splitlines()[:1])
    return [c.strip() for c in next(reader, [])]


def iter_csv_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line number, row) with stripped string values; quoted newlines are kept inside fields.

    Rows with fewer cells than the header get empty strings, extra cells are dropped (csv gives them under None).
    """
    text, _ = read_text(path)
    reader = csv.DictReader(text.splitlines(keepends=True))
    for row in reader:
        clean = {k.strip(): (v or "").strip() for k, v in row.items() if k is not None and isinstance(v, str | None)}
        yield reader.line_num, clean


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, object] | str]]:
    """Yield (line number, object); a line that is not a JSON object yields an error message instead."""
    text, _ = read_text(path)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, f"invalid JSON: {exc.msg} at column {exc.colno}"
            continue
        yield number, obj if isinstance(obj, dict) else "a JSON line must be an object"
