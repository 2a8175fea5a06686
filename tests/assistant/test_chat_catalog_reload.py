"""The chat picks up a new version of an index without a restart (issue 19): `assistant update` swaps a new folder
in, and the catalog's next load returns it; an unchanged folder is not reloaded; a broken new version is not served."""

from __future__ import annotations

import json
from pathlib import Path

from report_fixtures import REPORTS

from assistant.chat.catalog import IndexCatalog
from models.paths import DataPaths
from retriever.index.report_index import ReportIndex
from retriever.index.update import update_index
from retriever.reports.record import Report

NEW = Report("t:7", "Moderate right pneumothorax without tension.", "Right tension-free pneumothorax.")


def test_the_catalog_serves_the_new_version_after_an_update(minilm, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    ReportIndex.build(REPORTS[:3], minilm).save(folder)
    catalog = IndexCatalog(DataPaths(home=tmp_path / "home"), [folder])
    first = catalog.load(str(folder))
    assert catalog.load(str(folder)) is first  # unchanged: the loaded version is kept
    assert first.search("pneumothorax", k=3, method="bm25") == []

    update_index(folder, [NEW], encoder=minilm)
    second = catalog.load(str(folder))
    assert second is not first and second.manifest.reports == 4
    assert [h.report.id for h in second.search("pneumothorax", k=3, method="bm25")] == ["t:7"]
    assert first.search("pleural effusion", k=1, method="bm25")[0].report.id == "t:1"  # the old one still answers


def test_a_broken_new_version_keeps_the_loaded_one(minilm, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    ReportIndex.build(REPORTS[:3], minilm).save(folder)
    catalog = IndexCatalog(DataPaths(home=tmp_path / "home"), [folder])
    first = catalog.load(str(folder))
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"]["reports.sqlite"]["sha256"] = "0" * 64
    (folder / "manifest.json").unlink()  # a new manifest file, as a swap makes
    (folder / "manifest.json").write_text(json.dumps(manifest))
    assert catalog.load(str(folder)) is first
