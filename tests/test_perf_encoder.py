"""The fast embedding path (ONNX Runtime, int8) against sentence-transformers, and how indexes record it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from retriever.index import IndexLoadError, ReportIndex
from retriever.report import Report

TEXTS = [
    "Large left pleural effusion with compressive atelectasis of the left lower lobe.",
    "No acute cardiopulmonary abnormality.",
    "Hypodense lesion in segment IV along the falciform ligament, likely focal fatty infiltration. " * 6,
    "4 mm nodule.",
]
REPORTS = [Report(f"r:{i}", text, f"impression {i}", source="t") for i, text in enumerate(TEXTS)]


@pytest.fixture(scope="module")
def fast_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Exports are cached under the models directory: keep the test's out of the user's data folder."""
    return tmp_path_factory.mktemp("radsearch-home")


@pytest.fixture()
def fast(minilm, fast_home: Path, monkeypatch: pytest.MonkeyPatch):
    """A loader of MiniLM run by a fast backend, sharing the already-loaded torch model."""
    from retriever.encoder import Encoder

    monkeypatch.setenv("RADSEARCH_HOME", str(fast_home))

    def make(backend: str) -> Encoder:
        return Encoder(minilm.name, minilm.location, minilm.model, backend, threads=1)

    return make


# int8 weights cost about 0.01 of cosine (0.99 on average over the shared corpus); whether that changes retrieval
# is measured by eval/perf/embedding.py (match@5), not here.
@pytest.mark.parametrize(("backend", "floor"), [("onnx", 0.9999), ("onnx-int8", 0.98)])
def test_fast_backends_match_torch(minilm, fast, backend: str, floor: float) -> None:
    reference = minilm.encode(TEXTS)
    vectors = fast(backend).encode(TEXTS, batch_size=3)  # batches of unequal lengths, order restored
    assert vectors.shape == reference.shape and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.sum(vectors * reference, axis=1).min() > floor
    assert fast(backend).encode([]).shape == (0, minilm.dims)


def test_export_is_cached_by_fingerprint(minilm, fast, fast_home: Path) -> None:
    from retriever.onnx_encoder import cache_dir

    fast("onnx-int8").encode(TEXTS[:1])
    folder = cache_dir(minilm.fingerprint)
    assert folder.is_relative_to(fast_home) and (folder / "model.int8.onnx").is_file()
    stamp = (folder / "model.onnx").stat().st_mtime_ns
    fast("onnx").encode(TEXTS[:1])
    assert (folder / "model.onnx").stat().st_mtime_ns == stamp  # reused, not exported again


def test_unsupported_module_stack_is_refused() -> None:
    from retriever.onnx_encoder import UnsupportedModel, _pooling_mode

    class Dense:
        pass

    with pytest.raises(UnsupportedModel, match="Transformer -> Pooling"):
        _pooling_mode([Dense()])


def test_unknown_backend_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from retriever.encoder import index_backend, load_encoder

    with pytest.raises(ValueError, match="unknown encoder backend"):
        load_encoder("minilm", backend="tpu")
    monkeypatch.setenv("RADSEARCH_ENCODER_BACKEND", "gpu")
    with pytest.raises(ValueError, match="RADSEARCH_ENCODER_BACKEND"):
        index_backend()
    monkeypatch.delenv("RADSEARCH_ENCODER_BACKEND")
    assert index_backend() == "onnx-int8"


def test_index_records_backend_and_refuses_a_mismatch(minilm, fast, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    ReportIndex.build(REPORTS, fast("onnx-int8"), ("findings",)).save(folder)
    assert json.loads((folder / "manifest.json").read_text())["encoder"]["backend"] == "onnx-int8"
    with pytest.raises(IndexLoadError, match="'onnx-int8' encoder backend"):
        ReportIndex.load(folder, minilm)  # a torch encoder would not reproduce the index's vectors
    loaded = ReportIndex.load(folder, fast("onnx-int8"))
    assert loaded.search(TEXTS[0], field="findings", k=1)[0].report.id == "r:0"


def test_index_without_backend_in_manifest_is_a_torch_index(minilm, tmp_path: Path) -> None:
    folder = tmp_path / "old"
    ReportIndex.build(REPORTS, minilm, ("findings",)).save(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["encoder"]["backend"]  # as written before backends existed
    (folder / "manifest.json").write_text(json.dumps(manifest))
    index = ReportIndex.load(folder)
    assert index.manifest.encoder.backend == "torch"
    assert ReportIndex.load(folder, minilm).search(TEXTS[1], field="findings", k=1)[0].report.id == "r:1"


def test_quantization_falls_back_to_a_recipe_that_keeps_the_embeddings(minilm, fast, tmp_path: Path) -> None:
    """A model whose int8 version drifts gets more layers in float; one that always drifts is refused."""
    from retriever.onnx_encoder import cache_dir
    from retriever.onnx_quantize import CALIBRATION, MIN_COSINE, quantize, recipes

    fast("onnx").encode(TEXTS[:1])
    float_path = cache_dir(minilm.fingerprint) / "model.onnx"
    names = [name for name, _ in recipes(float_path)]
    assert names == ["all-matmul-int8", "down-projection-float", "feed-forward-float"]
    assert len(recipes(float_path)[1][1]) == 6  # MiniLM-L6: one down-projection per layer
    reference = np.eye(len(CALIBRATION), dtype=np.float32)
    calls: list[Path] = []

    def drifting_until(good_call: int):
        def embed(path: Path, texts: list[str]) -> np.ndarray:
            calls.append(path)
            if path == float_path or len(calls) - 1 >= good_call:
                return reference[: len(texts)]
            return np.roll(reference[: len(texts)], 1, axis=1)  # orthogonal: cosine 0

        return embed

    record = quantize(float_path, tmp_path / "model.int8.onnx", drifting_until(3))
    assert record["recipe"] == "feed-forward-float" and record["calibration_cosine"] >= MIN_COSINE
    assert json.loads((tmp_path / "quantization.json").read_text())["recipe"] == "feed-forward-float"
    calls.clear()
    with pytest.raises(ValueError, match="no int8 recipe"):
        quantize(float_path, tmp_path / "bad.int8.onnx", drifting_until(99))
    assert not (tmp_path / "bad.int8.onnx").exists()
