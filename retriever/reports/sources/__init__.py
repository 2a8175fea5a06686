"""Importers: turn paths (files, folders) or the name `demo` into Reports and Rejections.

`iter_corpus` picks the importer by what it finds: a known public CSV by its header, any other CSV/JSONL through
the column mapping, `.txt` files through the section parser. Files it cannot use, and entries of a folder it does
not read (hidden, symlinked folders, FIFOs, dangling links), are rejected with a reason, never silently skipped.
The label files of the public formats are the exception: their importers read them beside the reports file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from retriever.reports.sources.base import Outcome, Rejection
from retriever.reports.sources.demo_corpus import DEMO_CSV, load_radlabels
from retriever.reports.sources.files import UnreadableFile, read_csv_header
from retriever.reports.sources.names import SourceNames
from retriever.reports.sources.paths import Skipped, path_problem, walk_corpus
from retriever.reports.sources.public_formats import detect_format, load_public
from retriever.reports.sources.tabular import ColumnMap, load_table
from retriever.reports.sources.text_files import load_text_file

DEMO_NAMES = frozenset({"demo", "radlabels"})
_TABLE_SUFFIXES = {".csv", ".jsonl"}
_TEXT_SUFFIXES = {".txt", ".text", ".rpt", ""}
# Known side files of the public formats: read by their importers, not reports themselves.
_SIDE_FILES = {"negbio_labels14.csv", "valid_predicted_labels.csv"}

__all__ = ["ColumnMap", "Outcome", "Rejection", "SourceNames", "corpus_problem", "iter_corpus", "unusable_corpora"]


def corpus_problem(spec: str) -> str | None:
    """Why a corpus argument cannot be read at all (missing, a FIFO, ...), or None for `demo`, a file or a folder."""
    if spec in DEMO_NAMES:
        return None
    problem = path_problem(Path(spec).expanduser())
    if problem == "no such file or folder":
        return f"{problem} (or use `demo` for the shipped demo reports)"
    return problem


def unusable_corpora(specs: Iterable[str]) -> list[str]:
    """`ARGUMENT: why` for every corpus argument that cannot be read: checked before any work, because indexing
    the others would silently build (and maybe install) a partial index."""
    return [f"{spec}: {problem}" for spec in specs if (problem := corpus_problem(spec))]


def iter_corpus(spec: str, mapping: ColumnMap | None = None, names: SourceNames | None = None) -> Iterator[Outcome]:
    """All outcomes for one corpus argument: `demo` (the shipped MTSamples reports), `radlabels` (synthetic
    reports), a file, or a folder (searched recursively).

    `names` keeps report ids unique across the files of one run; pass the same instance for every argument.
    """
    names = names or SourceNames()
    if spec == "radlabels":
        yield from load_radlabels()
        return
    if spec == "demo":  # the shipped reports keep their own source, whatever the index's site
        yield from _iter_file(DEMO_CSV, DEMO_CSV.parent, None, SourceNames())
        return
    path = Path(spec).expanduser()
    if (problem := corpus_problem(spec)) is not None:
        yield Rejection(spec, spec, problem)
    elif path.is_dir():
        for found in walk_corpus(path):
            if isinstance(found, Skipped):
                yield Rejection(_folder_label(path), str(found.path), found.reason)
            elif found.name not in _SIDE_FILES:
                yield from _iter_file(found, path, mapping, names)
    else:
        yield from _iter_file(path, path.parent, mapping, names)


def _folder_label(folder: Path) -> str:
    return folder.name or "reports"


def _iter_file(path: Path, root: Path, mapping: ColumnMap | None, names: SourceNames) -> Iterator[Outcome]:
    """Outcomes of one file; `root` is the corpus folder (the file's own folder for a file given alone)."""
    suffix = path.suffix.lower()
    relative = path.relative_to(root).with_suffix("").as_posix()
    names.reading = path
    if suffix in _TABLE_SUFFIXES:
        try:
            fmt = None if suffix != ".csv" or (mapping and mapping.columns) else detect_format(read_csv_header(path))
        except UnreadableFile as exc:
            yield Rejection(names.table(path, relative, root), str(path), str(exc))
            return
        yield from load_public(path, fmt) if fmt else load_table(path, mapping, names.table(path, relative, root))
    elif suffix in _TEXT_SUFFIXES:
        source = names.claim(root, _folder_label(root), root.parent)
        yield load_text_file(path, source, relative)
    else:
        yield Rejection(_folder_label(root), str(path), "unsupported file type (use .csv, .jsonl or .txt)", suffix)
