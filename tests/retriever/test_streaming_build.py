"""Streaming build (issue 19): reports read into a store and encoded in chunk files; a build killed part-way resumes
without re-encoding its finished chunks and gives the same index as an uninterrupted build (real MiniLM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_fixtures import REPORTS

from retriever.index.report_index import ReportIndex
from retriever.index.streaming_build import encode_and_write, read_reports, work_folder


def _corpus(folder: Path, rows: list[dict[str, str]]) -> str:
    folder.mkdir()
    (folder / "site.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return str(folder / "site.jsonl")


ROWS = [{"id": r.id, "findings": r.findings, "impression": r.impression} for r in REPORTS]


def _checksums(folder: Path) -> dict[str, str]:
    return {name: info["sha256"] for name, info in json.loads((folder / "manifest.json").read_text())["files"].items()}


class Killed(Exception):
    """Stands in for the process being killed mid-encoding (fault injection)."""


def _counting(monkeypatch: pytest.MonkeyPatch, encoder, fail_at: int | None = None) -> list[int]:
    calls: list[int] = []
    real = type(encoder).encode

    def encode(self, texts, **kwargs):  # noqa: ANN001, ANN202 - same signature as Encoder.encode
        calls.append(len(texts))
        if fail_at is not None and len(calls) == fail_at:
            raise Killed
        return real(self, texts, **kwargs)

    monkeypatch.setattr(type(encoder), "encode", encode)
    return calls


def test_a_killed_build_resumes_and_equals_an_uninterrupted_one(minilm, tmp_path: Path, monkeypatch) -> None:
    corpus = _corpus(tmp_path / "corpus", ROWS)
    whole = tmp_path / "whole"
    result = read_reports([corpus], whole)
    assert (result.kept, result.records_in, [r.reason for r in result.rejections]) == (5, 6, ["missing findings"])
    with monkeypatch.context() as patch:
        uninterrupted = _counting(patch, minilm)
        encode_and_write(whole, minilm, chunk_size=2)
    assert len(uninterrupted) == 9 and not work_folder(whole).exists()  # 3 chunks x 3 fields

    resumed = tmp_path / "resumed"
    read_reports([corpus], resumed)
    with monkeypatch.context() as patch, pytest.raises(Killed):
        _counting(patch, minilm, fail_at=5)  # killed while encoding the second chunk
        encode_and_write(resumed, minilm, chunk_size=2)
    assert not resumed.exists() and sorted(p.name for p in work_folder(resumed).glob("chunk-*")) == ["chunk-000000.npz"]
    read_reports([corpus], resumed)
    with monkeypatch.context() as patch:
        second_run = _counting(patch, minilm)
        encode_and_write(resumed, minilm, chunk_size=2)
    assert len(second_run) == 6  # the first chunk was not encoded again
    assert _checksums(resumed) == _checksums(whole)
    index = ReportIndex.load(resumed, minilm)
    assert index.manifest.reports == 5
    assert index.search("fluid in the left pleural space", k=1)[0].report.id == "site:t:1"


def test_a_changed_corpus_does_not_reuse_stale_chunks(minilm, tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "index"
    read_reports([_corpus(tmp_path / "before", ROWS)], out)
    with monkeypatch.context() as patch, pytest.raises(Killed):
        _counting(patch, minilm, fail_at=4)
        encode_and_write(out, minilm, chunk_size=2)
    changed = [{**ROWS[0], "findings": "Small right apical pneumothorax."}, *ROWS[1:]]
    read_reports([_corpus(tmp_path / "after", changed)], out)
    with monkeypatch.context() as patch:
        calls = _counting(patch, minilm)
        encode_and_write(out, minilm, chunk_size=2)
    assert len(calls) == 9  # the first chunk's reports changed: encoded again
    hit = ReportIndex.load(out, minilm).search("apical pneumothorax", field="findings", k=1)[0]
    assert hit.report.id == "site:t:1"
