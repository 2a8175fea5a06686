"""The fast embedding path (ONNX Runtime, int8) against sentence-transformers, and how indexes record it."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from retriever.encoders.onnx.encoder import EXPORT_VERSION
from retriever.index.errors import IndexLoadError
from retriever.index.report_index import ReportIndex
from retriever.reports.record import Report

TEXTS = [
    "Large left pleural effusion with compressive atelectasis of the left lower lobe.",
    "No acute cardiopulmonary abnormality.",
    "Hypodense lesion in segment IV along the falciform ligament, likely focal fatty infiltration. " * 6,
    "4 mm nodule.",
]
REPORTS = [Report(f"r:{i}", text, f"impression {i}", source="t") for i, text in enumerate(TEXTS)]


@pytest.fixture(scope="module")
def fast_home(minilm, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Exports are cached under the models directory: keep the test's out of the user's data folder. It starts
    with an export cached by an older EXPORT_VERSION (no version in the folder name), which must be replaced."""
    home = tmp_path_factory.mktemp("radsearch-home")
    stale = home / "models" / ".onnx" / minilm.fingerprint[:24]
    stale.mkdir(parents=True)
    (stale / "model.onnx").write_bytes(b"an unfused graph")
    return home


@pytest.fixture()
def fast(minilm, fast_home: Path, monkeypatch: pytest.MonkeyPatch):
    """A loader of MiniLM run by a fast backend, sharing the already-loaded torch model."""
    from retriever.encoders.encoder import Encoder, model_backend

    monkeypatch.setenv("RADSEARCH_HOME", str(fast_home))

    def make(backend: str) -> Encoder:
        return Encoder(minilm.name, minilm.location, model_backend(minilm.model, minilm.location, backend, threads=1))

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


def test_export_is_cached_by_fingerprint_and_version(minilm, fast, fast_home: Path) -> None:
    from retriever.encoders.onnx.encoder import EXPORT_VERSION, cache_dir

    fast("onnx-int8").encode(TEXTS[:1])
    folder = cache_dir(minilm.fingerprint)
    assert folder.is_relative_to(fast_home) and (folder / "model.int8.onnx").is_file()
    assert folder.name.endswith(f"-v{EXPORT_VERSION}")
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # the older version's export is gone
    stamp = (folder / "model.onnx").stat().st_mtime_ns
    fast("onnx").encode(TEXTS[:1])
    assert (folder / "model.onnx").stat().st_mtime_ns == stamp  # reused, not exported again


def _op_counts(path: Path) -> Counter[str]:
    import onnx

    return Counter(node.op_type for node in onnx.load(str(path), load_external_data=False).graph.node)


def test_export_is_fused_and_leaves_the_torch_model_as_it_was(minilm, fast, tmp_path: Path) -> None:
    """The speed of the fast path comes from these fused nodes; the torch model shares its module with the export."""
    import onnxruntime as ort

    from retriever.encoders.onnx.encoder import cache_dir
    from retriever.encoders.onnx.export import FUSION_FILE, MIN_FUSED_COSINE
    from retriever.encoders.onnx.runner import session_for

    attention = minilm.model[0].auto_model.config._attn_implementation
    fast("onnx-int8").encode(TEXTS[:1])
    folder = cache_dir(minilm.fingerprint)
    layers = 6  # MiniLM-L6
    float_ops = _op_counts(folder / "model.onnx")
    assert float_ops["Attention"] == layers and float_ops["LayerNormalization"] == 2 * layers
    assert float_ops["BiasGelu"] == layers and float_ops["Softmax"] == 0  # no unfused attention left
    int8_ops = _op_counts(folder / "model.int8.onnx")
    assert int8_ops["QAttention"] == layers and int8_ops["Attention"] == 0
    # Residual add + layer norm stay two nodes, in the file and in the session (SkipLayerNormalization is slower).
    assert float_ops["SkipLayerNormalization"] == int8_ops["SkipLayerNormalization"] == 0
    saving = ort.SessionOptions()
    saving.optimized_model_filepath = str(tmp_path / "session.onnx")  # the graph as the product's session runs it
    session_for(folder / "model.int8.onnx", 1, saving)
    session_ops = _op_counts(tmp_path / "session.onnx")
    assert session_ops["LayerNormalization"] == 2 * layers and session_ops["SkipLayerNormalization"] == 0
    record = json.loads((folder / FUSION_FILE).read_text())
    assert record["fused_operators"]["Attention"] == layers and record["min_cosine_to_unfused"] >= MIN_FUSED_COSINE
    assert minilm.model[0].auto_model.config._attn_implementation == attention


def test_a_fusion_that_changes_the_embeddings_is_not_used(minilm, tmp_path: Path, monkeypatch) -> None:
    from retriever.encoders.onnx import export as onnx_export

    monkeypatch.setattr(onnx_export, "MIN_FUSED_COSINE", 1.5)  # no fused graph can pass: the check must refuse it
    onnx_export.export(minilm.model, tmp_path / "export")
    assert _op_counts(tmp_path / "export" / "model.onnx")["Attention"] == 0
    assert json.loads((tmp_path / "export" / onnx_export.FUSION_FILE).read_text())["fused_operators"] == {}


def test_unsupported_module_stack_is_refused() -> None:
    from retriever.encoders.onnx.spec import UnsupportedModel, pooling_mode

    class Dense:
        pass

    with pytest.raises(UnsupportedModel, match="Transformer -> Pooling"):
        pooling_mode([Dense()])


def test_unknown_backend_is_a_clear_error() -> None:
    from eval.common.shared_data import index_backend
    from retriever.encoders.encoder import load_encoder

    with pytest.raises(ValueError, match="unknown encoder backend"):
        load_encoder("minilm", backend="tpu")
    with pytest.raises(ValueError, match="RADSEARCH_ENCODER_BACKEND"):
        index_backend({"RADSEARCH_ENCODER_BACKEND": "gpu"})
    assert index_backend({}) == "onnx-int8" and index_backend({"RADSEARCH_ENCODER_BACKEND": "torch"}) == "torch"


def test_the_encoder_reads_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backend and device come from the caller (the settings, read once by each command): a variable set below
    the entry point changes nothing."""
    import inspect

    from retriever.encoders import encoder

    assert "os.environ" not in inspect.getsource(encoder) and "getenv" not in inspect.getsource(encoder)
    monkeypatch.setenv("RADSEARCH_ENCODER_DEVICE", "cuda")
    assert encoder.load_encoder("minilm").model.device.type == "cpu"


def test_index_records_backend_and_refuses_a_mismatch(minilm, fast, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    ReportIndex.build(REPORTS, fast("onnx-int8"), ("findings",)).save(folder)
    assert json.loads((folder / "manifest.json").read_text())["encoder"]["backend"] == "onnx-int8"
    with pytest.raises(IndexLoadError, match="'onnx-int8' encoder backend"):
        ReportIndex.load(folder, minilm)  # a torch encoder would not reproduce the index's vectors
    loaded = ReportIndex.load(folder, fast("onnx-int8"))
    assert loaded.search(TEXTS[0], field="findings", k=1)[0].report.id == "r:0"
    # An index built by an older export recipe is refused too: its vectors differ slightly from today's queries.
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["encoder"]["backend_version"] == EXPORT_VERSION
    manifest["encoder"]["backend_version"] = EXPORT_VERSION - 1
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexLoadError, match="rebuild the index"):
        ReportIndex.load(folder, fast("onnx-int8"))


def test_cached_export_opens_without_sentence_transformers(minilm, fast, fast_home: Path) -> None:
    """Once exported, a fast backend loads from the cache alone and encodes exactly as the model-backed path."""
    from retriever.encoders.encoder import load_encoder

    full = fast("onnx-int8")
    reference = full.encode(TEXTS)
    light = load_encoder("minilm", backend="onnx-int8", threads=1)
    assert light.model is None and light.engine.runner is not None
    assert (light.fingerprint, light.dims, light.max_seq_length) == (full.fingerprint, full.dims, full.max_seq_length)
    assert np.array_equal(light.encode(TEXTS), reference)
    assert [light.count_tokens(t) for t in TEXTS] == [minilm.count_tokens(t) for t in TEXTS]
    assert load_encoder("minilm", backend="onnx-int8", max_seq_length=16).max_seq_length == 16


def test_cached_search_imports_no_torch(minilm, fast, fast_home: Path, tmp_path: Path) -> None:
    """The point of the torch-free path: loading an index and searching it never imports torch or transformers
    (they take ~9 s of `assistant search`'s start-up). Run in a fresh interpreter, which has imported nothing."""
    import subprocess
    import sys

    folder = tmp_path / "index"
    ReportIndex.build(REPORTS, fast("onnx-int8"), ("findings",)).save(folder)
    script = (
        "import sys\n"
        "from retriever.index.report_index import ReportIndex\n"
        f"hits = ReportIndex.load({str(folder)!r}).search({TEXTS[0]!r}, field='findings', k=1, method='dense')\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules)\n"
        "print(hits[0].report.id, heavy)\n"
    )
    env = {**os.environ, "RADSEARCH_HOME": str(fast_home)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "r:0 []"


def test_export_cached_before_runner_specs_is_completed(minilm, fast, fast_home: Path) -> None:
    """Exports cached by an earlier release have no runner spec: they load through the model once, which adds it."""
    from retriever.encoders.encoder import load_encoder
    from retriever.encoders.onnx.encoder import cache_dir
    from retriever.encoders.onnx.spec import SPEC_FILE, TOKENIZER_FILE

    fast("onnx-int8").encode(TEXTS[:1])
    folder = cache_dir(minilm.fingerprint)
    for name in (SPEC_FILE, TOKENIZER_FILE):
        (folder / name).unlink()
    encoder = load_encoder("minilm", backend="onnx-int8", threads=1)
    assert encoder.model is not None and encoder.engine.runner is None
    encoder.encode(TEXTS[:1])
    assert (folder / SPEC_FILE).is_file() and (folder / TOKENIZER_FILE).is_file()
    assert load_encoder("minilm", backend="onnx-int8", threads=1).model is None
    # An unreadable spec is treated like a missing one: the model's path runs and writes it anew.
    for broken in ({SPEC_FILE: '{"pooling": "mean"}'}, {TOKENIZER_FILE: '{"not": "a tokenizer"}'}):
        for name, text in broken.items():
            (folder / name).write_text(text)
        encoder = load_encoder("minilm", backend="onnx-int8", threads=1)
        assert encoder.model is not None
        assert np.array_equal(encoder.encode(TEXTS), fast("onnx-int8").encode(TEXTS))
        assert load_encoder("minilm", backend="onnx-int8", threads=1).model is None


def test_runner_spec_tokenizes_like_the_model(minilm) -> None:
    """The fast path's Rust tokenizer must make the very ids the model's tokenizer makes, truncation included."""
    from retriever.encoders.onnx.spec import RunnerSpec

    texts = [*TEXTS, "", "Ünïcode — “quotes”, 5×3 cm; T2/FLAIR", "tab\tand\nnewline", "word " * 400]
    spec = RunnerSpec.from_model(minilm.model)
    expected = minilm.model.tokenizer(texts, truncation=True, max_length=minilm.max_seq_length, padding=False)
    feeds = spec.feeds(texts)
    for name, values in expected.items():
        assert [feed[name] for feed in feeds] == values
    assert len(feeds[-1]["input_ids"]) == minilm.max_seq_length
    assert spec.count_tokens(texts[-1]) == minilm.count_tokens(texts[-1]) > minilm.max_seq_length


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
    from retriever.encoders.onnx.encoder import cache_dir
    from retriever.encoders.onnx.quantize import CALIBRATION, MIN_COSINE, quantize, recipes

    fast("onnx").encode(TEXTS[:1])
    float_path = cache_dir(minilm.fingerprint) / "model.onnx"
    names = [recipe.name for recipe in recipes(float_path)]
    one_up = [f"down-projection-float+up-projection-{layer}-float" for layer in range(6)]  # MiniLM-L6
    assert names == [
        "all-matmul-int8",
        "outlier-channels-float",
        "down-projection-float",
        *one_up,
        "feed-forward-float",
    ]
    assert recipes(float_path)[1].split_outliers and not recipes(float_path)[1].keep_float
    assert len(recipes(float_path)[2].keep_float) == 6  # one down-projection per layer
    assert len(recipes(float_path)[3].keep_float) == 7 and len(recipes(float_path)[-1].keep_float) == 12
    reference = np.eye(len(CALIBRATION), dtype=np.float32)
    calls: list[Path] = []

    def drifting_until(good_call: int):
        def embed(path: Path, texts: list[str]) -> np.ndarray:
            calls.append(path)
            if path == float_path or len(calls) - 1 >= good_call:
                return reference[: len(texts)]
            return np.roll(reference[: len(texts)], 1, axis=1)  # orthogonal: cosine 0

        return embed

    tokenize = _tokenizer(minilm)
    record = quantize(float_path, tmp_path / "model.int8.onnx", drifting_until(5), tokenize)
    assert record["recipe"] == "down-projection-float+up-projection-1-float"
    assert record["calibration_cosine"] >= MIN_COSINE
    assert json.loads((tmp_path / "quantization.json").read_text())["recipe"] == record["recipe"]
    calls.clear()
    with pytest.raises(ValueError, match="no int8 recipe"):
        quantize(float_path, tmp_path / "bad.int8.onnx", drifting_until(99), tokenize)
    assert not (tmp_path / "bad.int8.onnx").exists()
    assert not list(tmp_path.glob(".*outliers.onnx"))  # the outlier recipe's intermediate graph is removed


def _tokenizer(encoder):
    from retriever.encoders.onnx.spec import RunnerSpec

    return RunnerSpec.from_model(encoder.model).feeds


def test_outlier_channel_split_is_the_same_model_and_takes_the_largest_channels(minilm, fast, tmp_path: Path) -> None:
    """The rewritten graph computes the same embeddings in float; the float side gets the channels with the largest
    magnitudes; quantized, it stays close to the float model."""
    from retriever.encoders.onnx.encoder import cache_dir
    from retriever.encoders.onnx.quantize import (
        CALIBRATION,
        OUTLIER_FRACTION,
        _weight_matmuls,
        channel_peaks,
        quantize,
        split_outlier_channels,
    )
    from retriever.encoders.onnx.runner import OnnxRunner
    from retriever.encoders.onnx.spec import RunnerSpec

    fast("onnx").encode(TEXTS[:1])
    float_path = cache_dir(minilm.fingerprint) / "model.onnx"
    tokenize = _tokenizer(minilm)
    peaks = channel_peaks(float_path, tokenize(CALIBRATION))
    import onnx

    weights = _weight_matmuls(onnx.load(str(float_path)).graph)
    assert len(weights) == 18 and len(peaks) == 18  # MiniLM-L6, attention fused: attention output, up, down per layer
    split_path = tmp_path / "split.onnx"
    added = split_outlier_channels(float_path, split_path, peaks)
    assert len(added) == len(weights)

    graph = onnx.load(str(split_path)).graph
    chosen = {
        init.name: onnx.numpy_helper.to_array(init) for init in graph.initializer if init.name.endswith("/channels")
    }
    for name, channels in chosen.items():
        tensor_peaks = peaks[name.removesuffix("/outlier_channels_float/channels")]
        assert len(channels) == int(np.ceil(len(tensor_peaks) * OUTLIER_FRACTION))
        assert tensor_peaks[channels].min() >= np.delete(tensor_peaks, channels).max()

    def embed(path: Path, texts: list[str]) -> np.ndarray:
        return OnnxRunner.open(path, RunnerSpec.from_model(minilm.model), threads=1).encode(texts)

    reference = embed(float_path, TEXTS)
    assert np.sum(embed(split_path, TEXTS) * reference, axis=1).min() > 0.9999

    tried: list[str] = []

    def tracking(path: Path, texts: list[str]) -> np.ndarray:
        """The real models, except that the plain all-int8 recipe is made to fail, so the split one runs."""
        if path != float_path:
            tried.append("all" if not tried else "split")
            if tried[-1] == "all":
                return np.roll(embed(float_path, texts), 1, axis=0)  # each text gets another's vector
        return embed(path, texts)

    record = quantize(float_path, tmp_path / "model.int8.onnx", tracking, tokenize)
    assert record["recipe"] == "outlier-channels-float" and record["calibration_cosine"] >= 0.99
    int8 = embed(tmp_path / "model.int8.onnx", TEXTS)
    assert np.sum(int8 * reference, axis=1).min() > 0.98
