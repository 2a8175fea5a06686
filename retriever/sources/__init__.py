"""Importers: turn paths (files, folders) or the name `demo` into Reports and Rejections.

`iter_corpus` picks the importer by what it finds: a known public CSV by its header, any other CSV/JSONL through
the column mapping, `.txt` files through the section parser. Files it cannot use are rejected with a reason,
never silently skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from retriever.sources.base import Outcome, Rejection
from retriever.sources.demo_corpus import load_demo
from retriever.sources.files import UnreadableFile, read_csv_header
from retriever.sources.public_formats import detect_format, load_public
from retriever.sources.tabular import ColumnMap, load_table
from retriever.sources.text_files import load_text_file

DEMO_NAMES = frozenset({"demo", "radlabels"})
_TABLE_SUFFIXES = {".csv", ".jsonl"}
# Known side files of the public formats: read by their importers, not reports themselves.
_SIDE_FILES = {"negbio_labels14.csv", "valid_predicted_labels.csv"}

__all__ = ["ColumnMap", "Outcome", "Rejection", "iter_corpus"]


def iter_corpus(spec: str, mapping: ColumnMap | None = None) -> Iterator[Outcome]:
    """All outcomes for one corpus argument: `demo`, a file, or a folder (searched recursively)."""
    if spec in DEMO_NAMES:
        yield from load_demo()
        return
    path = Path(spec).expanduser()
    if path.is_dir():
        for child in sorted(p for p in path.rglob("*") if p.is_file()):
            if child.name not in _SIDE_FILES and not child.name.startswith("."):
                yield from _iter_file(child, mapping, root=path)
    elif path.is_file():
        yield from _iter_file(path, mapping, root=path.parent)
    else:
        yield Rejection(spec, spec, "no such file or folder (or use `demo` for the packaged demo corpus)")


def _iter_file(path: Path, mapping: ColumnMap | None, root: Path) -> Iterator[Outcome]:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        try:
            fmt = None if mapping and mapping.columns else detect_format(read_csv_header(path))
        except UnreadableFile as exc:
            yield Rejection(path.stem, str(path), str(exc))
            return
        yield from load_public(path, fmt) if fmt else load_table(path, mapping)
    elif suffix in _TABLE_SUFFIXES:
        yield from load_table(path, mapping)
    elif suffix in {".txt", ".text", ".rpt", ""}:
        relative = path.relative_to(root).with_suffix("") if path != root else Path(path.stem)
        source = root.name or "reports"
        yield load_text_file(path, source, relative.as_posix())
    else:
        yield Rejection(path.parent.name, str(path), "unsupported file type (use .csv, .jsonl or .txt)", suffix)
