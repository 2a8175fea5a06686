"""Index round trip, filters, BM25, integrity checks and the encoder guard, with the real MiniLM model."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from report_fixtures import REPORTS

from retriever.index.errors import IndexLoadError
from retriever.index.report_index import ReportIndex, SearchFilters
from retriever.search.query import EmptyQueryError


@pytest.fixture(scope="module")
def index_dir(minilm, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("idx") / "index"
    ReportIndex.build(REPORTS, minilm).save(folder)
    return folder


def test_round_trip_search_returns_the_semantic_match(index_dir: Path, minilm) -> None:
    index = ReportIndex.load(index_dir, minilm)
    assert index.manifest.fields == {"findings": 5, "impression": 6, "report": 6}
    hits = index.search("fluid in the left pleural space", field="impression", k=3)
    assert hits[0].report.id == "t:1" and hits[0].rank == 1
    assert hits[0].score >= hits[1].score >= hits[2].score
    assert hits[0].report.labels == ("effusion",) and hits[0].report.source == "site-a"
    liver = index.search("ill-defined hypoattenuation along the falciform ligament", field="findings", k=1)
    assert liver[0].report.id == "t:5"


def test_filters_restrict_results(index_dir: Path, minilm) -> None:
    index = ReportIndex.load(index_dir, minilm)
    ct = index.search("lung lesion", field="findings", k=5, filters=SearchFilters(modality="ct"))
    assert {h.report.id for h in ct} == {"t:4", "t:5"}
    labelled = index.search("heart", k=5, filters=SearchFilters(label="EDEMA"))
    assert [h.report.id for h in labelled] == ["t:3"]
    assert index.search("heart", k=5, filters=SearchFilters(source="nowhere")) == []


def test_bm25_baseline(index_dir: Path) -> None:
    index = ReportIndex.load(index_dir)
    hits = index.search("falciform ligament", field="findings", k=3, method="bm25")
    assert [h.report.id for h in hits] == ["t:5"] and hits[0].method == "bm25"


def test_empty_and_huge_queries(index_dir: Path, minilm) -> None:
    index = ReportIndex.load(index_dir, minilm)
    for bad in ("", "   \n\t", None):
        with pytest.raises(EmptyQueryError):
            index.search(bad)  # type: ignore[arg-type]
    huge = "pleural effusion " * 6000  # ~100,000 characters
    prepared = index.prepare(huge)
    assert prepared.truncated and "first 256 tokens" in prepared.notice()
    assert index.search(huge, k=1)[0].report.id == "t:1"


def test_unknown_field_and_method(index_dir: Path) -> None:
    index = ReportIndex.load(index_dir)
    with pytest.raises(ValueError, match="field 'diagnosis'"):
        index.search("x", field="diagnosis")
    with pytest.raises(ValueError, match="unknown method"):
        index.search("x", method="magic")


def test_truncated_faiss_file_is_refused(index_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(index_dir, broken)
    faiss_file = broken / "impression.faiss"
    faiss_file.write_bytes(faiss_file.read_bytes()[:100])
    with pytest.raises(IndexLoadError, match="truncated or replaced.*rebuild it with `assistant index"):
        ReportIndex.load(broken)


def test_corrupt_and_missing_files_are_refused(index_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "flipped"
    shutil.copytree(index_dir, broken)
    data = bytearray((broken / "findings.faiss").read_bytes())
    data[-10] ^= 0xFF
    (broken / "findings.faiss").write_bytes(bytes(data))
    with pytest.raises(IndexLoadError, match="SHA-256"):
        ReportIndex.load(broken)
    (broken / "reports.sqlite").unlink()
    with pytest.raises(IndexLoadError, match="missing"):
        ReportIndex.load(broken)
    (broken / "manifest.json").write_text("{nope", encoding="utf-8")
    with pytest.raises(IndexLoadError, match="not a valid manifest"):
        ReportIndex.load(broken)
    with pytest.raises(IndexLoadError, match="no index at"):
        ReportIndex.load(tmp_path / "absent")


def test_index_built_with_another_encoder_is_refused(index_dir: Path, tmp_path: Path, minilm) -> None:
    other = tmp_path / "other"
    shutil.copytree(index_dir, other)
    manifest = json.loads((other / "manifest.json").read_text())
    manifest["encoder"]["fingerprint"] = "0" * 64
    manifest["encoder"]["name"] = "mpnet"
    (other / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexLoadError, match="built with encoder 'mpnet'.*assistant index"):
        ReportIndex.load(other, minilm)


def test_save_is_atomic_and_replaces_previous(index_dir: Path, minilm, tmp_path: Path) -> None:
    target = tmp_path / "atomic"
    ReportIndex.build(REPORTS[:2], minilm).save(target)
    ReportIndex.build(REPORTS, minilm).save(target)
    assert ReportIndex.load(target).manifest.reports == len(REPORTS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["atomic"]  # no temp or backup folders left


def test_save_refuses_to_replace_a_folder_that_is_not_an_index(minilm, tmp_path: Path) -> None:
    """Library callers are protected too: only an index, an empty folder or nothing is replaced without overwrite."""
    from retriever.index.output_paths import UnsafeOutput

    built = ReportIndex.build(REPORTS[:2], minilm)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "patients.csv").write_text("keep me", encoding="utf-8")
    with pytest.raises(UnsafeOutput, match="not a RadSearch index.*--overwrite"):
        built.save(notes)
    assert (notes / "patients.csv").read_text(encoding="utf-8") == "keep me"
    unreadable = tmp_path / "bad-manifest"
    unreadable.mkdir()
    (unreadable / "manifest.json").write_text("[]", encoding="utf-8")
    with pytest.raises(UnsafeOutput, match="not a RadSearch index"):
        built.save(unreadable)
    a_file = tmp_path / "a-file"
    a_file.write_text("keep me too", encoding="utf-8")
    with pytest.raises(UnsafeOutput, match="not a folder"):
        built.save(a_file, overwrite=True)
    assert a_file.read_text(encoding="utf-8") == "keep me too"
    (tmp_path / "empty").mkdir()
    built.save(tmp_path / "empty")
    built.save(notes, overwrite=True)
    assert ReportIndex.load(notes).manifest.reports == 2 and not (notes / "patients.csv").exists()


def _copy(index_dir: Path, folder: Path) -> tuple[Path, dict]:
    """A copy of the index to break, and its manifest as JSON."""
    shutil.copytree(index_dir, folder)
    return folder, json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def _write_manifest(folder: Path, manifest: object) -> None:
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


WRONG_SHAPES = {
    "list": lambda m: [],
    "string": lambda m: "manifest",
    "file info not an object": lambda m: {**m, "files": {**m["files"], "reports.sqlite": "0" * 64}},
    "size as text": lambda m: {**m, "files": {"reports.sqlite": {"bytes": "1", "sha256": "0" * 64}}},
    "fields as list": lambda m: {**m, "fields": ["findings"]},
    "count as text": lambda m: {**m, "fields": {"findings": "5"}},
    "unknown field": lambda m: {**m, "fields": {"../../elsewhere": 5}},
    "no fields": lambda m: {**m, "fields": {}},
    "encoder null": lambda m: {**m, "encoder": None},
    "encoder dims as text": lambda m: {**m, "encoder": {**m["encoder"], "dims": "384"}},
    "reports as bool": lambda m: {**m, "reports": True},
    "version as bool": lambda m: {**m, "version": True},
    "file outside the folder": lambda m: {**m, "files": {**m["files"], "../outside": {"bytes": 1, "sha256": "0"}}},
}


@pytest.mark.parametrize("shape", WRONG_SHAPES)
def test_a_manifest_of_the_wrong_shape_is_a_load_error(index_dir: Path, tmp_path: Path, shape: str) -> None:
    """Issue 15, defect 7: `[]` gave a traceback; every malformed shape is an IndexLoadError naming the rebuild."""
    from retriever.index.manifest import is_current

    broken, manifest = _copy(index_dir, tmp_path / "broken")
    _write_manifest(broken, WRONG_SHAPES[shape](manifest))
    with pytest.raises(IndexLoadError, match="not a valid manifest.*rebuild it with `assistant index"):
        ReportIndex.load(broken)
    assert not is_current(broken, "minilm")


def test_every_file_the_index_reads_must_be_listed_in_the_manifest(index_dir: Path, tmp_path: Path) -> None:
    """Issue 15, defect 7: `"files": {}` switched every checksum off; an omitted file is now refused."""
    _, manifest = _copy(index_dir, tmp_path / "listing")
    bm25_file = next(name for name in manifest["files"] if name.startswith("bm25_findings/"))
    for omitted in ("reports.sqlite", "impression.faiss", bm25_file):
        broken, manifest = _copy(index_dir, tmp_path / f"without-{omitted.replace('/', '-')}")
        del manifest["files"][omitted]
        _write_manifest(broken, manifest)
        with pytest.raises(IndexLoadError, match=f"does not list {omitted}.*rebuild it with `assistant index"):
            ReportIndex.load(broken)
    broken, manifest = _copy(index_dir, tmp_path / "no-checksums")
    (broken / "reports.sqlite").write_bytes(b"not a database" * 100)
    _write_manifest(broken, {**manifest, "files": {}})
    with pytest.raises(IndexLoadError, match="does not list .* and 25 more files"):
        ReportIndex.load(broken)


def test_a_corrupt_store_the_manifest_vouches_for_is_a_load_error(index_dir: Path, tmp_path: Path) -> None:
    """Issue 15, defect 7: sqlite3.DatabaseError escaped as a traceback."""
    broken, manifest = _copy(index_dir, tmp_path / "vouched")
    garbage = b"not a database" * 100
    (broken / "reports.sqlite").write_bytes(garbage)
    manifest["files"]["reports.sqlite"] = {"bytes": len(garbage), "sha256": hashlib.sha256(garbage).hexdigest()}
    _write_manifest(broken, manifest)
    with pytest.raises(IndexLoadError, match="cannot read index.*rebuild it with `assistant index"):
        ReportIndex.load(broken)


def _fail_on_swap(name: str, fault):
    """os.replace that calls `fault` instead of moving the temp folder of index `name` into place."""
    real = os.replace

    def replace(src, dst) -> None:
        if Path(src).name.startswith(f".{name}.tmp-"):
            fault()
        real(src, dst)

    return replace


def test_a_failed_swap_keeps_the_previous_index(minilm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 15, defect 9: an error between the two renames left no index at the target."""
    target = tmp_path / "swap"
    ReportIndex.build(REPORTS[:2], minilm).save(target)
    newer = ReportIndex.build(REPORTS, minilm)

    def disk_full() -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", _fail_on_swap("swap", disk_full))
    with pytest.raises(OSError, match="No space left"):
        newer.save(target)
    monkeypatch.undo()
    assert ReportIndex.load(target).manifest.reports == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["swap"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="kills a forked save between its two renames")
def test_a_save_killed_between_its_renames_is_recovered(minilm, tmp_path: Path) -> None:
    """Issue 15, defect 9: a killed save left no index and its temp folder forever; loading restores the previous
    index and the next save removes temp folders of dead runs, but not those a running build may still own."""
    target = tmp_path / "killed"
    ReportIndex.build(REPORTS[:2], minilm).save(target)
    newer = ReportIndex.build(REPORTS, minilm)
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child, which dies as under SIGKILL
        try:
            os.replace = _fail_on_swap("killed", lambda: os._exit(9))
            newer.save(target)
        finally:
            os._exit(1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 9
    assert not target.exists() and (tmp_path / ".killed.old").is_dir()  # the crash state

    assert ReportIndex.load(target).manifest.reports == 2
    assert not (tmp_path / ".killed.old").exists()
    dead_runs = [p.name for p in tmp_path.glob(".killed.tmp-*")]
    assert len(dead_runs) == 1
    ancient = tmp_path / ".killed.tmp-ancient"  # no owner recorded (an older release), two days old
    ancient.mkdir()
    two_days_ago = time.time() - 2 * 86400
    os.utime(ancient, (two_days_ago, two_days_ago))
    recent = tmp_path / ".killed.tmp-recent"  # no owner recorded and new: may belong to a running build
    recent.mkdir()
    ReportIndex.build(REPORTS, minilm).save(target)
    assert ReportIndex.load(target).manifest.reports == len(REPORTS)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".killed.tmp-recent", "killed"]


def test_save_keeps_the_temp_folder_of_a_running_build(minilm, tmp_path: Path) -> None:
    """A concurrent build's temp folder (its owner alive) is never taken for a dead run's."""
    from retriever.index.swap import stage

    target = tmp_path / "busy"
    running = stage(target)
    ReportIndex.build(REPORTS[:2], minilm).save(target)
    assert running.is_dir() and ReportIndex.load(target).manifest.reports == 2


def test_building_nothing_is_a_clear_error(minilm) -> None:
    with pytest.raises(ValueError, match="no reports to index"):
        ReportIndex.build([], minilm)


def test_hybrid_methods_fuse_dense_and_bm25(index_dir: Path, minilm) -> None:
    index = ReportIndex.load(index_dir, minilm)
    for method in ("hybrid", "hybrid-weighted"):
        hits = index.search("falciform ligament hypodensity", field="findings", k=3, method=method)
        assert hits[0].report.id == "t:5" and hits[0].method == method
        assert [h.rank for h in hits] == [1, 2, 3]
    filtered = index.search("lesion", field="findings", k=5, method="hybrid", filters=SearchFilters(modality="CT"))
    assert {h.report.id for h in filtered} <= {"t:4", "t:5"}


def test_is_current_tells_make_when_to_rebuild_the_demo_index(tmp_path: Path) -> None:
    """`make demo-index` rebuilds when the index is missing, broken, from another encoder, an older export, older
    negation rules for BM25, or concepts linked by another vocabulary (or none stored)."""
    from retriever.concepts.fingerprint import concept_rules
    from retriever.encoders.onnx.encoder import EXPORT_VERSION
    from retriever.index.manifest import EncoderInfo, Manifest, is_current, main
    from retriever.negation.tokens import TOKENIZER_FINGERPRINT

    def write(backend: str, version: int, rules: str = TOKENIZER_FINGERPRINT, concepts: str = concept_rules()) -> Path:
        folder = tmp_path / (f"{backend}-{version}-{rules}" + ("" if concepts == concept_rules() else f"-{concepts}"))
        folder.mkdir()
        encoder = EncoderInfo("demo-enc", "/m", "f" * 64, 384, 256, backend, version)
        manifest = Manifest(encoder, {"findings": 1}, 1, "c" * 64, "2026-11-23", "flat", lexical_rules=rules)
        manifest.concept_rules = concepts
        manifest.write(folder)
        return folder

    assert is_current(write("onnx-int8", EXPORT_VERSION), "demo-enc")
    assert is_current(write("torch", 0), "demo-enc")
    assert not is_current(write("torch", 0, rules=""), "demo-enc")
    assert not is_current(write("torch", 0, concepts=""), "demo-enc")  # built before stored concepts
    assert not is_current(write("torch", 0, concepts="0123456789abcdef"), "demo-enc")  # another vocabulary
    assert not is_current(write("onnx-int8", EXPORT_VERSION - 1), "demo-enc")
    current = tmp_path / f"torch-0-{TOKENIZER_FINGERPRINT}"
    assert not is_current(current, "another-encoder")
    assert not is_current(tmp_path / "missing", "demo-enc")
    assert main(["demo-enc", str(tmp_path / f"onnx-int8-{EXPORT_VERSION}-{TOKENIZER_FINGERPRINT}")]) == 0
    (current / "manifest.json").write_text("{not json")
    assert not is_current(current, "demo-enc")
    assert main(["demo-enc", str(tmp_path / "missing")]) == 1
    assert main([]) == 2


def test_a_folder_of_reports_is_not_advised_as_the_out_of_a_rebuild(tmp_path: Path) -> None:
    """Issue 39: `RADSEARCH_INDEX` (or --index) at a report folder advised `assistant index ... --out` onto it."""
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "site.csv").write_text("id,findings,impression\n1,Effusion.,Effusion.\n", encoding="utf-8")
    with pytest.raises(IndexLoadError, match="not an index") as raised:
        ReportIndex.load(reports)
    assert f"--out {reports}`" not in str(raised.value) and f"assistant index {reports} --out" in str(raised.value)
