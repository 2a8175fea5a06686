"""Updating an index (issue 19): add / replace / remove round trips give what a full rebuild of the same final
reports gives (counts, manifest, search results of the exact index), with the real MiniLM model."""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

import numpy as np
import pytest
from report_fixtures import REPORTS

from retriever.index.errors import IndexLoadError
from retriever.index.report_index import ReportIndex
from retriever.index.swap import IndexBusy
from retriever.index.update import update_index
from retriever.index.vectors import build_vector_index, remove_vectors, search_vectors
from retriever.reports.ingest import Exclusions
from retriever.reports.record import FIELDS, Report

NEW = Report("t:7", "Moderate right pneumothorax without tension.", "Right pneumothorax.", modality="XR", source="c")
CHANGED = Report("t:2", "Left lower lobe consolidation.", "Left lower lobe pneumonia.", modality="XR", labels=("x",))
QUERIES = ("pleural effusion", "pneumonia in the left lung", "air in the pleural space", "no pneumothorax")


def _results(index: ReportIndex) -> dict[tuple[str, str, str], list[tuple[str, float]]]:
    """Every query's hits per field and method, as (report id, score to 4 places): row ids may differ."""
    return {
        (query, field, method): sorted(
            (h.report.id, round(h.score, 4)) for h in index.search(query, field, 10, method=method)
        )
        for query in QUERIES
        for field in FIELDS
        for method in ("dense", "bm25")
    }


@pytest.fixture()
def base(minilm, tmp_path: Path) -> Path:
    folder = tmp_path / "index"
    ReportIndex.build(REPORTS[:5], minilm).save(folder)
    return folder


def test_add_replace_remove_equals_a_full_rebuild(base: Path, minilm, tmp_path: Path) -> None:
    summary = update_index(base, [NEW, CHANGED, REPORTS[2]], removals=["t:4", "t:99"], encoder=minilm)
    assert (summary.added, summary.replaced, summary.unchanged) == (["t:7"], ["t:2"], ["t:3"])
    assert (summary.removed, summary.not_found, summary.rejections) == (["t:4"], ["t:99"], [])

    final = [REPORTS[0], CHANGED, REPORTS[2], REPORTS[4], NEW]
    rebuilt_folder = tmp_path / "rebuilt"
    ReportIndex.build(final, minilm).save(rebuilt_folder)
    updated, rebuilt = ReportIndex.load(base, minilm), ReportIndex.load(rebuilt_folder, minilm)
    assert updated.manifest.fields == rebuilt.manifest.fields == {"findings": 5, "impression": 5, "report": 5}
    assert updated.manifest.reports == 5 and updated.manifest.updated
    assert updated.manifest.created != "" and updated.manifest.index_type == "flat"
    assert _results(updated) == _results(rebuilt)
    hit = updated.search("left lower lobe pneumonia", "impression", 1)[0]
    assert hit.report == CHANGED  # the store holds the new text and metadata
    assert sorted(p.name for p in base.parent.iterdir() if not p.name.endswith(".lock")) == ["index", "rebuilt"]


def test_an_update_that_changes_nothing_writes_nothing(base: Path, minilm) -> None:
    before = (base / "manifest.json").stat()
    summary = update_index(base, REPORTS[:2], encoder=minilm)
    assert summary.unchanged == ["t:1", "t:2"] and not summary.changed()
    after = (base / "manifest.json").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_duplicate_findings_are_checked_against_the_index(base: Path, minilm) -> None:
    copy = Report("t:8", REPORTS[0].findings.upper() + "  ", "Another impression.")
    summary = update_index(base, [copy], encoder=minilm)
    assert summary.added == [] and [(r.ref, r.reason) for r in summary.rejections] == [("t:8", "duplicate findings")]
    assert "t:1" in summary.rejections[0].detail
    kept = update_index(base, [copy], encoder=minilm, exclusions=Exclusions(drop_duplicate_findings=False))
    assert kept.added == ["t:8"] and ReportIndex.load(base).manifest.reports == 6


def test_removing_then_adding_back_restores_the_results(base: Path, minilm, tmp_path: Path) -> None:
    original = _results(ReportIndex.load(base, minilm))
    update_index(base, [], removals=["t:1", "t:3"], encoder=minilm)
    assert ReportIndex.load(base).manifest.reports == 3
    update_index(base, [REPORTS[0], REPORTS[2]], encoder=minilm)
    assert _results(ReportIndex.load(base, minilm)) == original


def test_another_encoder_is_refused_with_the_rebuild_command(base: Path, minilm) -> None:
    manifest = json.loads((base / "manifest.json").read_text())
    manifest["encoder"]["fingerprint"] = "0" * 64
    (base / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexLoadError, match="assistant index CORPUS"):
        update_index(base, [NEW], encoder=minilm)


def test_a_second_update_of_the_same_folder_is_refused(base: Path, minilm) -> None:
    with open(base.with_name(".index.lock"), "w") as held:  # as a running build or update holds it
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(IndexBusy, match="another build or update"):
            update_index(base, [NEW], encoder=minilm)
    assert update_index(base, [NEW], encoder=minilm).added == ["t:7"]


@pytest.mark.parametrize("kind", ["flat", "ivfpq", "hnsw"])
def test_removing_vectors_keeps_the_others_and_their_scores(kind: str) -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((3000, 32)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    index = build_vector_index(data, np.arange(3000) * 3, kind)
    before = search_vectors(index, data[7], 20)
    index = remove_vectors(index, np.array([21, 0, 10**9]))
    after = search_vectors(index, data[7], 20)
    assert index.ntotal == 2998 and 21 not in dict(after)
    assert [(i, round(s, 4)) for i, s in before if i != 21][:15] == [(i, round(s, 4)) for i, s in after][:15]


def test_an_index_saved_without_bm25_term_ids_is_updated_from_the_store(base: Path, minilm, tmp_path: Path) -> None:
    manifest = json.loads((base / "manifest.json").read_text())
    for name in [n for n in manifest["files"] if n.endswith(("token_ids.npy", "token_offsets.npy"))]:
        (base / name).unlink()
        del manifest["files"][name]
    (base / "manifest.json").write_text(json.dumps(manifest))
    update_index(base, [NEW], removals=["t:1"], encoder=minilm)
    rebuilt = tmp_path / "rebuilt"
    ReportIndex.build([*REPORTS[1:5], NEW], minilm).save(rebuilt)
    assert _results(ReportIndex.load(base, minilm)) == _results(ReportIndex.load(rebuilt, minilm))
    assert (base / "bm25_findings" / "token_ids.npy").is_file()  # kept from now on


def test_an_index_tokenized_under_older_negation_rules_is_tokenized_anew(
    minilm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index built before "appears resolved" was a negation trigger: its BM25 scores the resolved effusion as
    present, search says so, and an update that adds nothing tokenizes the store anew (equal to a fresh build)."""
    import retriever.negation.scope as scope

    reports = [
        Report("r:1", "", "Left pleural effusion appears resolved.", source="c"),
        Report("r:2", "", "Small left pleural effusion.", source="c"),
        Report("r:3", "", "Mild cardiomegaly.", source="c"),
    ]
    folder = tmp_path / "index"
    older = {first: [p for p in phrases if p != ("appears", "resolved")] for first, phrases in scope._POST.items()}
    with monkeypatch.context() as patched:
        patched.setattr(scope, "_POST", older)
        ReportIndex.build(reports, minilm, ("impression",)).save(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["lexical_rules"] = "older"
    (folder / "manifest.json").write_text(json.dumps(manifest))

    stale = ReportIndex.load(folder, minilm)
    assert str(folder) in stale.notices(folder, "hybrid")[0]
    old_hits = stale.search("left pleural effusion", "impression", 3, method="bm25")
    assert {h.report.id for h in old_hits} == {"r:1", "r:2"}

    summary = update_index(folder, [], encoder=minilm)
    assert summary.retokenized and summary.changed() and not (summary.added or summary.removed)
    rebuilt = tmp_path / "rebuilt"
    ReportIndex.build(reports, minilm, ("impression",)).save(rebuilt)
    updated, fresh = ReportIndex.load(folder, minilm), ReportIndex.load(rebuilt, minilm)
    assert updated.manifest.current_lexical_rules and fresh.manifest.current_lexical_rules
    hits = updated.search("left pleural effusion", "impression", 3, method="bm25")
    assert [h.report.id for h in hits] == ["r:2"]  # the resolved mention's words are other terms now
    assert [(h.report.id, h.score) for h in hits] == [
        (h.report.id, h.score) for h in fresh.search("left pleural effusion", "impression", 3, method="bm25")
    ]
    assert not update_index(folder, [], encoder=minilm).changed()  # current now: nothing to do
