"""The indexes a resident can choose from: those given with `--index`, the default (demo) index and every index
installed under the data folder. Each is loaded once and shared by every session: `ReportIndex` is safe to search
from several threads (retriever/index/report_index.py).

The page names an index by a key (`index-1`, `index-2`, ... in the order the catalog first listed them), never by its
folder: Gradio serves the page's API description, with every choice of its inputs, to clients that are not signed in
(issue 39), and a signed-in client can only choose among the listed indexes.

A new version of an index folder (`assistant update`, or a rebuild, swaps a whole new folder in) is picked up at the
next search without a restart: before each search the catalog compares the folder's generation (its inode and its
manifest's: retriever/index/swap.py) with the loaded version's and reloads when it changed. Searches already running
finish on the version they started with."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from models.paths import DataPaths
from retriever.index.manifest import MANIFEST
from retriever.index.swap import generation

if TYPE_CHECKING:
    from retriever.index.report_index import ReportIndex
    from retriever.search.configuration import Configure

log = logging.getLogger(__name__)


class IndexCatalog:
    """Index folders under `paths`, plus `extra`; `device` is where their encoders run; `search` makes each index's
    search configuration from its manifest (the settings' SearchSettings.configure; None: each card's first stage)."""

    def __init__(
        self,
        paths: DataPaths,
        extra: Sequence[Path] = (),
        *,
        device: str | None = None,
        search: Configure | None = None,
    ) -> None:
        self._paths = paths
        self._extra = [Path(p).expanduser() for p in extra]
        self._device = device
        self._search = search
        self._loaded: dict[str, tuple[tuple[int, ...] | None, ReportIndex]] = {}
        self._lock = threading.Lock()
        self._keys: dict[str, str] = {}  # resolved folder -> its key
        self._keys_lock = threading.Lock()  # not `_lock`: listing must not wait for an index to load

    def folders(self) -> list[Path]:
        """Candidate folders, `--index` ones first, then the default index, then the installed ones."""
        found = [*self._extra, self._paths.default_index]
        root = self._paths.indexes
        if root.is_dir():
            # hidden folders are an index being written or the previous one kept during a swap (index_swap.py)
            found += sorted(p for p in root.iterdir() if not p.name.startswith(".") and (p / "manifest.json").is_file())
        unique: dict[str, Path] = {}
        for folder in found:
            unique.setdefault(str(folder.resolve()), folder)
        return list(unique.values())

    def choices(self) -> list[tuple[str, str]]:
        """(label, key) pairs for the page."""
        return [(label, self.key(folder)) for label, folder in self.labelled()]

    def labelled(self) -> list[tuple[str, Path]]:
        """(label, folder) pairs; the label names the folder, encoder and size, or says the index is not built."""
        from retriever.index.manifest import Manifest

        labelled = []
        for folder in self.folders():
            try:
                manifest = Manifest.read(folder)
                label = f"{folder.name} · {manifest.encoder.name} · {manifest.reports:,} reports"
            except (OSError, ValueError):
                label = f"{folder.name} · not built"
            labelled.append((label, folder))
        return labelled

    def key(self, folder: str | Path) -> str:
        """The page's name for `folder`, the same for as long as the chat runs."""
        resolved = str(Path(folder).expanduser().resolve())
        with self._keys_lock:
            return self._keys.setdefault(resolved, f"index-{len(self._keys) + 1}")

    def folder(self, key: str) -> str | None:
        """The folder of a key the catalog gave (None for any other value)."""
        with self._keys_lock:
            return next((folder for folder, known in self._keys.items() if known == key), None)

    def default(self) -> str:
        """The first built index, else the first candidate (whose absence the page then explains)."""
        labelled = self.labelled()
        built = [str(folder) for label, folder in labelled if not label.endswith("not built")]
        return (built or [str(folder) for _, folder in labelled])[0]

    def load(self, folder: str) -> ReportIndex:
        """The loaded index, reloaded if a new version replaced it (IndexLoadError, saying what command builds it,
        when it is missing or broken and no version was loaded before)."""
        from retriever.index.errors import IndexLoadError
        from retriever.index.report_index import ReportIndex

        key = str(Path(folder).expanduser().resolve())
        stamp = generation(Path(key), MANIFEST)  # None while the folder is being swapped or absent
        with self._lock:
            loaded = self._loaded.get(key)
            if loaded is not None and (stamp is None or stamp == loaded[0]):
                return loaded[1]  # unchanged, or mid-swap: the loaded version is still a whole index
            try:
                index = ReportIndex.load(Path(folder), device=self._device, search=self._search)
                for note in index.notices(key, "hybrid"):
                    log.warning(note)
            except IndexLoadError:
                if loaded is None:
                    raise
                log.warning("kept the loaded version of %s: its new version cannot be read", key, exc_info=True)
                return loaded[1]
            if loaded is not None:
                log.info("loaded the new version of the index in %s", key)
            self._loaded[key] = (stamp, index)
            return index

    @staticmethod
    def filter_values(folder: str) -> tuple[list[str], list[str]]:
        """Modalities and sources in an index (empty lists when it cannot be read)."""
        from retriever.index.report_index import STORE_FILE
        from retriever.index.store import ReportStore

        try:
            store = ReportStore(Path(folder) / STORE_FILE)
            return store.values("modality"), store.values("source")
        except Exception:  # noqa: BLE001 - a missing/corrupt index is reported when it is searched
            return [], []
