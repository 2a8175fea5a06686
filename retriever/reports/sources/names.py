"""Source names for one ingestion run: the index's site, or names unique per file.

With a site (`assistant index --source NAME`, recorded in the index for its updates) every table's reports are that
site's studies: `SITE:ACCESSION`, whatever the files are called, so the daily exports `ris_export_20261126.csv` and
`ris_export_20261127.csv` update the same studies (a table's site column, retriever/reports/sources/tabular.py,
names the site of its rows instead). Text reports, which have no accession, keep the names of their folders.

Without a site (a library caller, an index built before sites), names are unique per file, so report ids
(`source:key`) never collide across files.

A table's source is its path from the corpus argument without the suffix (`reports` for `reports.csv` given
alone or at the top of a folder, `2023/reports` below it); text reports share one source per folder (its name).
When a different file or folder already holds that name in the run (`2023/reports.csv 2024/reports.csv` as two
arguments), parent folders are added until the name is free: `2024/reports`. The same file read twice keeps its
name, so its records are caught as duplicates. A name depends only on the path and on what was read before it,
so the same corpus arguments always give the same ids.

An update reads files against the sources its index holds (`held`): a file whose path ends in a held name takes
that name (the shortest that fits), even when another file of the run took it, so `monday/site.csv` and
`tuesday/site.csv` (or a folder of such days) are both `site`, the exports of one source, and give its ids.
"""

from __future__ import annotations

from pathlib import Path

#: The site of an index built without `--source`: its tables' studies are `site:ACCESSION`.
DEFAULT_SITE = "site"


class SourceNames:
    """Hands out source names; one instance per ingestion run (all its corpus arguments)."""

    def __init__(self, held: frozenset[str] = frozenset(), site: str | None = None) -> None:
        self._by_owner: dict[Path, str] = {}
        self._taken: set[str] = set()
        self._held = held
        self.site = site
        #: The file being read (its export date orders a study's versions: retriever/reports/versions.py).
        self.reading: Path | None = None

    def table(self, path: Path, name: str, base: Path) -> str:
        """The source name of a table's reports: the site, else its own (`claim`)."""
        return self.site or self.claim(path, name, base)

    def claim(self, owner: Path, name: str, base: Path) -> str:
        """The source name of `owner` (a file, or a folder of text reports): `name` (its path from `base`) if free,
        else with as many of `base`'s folder names in front as it takes, else the owner's absolute path."""
        key = owner.resolve()
        if key in self._by_owner:
            return self._by_owner[key]
        folders = base.absolute().parts[1:]
        if self._held:
            path = (*folders, *name.split("/"))
            endings = ("/".join(path[len(path) - n :]) for n in range(1, len(path) + 1))
            if (known := next((e for e in endings if e in self._held), None)) is not None:
                self._by_owner[key] = known
                self._taken.add(known)
                return known
        candidates = ["/".join((*folders[len(folders) - n :], name)) for n in range(len(folders) + 1)]
        chosen = next((c for c in candidates if c not in self._taken), owner.absolute().as_posix())
        self._by_owner[key] = chosen
        self._taken.add(chosen)
        return chosen
