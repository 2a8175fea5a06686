"""Drift of a growing IVF-PQ index (issue 19): new vectors like the indexed ones are added silently; a batch from
another region of the space is flagged with the command that retrains. Small synthetic vectors, real FAISS."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from retriever.encoders.encoder import Encoder
from retriever.index import vectors as faiss_index
from retriever.index.drift import DRIFT_WARN, drift_ratio, drift_warning, mean_residual, stored_baseline
from retriever.index.manifest import Manifest
from retriever.index.report_index import open_parts
from retriever.index.streaming_build import encode_and_write, read_reports
from retriever.index.update import update_index
from retriever.index.vectors import build_vector_index
from retriever.reports.record import Report

DIMS = 32
AREAS = 40
_rng = np.random.default_rng(0)
CENTRES = _rng.standard_normal((AREAS, DIMS)).astype(np.float32)
#: The same areas in another region of the space (a rotation): a new site, language or modality.
ROTATION = np.linalg.qr(_rng.standard_normal((DIMS, DIMS)))[0].astype(np.float32)


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _vectors(count: int, seed: int, drifted: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = CENTRES @ ROTATION if drifted else CENTRES
    picked = centres[rng.integers(AREAS, size=count)]
    return _unit(picked + 0.6 * rng.standard_normal((count, DIMS)).astype(np.float32))


def test_the_statistic_is_one_in_distribution_and_large_for_a_drifted_batch() -> None:
    base = _vectors(6000, seed=1)
    index = build_vector_index(base, np.arange(6000), "ivfpq")
    baseline = mean_residual(index, _vectors(2000, seed=2))  # vectors of the build left out of training
    assert abs(stored_baseline(index) / baseline - 1) < 0.25  # estimated from stored vectors: same scale
    same, drifted = _vectors(500, seed=3), _vectors(500, seed=4, drifted=True)
    assert drift_ratio(index, same, baseline) < 1.1
    assert drift_ratio(index, drifted, baseline) > 1.5 * DRIFT_WARN
    assert drift_warning(drift_ratio(index, same, baseline), 500, "impression", "CMD") is None
    warning = drift_warning(drift_ratio(index, drifted, baseline), 500, "impression", "CMD")
    assert warning and "recall" in warning and warning.endswith("CMD")
    assert drift_warning(10.0, 20, "impression", "CMD") is None  # too few vectors to judge


class _AreaEngine:
    """Stands in for a model: "area A case N" -> a vector around area A ("new-area": the rotated areas)."""

    name, version, model, dims, max_seq_length = "torch", 0, None, DIMS, 128

    def encode(self, texts: list[str], batch_size: int, *, progress: bool) -> np.ndarray:
        rows = []
        for text in texts:
            drifted, area, case = re.search(r"(new-)?area (\d+) case (\d+)", text).groups()
            centre = (CENTRES @ ROTATION if drifted else CENTRES)[int(area)]
            rows.append(centre + 0.6 * np.random.default_rng(int(case)).standard_normal(DIMS).astype(np.float32))
        return _unit(np.stack(rows))

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def _reports(first: int, count: int, prefix: str = "area") -> list[Report]:
    return [
        Report(str(i), f"{prefix} {i % AREAS} case {i} findings", f"{prefix} {i % AREAS} case {i} impression")
        for i in range(first, first + count)
    ]


@pytest.fixture()
def ivf_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Encoder]:
    """An IVF-PQ index of 1,500 reports built as `assistant index` builds (IVF-PQ above 100 vectors here)."""
    monkeypatch.setattr(faiss_index, "EXACT_LIMIT", 100)
    folder, encoder, manifest = _built(tmp_path, 1500, monkeypatch)
    assert manifest.index_type == "ivfpq" and set(manifest.quantizer_fit) == {"findings", "impression", "report"}
    return folder, encoder


def _built(tmp_path: Path, count: int, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Encoder, Manifest]:
    """`count` area reports indexed as `assistant index` does, at the EXACT_LIMIT the test set."""
    monkeypatch.setattr(faiss_index, "TRAIN_PER_LIST", 8)  # leaves vectors out of training for the baseline
    corpus = tmp_path / "site.jsonl"
    rows = [{"id": r.id, "findings": r.findings, "impression": r.impression} for r in _reports(0, count)]
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    encoder = Encoder("areas", str(tmp_path / "no-weights"), _AreaEngine())
    folder = tmp_path / "index"
    read_reports([str(corpus)], folder)
    return folder, encoder, encode_and_write(folder, encoder)


def _added(first: int, count: int, prefix: str = "area") -> list[Report]:
    return [Report(f"site:{r.id}", r.findings, r.impression, source="site") for r in _reports(first, count, prefix)]


def test_an_update_like_the_index_adds_without_a_warning(ivf_index: tuple[Path, Encoder]) -> None:
    folder, encoder = ivf_index
    summary = update_index(folder, _added(5000, 200), encoder=encoder)
    assert len(summary.added) == 200 and summary.notices == []


def test_a_drifted_update_warns_with_the_command_that_retrains(ivf_index: tuple[Path, Encoder]) -> None:
    folder, encoder = ivf_index
    summary = update_index(folder, _added(5000, 200, prefix="new-area"), encoder=encoder)
    assert len(summary.added) == 200 and len(summary.notices) == 3  # one per field
    assert all("recall" in n and f"assistant update --retrain --index {folder}" in n for n in summary.notices)
    manifest, _, _, store = open_parts(folder)
    store.close()
    assert manifest.reports == 1700  # added all the same: the warning does not refuse


def _recall_near(index_folder: Path, queries: np.ndarray) -> float:
    """recall@10 of the impression index against exact search over its own stored vectors."""
    import faiss

    from retriever.index.vectors import search_vectors

    _, vectors, _, store = open_parts(index_folder)
    store.close()
    index = vectors["impression"]
    stored = index.index.reconstruct_batch(np.arange(index.ntotal))
    exact = faiss.IndexIDMap2(faiss.IndexFlatIP(stored.shape[1]))
    exact.add_with_ids(stored, faiss.vector_to_array(index.id_map))
    truth = exact.search(queries, 10)[1]
    found = [{i for i, _ in search_vectors(index, q, 10, nprobe=4)} for q in queries]
    return float(np.mean([len(f & set(t)) / 10 for f, t in zip(found, truth, strict=True)]))


def test_retraining_after_drift_fits_the_new_reports_and_keeps_every_vector(ivf_index: tuple[Path, Encoder]) -> None:
    folder, encoder = ivf_index
    drifted = _added(5000, 300, prefix="new-area")
    assert len(update_index(folder, drifted, encoder=encoder).notices) == 3
    before, vectors, _, store = open_parts(folder)
    store.close()
    ids_before = {f: set(faiss_index.faiss.vector_to_array(v.id_map)) for f, v in vectors.items()}
    near = encoder.encode([r.impression for r in _reports(9000, 100, "new-area")])
    grown_recall = _recall_near(folder, near)
    old_index = vectors["impression"]

    summary = update_index(folder, [], retrain=True)  # no reports: no encoder is needed
    assert summary.retrained == ["findings", "impression", "report"] and summary.notices == []
    after, vectors, _, store = open_parts(folder)
    store.close()
    assert after.reports == before.reports == 1800 and after.index_type == "ivfpq"
    assert {f: set(faiss_index.faiss.vector_to_array(v.id_map)) for f, v in vectors.items()} == ids_before
    assert after.quantizer_fit != before.quantizer_fit
    added = encoder.encode([r.impression for r in drifted])
    grown_ratio = drift_ratio(old_index, added, before.quantizer_fit["impression"])  # 3.6 here
    # Trained anew, the quantizer gives the new site's reports centroids of their own (their share of them: 1.7
    # here, as a sixth of the index) and recall near them rises (0.64 -> 0.87 with 4 of 64 lists probed).
    assert drift_ratio(vectors["impression"], added, after.quantizer_fit["impression"]) < 0.6 * grown_ratio
    assert _recall_near(folder, near) > grown_recall + 0.1


def test_an_exact_index_grown_past_the_limit_is_told_to_retrain_and_becomes_ivfpq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(faiss_index, "EXACT_LIMIT", 1000)
    monkeypatch.setattr("retriever.index.update.EXACT_LIMIT", 1000)
    folder, encoder, manifest = _built(tmp_path, 900, monkeypatch)
    assert manifest.index_type == "flat"
    grown = update_index(folder, _added(5000, 300), encoder=encoder)
    assert any(f"assistant update --retrain --index {folder}" in n for n in grown.notices)
    query = encoder.encode(["area 7 case 5007 impression"])[0]
    exact_hits = _top(folder, query)

    update_index(folder, [], retrain=True)
    manifest, vectors, _, store = open_parts(folder)
    store.close()
    assert manifest.index_type == "ivfpq" and faiss_index.kind_of(vectors["impression"]) == "ivfpq"
    assert manifest.reports == 1200 and set(manifest.quantizer_fit) == {"findings", "impression", "report"}
    assert _top(folder, query)[0] == exact_hits[0]  # the report itself, found again


def _top(folder: Path, query: np.ndarray) -> list[int]:
    """Top impression ids of a query vector in a saved index."""
    from retriever.index.vectors import search_vectors

    _, vectors, _, store = open_parts(folder)
    store.close()
    return [i for i, _ in search_vectors(vectors["impression"], query, 5)]
