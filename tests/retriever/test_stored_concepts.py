"""Each report's affirmed diagnoses stored in the index (issue 48): linked as a store is written, kept right by every
update, read back exactly as the evidence would link them, and never used when another vocabulary linked them."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from report_fixtures import REPORTS

from retriever.concepts.conclusion import affirmed_diagnoses, from_stored, stored_form
from retriever.index.folder import STORE_FILE, write_manifest
from retriever.index.manifest import Manifest
from retriever.index.report_index import ConceptsNotStored, ReportIndex, SearchFilters
from retriever.index.store import ReportStore, change_store, write_store
from retriever.index.update import update_index
from retriever.reports.record import Report

HEDGED = Report("t:8", "Patchy opacity.", "Possible pneumonia. No pleural effusion.", modality="XR", source="a")
SIGNED = Report("t:9", "Blunted angle.", "Small left effusion. Electronically signed by: Dr X.", source="a")


def _stored(path: Path) -> dict[str, tuple[tuple[str, float], ...]]:
    """Report id -> its stored concepts, read through the store."""
    store = ReportStore(path)
    try:
        rows = dict(store.iter_reports())
        return {rows[rowid].id: pairs for rowid, pairs in store.concepts(sorted(rows)).items()}
    finally:
        store.close()


def test_a_written_store_holds_what_the_evidence_links_from_each_conclusion(tmp_path: Path) -> None:
    reports = [*REPORTS, HEDGED, SIGNED]
    write_store(tmp_path / STORE_FILE, reports)
    stored = _stored(tmp_path / STORE_FILE)
    assert stored == {r.id: stored_form(r.conclusion) for r in reports}
    assert stored["t:1"] == (("rad:pleural_effusion", 1.0),)
    assert stored["t:8"] == (("rad:pneumonia", 0.5),)  # hedged; the negated effusion is not affirmed
    for report in reports:  # read back, the same (concept, certainty) list the evidence links at answer time
        assert from_stored(stored[report.id]) == affirmed_diagnoses(report.conclusion)


def test_the_store_finds_the_reports_affirming_a_concept(tmp_path: Path) -> None:
    write_store(tmp_path / STORE_FILE, [*REPORTS, SIGNED])
    store = ReportStore(tmp_path / STORE_FILE)
    try:
        assert store.affirming("rad:pleural_effusion").tolist() == [0, 6]  # t:1 and the signed report
        assert store.affirming("rad:no_such_concept").tolist() == []
    finally:
        store.close()


def test_an_update_links_new_and_changed_reports_and_forgets_removed_ones(tmp_path: Path) -> None:
    path = tmp_path / STORE_FILE
    write_store(path, REPORTS)
    changed = replace(REPORTS[1], impression="Right pneumothorax.")
    change_store(path, [(1, changed), (6, HEDGED)], deletes=[0])
    stored = _stored(path)
    assert "t:1" not in stored
    assert stored["t:2"] == stored_form("Right pneumothorax.") and stored["t:8"] == stored_form(HEDGED.conclusion)
    with sqlite3.connect(path) as db:  # no row of a removed or replaced report is left behind
        assert {r for (r,) in db.execute("SELECT DISTINCT report FROM concepts")} <= {1, 2, 3, 4, 5, 6}
    db.close()


def test_a_store_written_before_concepts_is_read_without_them_and_an_update_links_every_report(tmp_path: Path) -> None:
    path = tmp_path / STORE_FILE
    write_store(path, REPORTS)
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE concepts")
    db.close()
    store = ReportStore(path)
    assert not store.has_concepts and store.concepts([0, 1]) == {} and store.affirming("rad:pneumonia").size == 0
    store.close()
    change_store(path, [(6, HEDGED)], deletes=[], relink=True)
    assert _stored(path) == {r.id: stored_form(r.conclusion) for r in [*REPORTS, HEDGED]}


# ------------------------------------------------------------------------------------- whole indexes (real MiniLM)
def _age(folder: Path, concept_rules: str, drop_table: bool) -> None:
    """Make `folder` an index of an older program (no concepts table) or one linked by another vocabulary."""
    if drop_table:
        with sqlite3.connect(folder / STORE_FILE) as db:
            db.execute("DROP TABLE concepts")
        db.close()
    manifest = Manifest.read(folder)
    manifest.concept_rules = concept_rules
    write_manifest(folder, manifest)


@pytest.mark.models
def test_hits_carry_the_stored_concepts_and_a_search_filters_by_a_diagnosis(minilm, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    ReportIndex.build([*REPORTS, SIGNED], minilm).save(folder)
    index = ReportIndex.load(folder, minilm)
    assert index.concepts_stored and index.manifest.current_concepts
    hits = index.search("pleural fluid", "impression", 7)
    assert all(h.concepts == stored_form(h.report.conclusion) for h in hits)
    filtered = index.search("pleural fluid", "impression", 5, SearchFilters(diagnosis="rad:pleural_effusion"))
    assert sorted(h.report.id for h in filtered) == ["t:1", "t:9"]
    both = SearchFilters(source="site-a", diagnosis="rad:pleural_effusion")
    assert [h.report.id for h in index.search("fluid", "findings", 5, both)] == ["t:1"]
    assert [h.report.id for h in index.search("effusion", "findings", 5, both, method="bm25")] == ["t:1"]


@pytest.mark.models
@pytest.mark.parametrize("drop_table", [True, False], ids=["built-before-concepts", "another-vocabulary"])
def test_an_index_without_current_concepts_answers_without_them_until_an_update_relinks(
    minilm, tmp_path: Path, drop_table: bool
) -> None:
    folder = tmp_path / "index"
    ReportIndex.build(REPORTS, minilm).save(folder)
    _age(folder, "" if drop_table else "0123456789abcdef", drop_table)
    old = ReportIndex.load(folder, minilm)
    assert not old.concepts_stored
    assert all(h.concepts is None for h in old.search("pleural effusion", "impression", 3))  # never stale ones
    with pytest.raises(ConceptsNotStored, match="link them anew"):
        old.search("effusion", "impression", 3, SearchFilters(diagnosis="rad:pleural_effusion"))

    summary = update_index(folder, [], relink=True, encoder=minilm)
    assert summary.relinked and summary.changed() and not summary.added
    index = ReportIndex.load(folder, minilm)
    assert index.concepts_stored
    assert _stored(folder / STORE_FILE) == {r.id: stored_form(r.conclusion) for r in REPORTS}


@pytest.mark.models
def test_any_update_of_an_index_without_current_concepts_links_every_report(minilm, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    ReportIndex.build(REPORTS[:4], minilm).save(folder)
    _age(folder, "", drop_table=True)
    summary = update_index(folder, [HEDGED], encoder=minilm)
    assert summary.added == ["t:8"] and summary.relinked
    assert _stored(folder / STORE_FILE) == {r.id: stored_form(r.conclusion) for r in [*REPORTS[:4], HEDGED]}
    assert json.loads((folder / "manifest.json").read_text())["concept_rules"] == Manifest.read(folder).concept_rules
    assert ReportIndex.load(folder, minilm).concepts_stored


@pytest.mark.models
def test_updated_concepts_equal_a_rebuild_s(minilm, tmp_path: Path) -> None:
    """Add, replace and remove: the stored concepts are those a full build of the final reports stores."""
    folder, rebuilt = tmp_path / "index", tmp_path / "rebuilt"
    ReportIndex.build(REPORTS[:5], minilm).save(folder)
    changed = replace(REPORTS[1], impression="Left pleural effusion. Possible pneumonia.")
    update_index(folder, [changed, HEDGED], removals=["t:3"], encoder=minilm)
    ReportIndex.build([REPORTS[0], changed, REPORTS[3], REPORTS[4], HEDGED], minilm).save(rebuilt)
    assert _stored(folder / STORE_FILE) == _stored(rebuilt / STORE_FILE)
    index = ReportIndex.load(folder, minilm)
    assert index.affirming("rad:pleural_effusion").size == 2 and not index.affirming("rad:cardiomegaly").size


@pytest.mark.models
def test_the_streaming_build_stores_the_concepts_too(minilm, tmp_path: Path) -> None:
    from retriever.index.streaming_build import encode_and_write, read_reports

    corpus = tmp_path / "site.jsonl"
    rows = [{"id": r.id.split(":")[1], "findings": r.findings, "impression": r.impression} for r in REPORTS[:5]]
    corpus.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    out = tmp_path / "index"
    read_reports([str(corpus)], out)
    manifest = encode_and_write(out, minilm)
    assert manifest.current_concepts
    stored = _stored(out / STORE_FILE)
    assert sorted(stored.values()) == sorted(stored_form(r.conclusion) for r in REPORTS[:5])
    assert np.array_equal(ReportIndex.load(out, minilm).affirming("rad:pneumonia"), [1])
