"""Encoding on several workers (issue 19): two worker processes encode shards 0/2 and 1/2 of a corpus at once, and
`assistant index --merge-shards` merges them into the index one process builds (same ids, rows, counts, rejects,
search results; vectors allclose). Mismatched shards are refused with what to run (real MiniLM)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cli_fixtures import ASSISTANT
from typer.testing import CliRunner

from assistant.cli import app
from retriever.index.report_index import ReportIndex, open_parts
from retriever.index.shard_merge import merge_shards, open_shards
from retriever.index.shards import SHARD_FILE, Shard, ShardError, encode_shard, read_shard, shard_of
from retriever.index.streaming_build import encode_and_write, read_reports
from retriever.reports.ingest import ingest

ROWS = [
    {"id": "1", "findings": "Large left pleural effusion with compressive atelectasis.", "impression": "Effusion."},
    {"id": "2", "findings": "Right upper lobe consolidation with air bronchograms.", "impression": "Pneumonia."},
    {"id": "3", "findings": "Enlarged cardiac silhouette, cephalization of vessels.", "impression": "Cardiomegaly."},
    {"id": "4", "findings": "4 mm nodule in the right lower lobe.", "impression": "Small pulmonary nodule."},
    {"id": "5", "findings": "Hypodense lesion in segment IV.", "impression": "Focal fatty infiltration."},
    {"id": "6", "findings": "", "impression": "Impression-only report about pneumothorax."},
    {"id": "7", "findings": "Apical pleural line without lung markings.", "impression": "Right pneumothorax."},
    {"id": "8", "findings": "Large left pleural effusion, with compressive atelectasis!", "impression": "Dup."},
    {"id": "9", "findings": "Endotracheal tube 4 cm above the carina.", "impression": "Lines and tubes in place."},
    {"id": "10", "findings": "Wedge compression fracture of T12.", "impression": "T12 fracture."},
    {"id": "4", "findings": "A second record with id 4.", "impression": "Its newer version."},
]
QUERIES = ["fluid in the left pleural space", "collapsed lung at the apex", "broken vertebra", "tube position"]


def _corpus(folder: Path, rows: list[dict[str, str]] = ROWS) -> str:
    folder.mkdir()
    (folder / "site.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return str(folder / "site.jsonl")


def _single_build(corpus: str, out: Path, encoder, chunk_size: int = 1024) -> None:
    read_reports([corpus], out)
    encode_and_write(out, encoder, chunk_size=chunk_size)


def _assert_same_index(merged: Path, single: Path, encoder, updated: bool = False) -> None:
    """`updated`: both were updated, each at its own time, which the history records (the store's bytes differ)."""
    m_manifest, m_vectors, _, m_store = open_parts(merged)
    s_manifest, s_vectors, _, s_store = open_parts(single)
    try:
        for key in ("fields", "reports", "corpus_sha256", "index_type", "encoder", "quantizer_fit"):
            assert getattr(m_manifest, key) == getattr(s_manifest, key), key
        assert list(m_store.iter_reports()) == list(s_store.iter_reports())  # same row ids, reports, metadata
        assert [(i, v) for i, _, v in m_store.all_history()] == [(i, v) for i, _, v in s_store.all_history()]
        stores = () if updated else ("reports.sqlite",)
        for name in (*stores, *(f for f in m_manifest.files if f.startswith("bm25_"))):
            assert m_manifest.files[name] == s_manifest.files[name], name  # byte-identical store and BM25
        for field_name, index in m_vectors.items():
            assert _ids(index) == _ids(s_vectors[field_name])
            mine = np.stack([index.reconstruct(i) for i in _ids(index)])
            theirs = np.stack([s_vectors[field_name].reconstruct(i) for i in _ids(index)])
            np.testing.assert_allclose(mine, theirs, atol=1e-5)
    finally:
        m_store.close()
        s_store.close()
    a, b = ReportIndex.load(merged, encoder), ReportIndex.load(single, encoder)
    for query in QUERIES:
        for method in ("dense", "bm25", "hybrid-weighted"):
            assert [h.report.id for h in a.search(query, "findings", k=5, method=method)] == [
                h.report.id for h in b.search(query, "findings", k=5, method=method)
            ], (query, method)


def _ids(index) -> list[int]:
    import faiss

    return sorted(faiss.vector_to_array(index.id_map).tolist())


def test_the_split_puts_reports_in_both_shards_by_id() -> None:
    ids = [f"site:{r['id']}" for r in ROWS]
    assert {shard_of(i, 2) for i in ids} == {0, 1}
    assert [shard_of(i, 2) for i in ids] == [shard_of(i, 2) for i in ids]  # deterministic
    assert Shard.parse("1/2") == Shard(1, 2)
    for bad in ("2/2", "1", "-1/2", "a/b"):
        with pytest.raises(ShardError, match="0 <= I < N"):
            Shard.parse(bad)


def test_two_workers_encode_shards_at_once_and_the_merge_equals_a_single_build(minilm, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    env = {**os.environ, "RADSEARCH_ENCODER_BACKEND": minilm.backend, "COLUMNS": "200"}
    workers = [
        subprocess.Popen(
            [
                *ASSISTANT,
                "index",
                corpus,
                "--encoder",
                "minilm",
                "--shard",
                f"{i}/2",
                "--out",
                str(tmp_path / f"shard{i}"),
                "--drop-duplicate-findings",  # the exclusions of the library's single build below
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(2)
    ]
    outputs = [worker.communicate(timeout=600) for worker in workers]
    for worker, (_, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
        assert "indexed" in err and "encoded shard" in err  # each worker prints the whole corpus's counts
    single = tmp_path / "single"
    _single_build(corpus, single, minilm)

    rejects = tmp_path / "rejects.jsonl"
    merged = tmp_path / "merged"
    args = ["index", "--merge-shards", str(tmp_path / "shard1"), str(tmp_path / "shard0"), "--out", str(merged)]
    result = CliRunner().invoke(app, [*args, "--rejects", str(rejects)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "indexed 8 reports" in result.output
    expected = ingest([corpus]).rejections  # what `assistant index --rejects` writes
    assert [json.loads(line) for line in rejects.read_text().splitlines()] == [
        {"source": r.source, "ref": r.ref, "reason": r.reason, "detail": r.detail}
        | ({"row": r.row} if r.row is not None else {})
        for r in expected
    ]
    assert all("row" in json.loads(line) for line in rejects.read_text().splitlines())  # each record, to fix
    assert sorted(r.reason for r in expected) == ["duplicate findings", "missing findings"]  # id 4 twice: versions
    _assert_same_index(merged, single, minilm)


def _shards(corpus: str, tmp_path: Path, encoder, chunk_size: int = 2, count: int = 2) -> list[Path]:
    folders = []
    for i in range(count):
        folder = tmp_path / f"shard{i}"
        read = read_shard([corpus], folder, Shard(i, count))
        encode_shard(folder, Shard(i, count), read, encoder, chunk_size=chunk_size)
        folders.append(folder)
    return folders


def test_shard_chunks_are_recut_into_a_single_builds_chunks(minilm, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    folders = _shards(corpus, tmp_path, minilm, chunk_size=2, count=3)
    merge_shards(open_shards(folders), tmp_path / "merged", chunk_size=3)
    _single_build(corpus, tmp_path / "single", minilm, chunk_size=3)
    _assert_same_index(tmp_path / "merged", tmp_path / "single", minilm)


def test_mismatched_shards_are_refused_with_what_to_run(minilm, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    folders = _shards(corpus, tmp_path, minilm)
    with pytest.raises(ShardError, match=r"shards 1/2 are missing"):
        open_shards(folders[:1])
    with pytest.raises(ShardError, match=r"given more than once"):
        open_shards([folders[0], folders[0]])

    record = json.loads((folders[1] / SHARD_FILE).read_text())
    other = {**record, "encoder": {**record["encoder"], "name": "mpnet", "fingerprint": "f" * 64, "dims": 768}}
    (folders[1] / SHARD_FILE).write_text(json.dumps(other))
    result = CliRunner().invoke(app, ["index", "--merge-shards", *map(str, folders), "--out", str(tmp_path / "i")])
    assert result.exit_code == 2 and not (tmp_path / "i").exists()
    said = " ".join(result.output.split())
    assert "was encoded with 'mpnet'" in said and "--encoder minilm" in said

    changed = _corpus(tmp_path / "changed", [{**ROWS[0], "impression": "Changed."}, *ROWS[1:]])
    encode_shard(folders[1], Shard(1, 2), read_shard([changed], folders[1], Shard(1, 2)), minilm)
    with pytest.raises(ShardError, match="different corpora or with different options"):
        open_shards(folders)

    (folders[1] / SHARD_FILE).unlink()
    with pytest.raises(ShardError, match="not a finished shard"):
        open_shards(folders)


def test_a_shard_folder_is_never_written_over_something_else(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    result = CliRunner().invoke(app, ["index", corpus, "--shard", "0/2", "--out", str(busy)])
    assert result.exit_code == 2 and "not" in result.output and (busy / "notes.txt").exists()
    result = CliRunner().invoke(app, ["index", corpus, "--shard", "0/2", "--merge-shards", "--out", str(busy)])
    assert result.exit_code == 2


def test_a_killed_write_s_leftover_keeps_the_folder_a_shard_folder_but_a_stranger_s_file_does_not(
    tmp_path: Path,
) -> None:
    """shard.json is written through models/atomic.py: its temporary, left by a SIGKILL, must not make a rerun
    refuse its own shard, while a file a shard never holds still does."""
    from retriever.index.output_paths import UnsafeOutput
    from retriever.index.shards import prepare_folder

    folder = tmp_path / "shard"
    folder.mkdir()
    for name in (SHARD_FILE, f".{SHARD_FILE}.tmp-4242-0a1b2c3d", "chunk-000000.npz", "reports.sqlite"):
        (folder / name).write_text("x")
    prepare_folder(folder, overwrite=False)
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(UnsafeOutput, match="notes.txt"):
        prepare_folder(folder, overwrite=False)


@pytest.mark.parametrize(("column", "value"), [("id", "t:99"), ("modality", "MR"), ("source", "elsewhere")])
def test_a_shard_whose_stored_reports_were_edited_is_refused(minilm, tmp_path: Path, column: str, value: str) -> None:
    """Issue 39: the chunk digests cover row ids and texts only, so an edited id, modality or source in a shard's
    store was merged into the index; the merged store must equal the corpus every shard recorded."""
    import sqlite3

    folders = _shards(_corpus(tmp_path / "corpus"), tmp_path, minilm)
    with sqlite3.connect(folders[1] / "reports.sqlite") as db:
        db.execute(f"UPDATE reports SET {column} = ? WHERE rowid = (SELECT min(rowid) FROM reports)", (value,))
    with pytest.raises(ShardError, match="changed after"):
        merge_shards(open_shards(folders), tmp_path / "merged")
    assert not (tmp_path / "merged").exists()
