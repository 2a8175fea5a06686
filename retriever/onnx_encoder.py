"""The fast CPU embedding path: a sentence-transformers model exported to ONNX and run by ONNX Runtime.

Why: on CPU, torch's eager BERT forward pass is the indexing bottleneck. The export is traced with plain (eager)
attention and fused by ONNX Runtime's transformer optimizer (attention, skip-layer-norm, bias-GELU: fewer, larger
kernels), and int8 dynamic quantization of the weights (retriever/onnx_quantize.py, checked against the float
export) speeds it up further. Against sentence-transformers' default torch encode on a quiet 2-core AVX2 machine
without VNNI (eval/results/performance.md, README): MiniLM 1.8x at 1 thread, 2.0x at 2; mpnet 1.9x and 2.2x.
Batches are built from length-sorted texts so little compute is spent on padding. The export is made locally from
the offline weights on first use and cached under the models directory by weight fingerprint and EXPORT_VERSION:
nothing is downloaded.

Backends: `onnx` (float32, numerically the torch model) and `onnx-int8` (int8 weights; retrieval quality measured
by eval/perf/embedding.py). Only models made of Transformer -> mean/CLS Pooling (-> Normalize) are supported, which
covers every registry encoder and every model `assistant train` writes; others raise `UnsupportedModel`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.paths import models_dir

FAST_BACKENDS = ("onnx", "onnx-int8")
#: Largest micro-batch: on CPU, bigger batches run slower per text (activations leave the cache). Measured when
#: choosing it (MiniLM int8, 1 thread, findings sections): 86-92 texts/s at batch 1-8, 76 at 16, 45 at 64.
MAX_BATCH = 8
_OPSET = 17
_FILES = {"onnx": "model.onnx", "onnx-int8": "model.int8.onnx"}
#: Part of the cache folder's name: bumped when the export changes, so exports cached by an older version are
#: rebuilt (2: eager-attention trace fused by ONNX Runtime's transformer optimizer, int8 attention; 3: the
#: outlier-channel int8 recipe, which mpnet now takes).
EXPORT_VERSION = 3
FUSION_FILE = "fusion.json"
#: Least cosine between the fused and the unfused float export on the calibration sentences: fusion only
#: reorders float arithmetic, so anything lower means a fusion pattern matched wrongly (the unfused graph is kept).
MIN_FUSED_COSINE = 0.9999


class UnsupportedModel(Exception):
    """The model's module stack cannot be reproduced outside torch; use the torch backend."""


def cache_dir(fingerprint: str) -> Path:
    """Where the exports of one set of weights live (by fingerprint: a retrained model gets a new folder)."""
    return models_dir() / ".onnx" / f"{fingerprint[:24]}-v{EXPORT_VERSION}"


def supported(st_model: Any) -> bool:
    """Whether `st_model` can run on the fast path (its module stack is reproduced exactly)."""
    try:
        _pooling_mode(st_model)
    except UnsupportedModel:
        return False
    return True


def _pooling_mode(st_model: Any) -> str:
    """`mean` or `cls` from the model's Pooling module; anything else cannot be exported faithfully."""
    names = [type(m).__name__ for m in st_model]
    if len(names) < 2 or names[0] != "Transformer" or names[1] != "Pooling" or set(names[2:]) - {"Normalize"}:
        raise UnsupportedModel(f"module stack {names} is not Transformer -> Pooling (-> Normalize)")
    pooling = st_model[1]
    config = pooling.get_config_dict()
    mode = config.get("pooling_mode")  # sentence-transformers >= 6; older configs had one flag per mode
    if mode == "mean" or config.get("pooling_mode_mean_tokens"):
        return "mean"
    if mode == "cls" or config.get("pooling_mode_cls_token"):
        return "cls"
    raise UnsupportedModel(f"pooling {config} is neither mean nor CLS")


def _positional(auto_model: Any, input_names: list[str]) -> Any:
    """The transformer as a module taking the tokenizer's tensors by position (the ONNX graph's input order)."""
    import torch

    class Positional(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = auto_model

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            return self.inner(**dict(zip(input_names, tensors, strict=True))).last_hidden_state

    return Positional().eval()


@contextmanager
def _eager_attention(auto_model: Any) -> Iterator[None]:
    """Trace the plain attention (matmul, scale, mask, softmax) rather than torch's SDPA call, whose traced masking
    (IsNaN/Where) the optimizer's attention fusion does not recognize; the shared torch model is restored after."""
    previous = auto_model.config._attn_implementation
    auto_model.set_attn_implementation("eager")
    try:
        yield
    finally:
        auto_model.set_attn_implementation(previous)


def export(st_model: Any, folder: Path) -> None:
    """Write model.onnx (float32, fused) and fusion.json for `st_model` into `folder` (created; replaced if present).

    Written to a temporary folder and renamed, so a crash never leaves a half-written export in the cache.
    """
    import torch

    pooling = _pooling_mode(st_model)  # refuse before spending time on an export that cannot be used
    sample = st_model.tokenizer(
        ["a short sample", "a longer sample sentence for export"], padding=True, return_tensors="pt"
    )
    input_names = list(sample.keys())
    auto_model = st_model[0].auto_model
    wrapped = _positional(auto_model, input_names)
    axes = {name: {0: "batch", 1: "tokens"} for name in [*input_names, "last_hidden_state"]}
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.tmp-"))
    try:
        traced = tmp / "model.unfused.onnx"
        with torch.no_grad(), warnings.catch_warnings(), _eager_attention(auto_model):
            warnings.simplefilter("ignore")  # tracer warnings about shape-dependent Python branches: expected
            torch.onnx.export(
                wrapped,
                tuple(sample[name] for name in input_names),
                str(traced),
                input_names=input_names,
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=_OPSET,
                dynamo=False,
            )
        record = fuse(traced, tmp / _FILES["onnx"], auto_model.config, st_model, pooling)
        (tmp / FUSION_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        traced.unlink()
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def fuse(traced: Path, fused: Path, config: Any, st_model: Any, pooling: str) -> dict[str, Any]:
    """Write `traced` with ONNX Runtime's transformer fusions applied to `fused`, checked against the unfused graph.

    Why offline and not only ONNX Runtime's own session-time fusions: those do not fuse the attention of this export,
    the optimizer's do (com.microsoft Attention, which int8 quantization then turns into QAttention). opt_level 0:
    only the optimizer's fusions; the session still applies its hardware-specific ones at load. Returns what was
    fused and the check's cosine; a graph that fails the check is written unfused.
    """
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    from retriever.onnx_quantize import CALIBRATION

    model = optimize_model(
        str(traced),
        model_type="bert",
        num_heads=int(config.num_attention_heads),
        hidden_size=int(config.hidden_size),
        optimization_options=FusionOptions("bert"),
        opt_level=0,
    )
    model.save_model_to_file(str(fused))
    counts = {op: n for op, n in model.get_fused_operator_statistics().items() if n}
    reference, candidate = (
        OnnxRunner.open(path, st_model, pooling, threads=None).encode(CALIBRATION) for path in (traced, fused)
    )
    cosine = float(np.sum(reference * candidate, axis=1).min())
    if cosine < MIN_FUSED_COSINE:
        shutil.copyfile(traced, fused)
        counts = {}
    return {"fused_operators": counts, "min_cosine_to_unfused": round(cosine, 6)}


def quantize(st_model: Any, folder: Path) -> None:
    """Write model.int8.onnx beside model.onnx, with a recipe checked against it (retriever/onnx_quantize.py)."""
    from retriever.onnx_quantize import quantize as quantize_checked

    pooling = _pooling_mode(st_model)
    max_length = int(st_model.max_seq_length)

    def embed(path: Path, texts: list[str]) -> np.ndarray:
        return OnnxRunner.open(path, st_model, pooling, threads=None).encode(texts)

    def tokenize(texts: list[str]) -> list[dict[str, np.ndarray]]:
        """One unpadded feed per text (the export's inputs are the tokenizer's outputs, in its order)."""
        return [
            {
                name: np.array([ids], dtype=np.int64)
                for name, ids in st_model.tokenizer(text, truncation=True, max_length=max_length).items()
            }
            for text in texts
        ]

    tmp = folder / f".{_FILES['onnx-int8']}.tmp"
    try:
        quantize_checked(folder / _FILES["onnx"], tmp, embed, tokenize)
    except ValueError as exc:
        raise UnsupportedModel(str(exc)) from exc
    os.replace(tmp, folder / _FILES["onnx-int8"])


@dataclass
class OnnxRunner:
    """Encode texts with an exported model: length-sorted batches, pooling and L2 normalization in numpy."""

    session: Any
    tokenizer: Any
    input_names: list[str]
    pooling: str
    max_seq_length: int

    @classmethod
    def load(cls, st_model: Any, fingerprint: str, backend: str, *, threads: int | None = None) -> OnnxRunner:
        """Open the cached ONNX model of `st_model` for `backend`, exporting (and quantizing) it on first use."""
        if backend not in FAST_BACKENDS:
            raise ValueError(f"unknown fast backend {backend!r}; choose one of {', '.join(FAST_BACKENDS)}")
        pooling = _pooling_mode(st_model)
        folder = cache_dir(fingerprint)
        if not (folder / _FILES["onnx"]).is_file():
            export(st_model, folder)
            for stale in folder.parent.glob(f"{fingerprint[:24]}*"):  # exports of older EXPORT_VERSIONs
                if stale != folder:
                    shutil.rmtree(stale, ignore_errors=True)
        if backend == "onnx-int8" and not (folder / _FILES[backend]).is_file():
            quantize(st_model, folder)
        return cls.open(folder / _FILES[backend], st_model, pooling, threads=threads)

    @classmethod
    def open(cls, path: Path, st_model: Any, pooling: str, *, threads: int | None) -> OnnxRunner:
        """A runner over one .onnx file, with the tokenizer and sequence limit of `st_model`."""
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads or _torch_threads()
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        return cls(session, st_model.tokenizer, names, pooling, int(st_model.max_seq_length))

    def encode(self, texts: list[str], batch_size: int = MAX_BATCH, *, progress: bool = False) -> np.ndarray:
        """(n, dims) float32 unit vectors, in the order of `texts`; batches hold at most MAX_BATCH texts."""
        from tqdm import tqdm

        batch_size = max(1, min(batch_size, MAX_BATCH))
        encoded = self.tokenizer(texts, truncation=True, max_length=self.max_seq_length, padding=False)
        lengths = np.array([len(ids) for ids in encoded["input_ids"]])
        order = np.argsort(-lengths, kind="stable")  # longest first: padding only within similar lengths
        out: np.ndarray | None = None
        for start in tqdm(range(0, len(order), batch_size), desc="Batches", disable=not progress):
            rows = order[start : start + batch_size]
            width = int(lengths[rows].max())
            feed = {}
            for name in self.input_names:
                array = np.zeros((len(rows), width), dtype=np.int64)
                for i, row in enumerate(rows):
                    values = encoded[name][row]
                    array[i, : len(values)] = values
                feed[name] = array
            hidden = self.session.run(None, feed)[0]
            pooled = self._pool(hidden, feed["attention_mask"])
            if out is None:
                out = np.empty((len(texts), pooled.shape[1]), dtype=np.float32)
            out[rows] = pooled
        assert out is not None
        return out

    def _pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def _torch_threads() -> int:
    """Follow torch's thread setting, so one knob (`torch.set_num_threads`, OMP_NUM_THREADS) governs both paths."""
    import torch

    return torch.get_num_threads()
