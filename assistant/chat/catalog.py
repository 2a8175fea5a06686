"""The indexes a resident can choose from: those given with `--index`, the default (demo) index and every index
installed under the data folder. Each is loaded once and shared by every session: `ReportIndex` is safe to search
from several threads (retriever/index.py)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from models.paths import DataPaths

if TYPE_CHECKING:
    from retriever.index import ReportIndex


class IndexCatalog:
    """Index folders under `paths`, plus `extra`; `device` is where their encoders run."""

    def __init__(self, paths: DataPaths, extra: Sequence[Path] = (), *, device: str | None = None) -> None:
        self._paths = paths
        self._extra = [Path(p).expanduser() for p in extra]
        self._device = device
        self._loaded: dict[str, ReportIndex] = {}
        self._lock = threading.Lock()

    def folders(self) -> list[Path]:
        """Candidate folders, `--index` ones first, then the default index, then the installed ones."""
        found = [*self._extra, self._paths.default_index]
        root = self._paths.indexes
        if root.is_dir():
            # hidden folders are an index being written or the previous one kept during a swap (index_swap.py)
            found += sorted(
                p for p in root.iterdir() if not p.name.startswith(".") and (p / "manifest.json").is_file()
            )
        unique: dict[str, Path] = {}
        for folder in found:
            unique.setdefault(str(folder.resolve()), folder)
        return list(unique.values())

    def choices(self) -> list[tuple[str, str]]:
        """(label, folder) pairs; the label names the encoder and size, or says the index is not built."""
        from retriever.manifest import Manifest

        choices = []
        for folder in self.folders():
            try:
                manifest = Manifest.read(folder)
                label = f"{folder.name} · {manifest.encoder.name} · {manifest.reports:,} reports"
            except (OSError, ValueError):
                label = f"{folder.name} · not built"
            choices.append((label, str(folder)))
        return choices

    def default(self) -> str:
        """The first built index, else the first candidate (whose absence the page then explains)."""
        choices = self.choices()
        built = [value for label, value in choices if not label.endswith("not built")]
        return (built or [value for _, value in choices])[0]

    def load(self, folder: str) -> ReportIndex:
        """The loaded index (IndexLoadError, saying what command builds it, when it is missing or broken)."""
        from retriever.index import ReportIndex

        key = str(Path(folder).expanduser().resolve())
        with self._lock:
            if key not in self._loaded:
                self._loaded[key] = ReportIndex.load(Path(folder), device=self._device)
            return self._loaded[key]

    @staticmethod
    def filter_values(folder: str) -> tuple[list[str], list[str]]:
        """Modalities and sources in an index (empty lists when it cannot be read)."""
        from retriever.index import STORE_FILE
        from retriever.report_store import ReportStore

        try:
            store = ReportStore(Path(folder) / STORE_FILE)
            return store.values("modality"), store.values("source")
        except Exception:  # noqa: BLE001 - a missing/corrupt index is reported when it is searched
            return [], []
