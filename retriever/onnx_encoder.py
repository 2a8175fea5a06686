"""The fast CPU embedding path: a sentence-transformers model exported to ONNX and run by ONNX Runtime.

Why: on CPU, torch's eager BERT forward pass is the indexing bottleneck. The export is traced with plain (eager)
attention and fused by ONNX Runtime's transformer optimizer (attention, bias-GELU: fewer, larger kernels; not the
residual add + layer norm, see UNFUSED), and int8 dynamic quantization of the weights (retriever/onnx_quantize.py,
checked against the float export) speeds it up further. Measured against sentence-transformers' default torch
encode on a quiet 2-core AVX2 machine without VNNI: eval/results/performance.md.
Batches are built from length-sorted texts so little compute is spent on padding. The export is made locally from
the offline weights on first use and cached under the models directory by weight fingerprint and EXPORT_VERSION:
nothing is downloaded. Beside the graph the cache keeps what running it needs (the model's tokenizer, pooling,
sequence limit, dimensions: RunnerSpec), so a cached export runs with ONNX Runtime and the `tokenizers` library
alone: `assistant search` then never imports sentence-transformers, transformers or torch (6.5 of its 7.4 s cold).

Backends: `onnx` (float32, numerically the torch model) and `onnx-int8` (int8 weights; retrieval quality measured
by eval/perf/embedding.py). Only models made of Transformer -> mean/CLS Pooling (-> Normalize) are supported, which
covers every registry encoder and every model `assistant train` writes; others raise `UnsupportedModel`.
"""

from __future__ import annotations

import json
import logging
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

log = logging.getLogger(__name__)

FAST_BACKENDS = ("onnx", "onnx-int8")
#: Largest micro-batch: on CPU, bigger batches run slower per text (activations leave the cache). Measured when
#: choosing it (MiniLM int8, 1 thread, findings sections): 86-92 texts/s at batch 1-8, 76 at 16, 45 at 64.
MAX_BATCH = 8
_OPSET = 17
_FILES = {"onnx": "model.onnx", "onnx-int8": "model.int8.onnx"}
#: Part of the cache folder's name: bumped when the export changes, so exports cached by an older version are
#: rebuilt (2: eager-attention trace fused by ONNX Runtime's transformer optimizer, int8 attention; 3: the
#: outlier-channel int8 recipe, which mpnet now takes; 4: residual add + layer norm left unfused, UNFUSED).
EXPORT_VERSION = 4
FUSION_FILE = "fusion.json"
#: Session-time fusions left out. SkipLayerNormalization (residual add + layer norm in one node) runs several times
#: slower per element than the Add and LayerNormalization it replaces on this AVX2 CPU, ~12% of MiniLM's int8 forward
#: pass; so neither the optimizer above nor the session makes it (measured by eval/perf/fusions.py).
UNFUSED = ("SkipLayerNormFusion",)
SPEC_FILE = "runner.json"
TOKENIZER_FILE = "tokenizer.json"
#: The export's input names -> the `tokenizers.Encoding` attribute that feeds them.
_ENCODING_FIELDS = {"input_ids": "ids", "attention_mask": "attention_mask", "token_type_ids": "type_ids"}
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


@dataclass(frozen=True)
class RunnerSpec:
    """What running an export needs besides the graph, saved beside it so no sentence-transformers model is needed.

    The tokenizer is the model's own Rust tokenizer (`tokenizers.Tokenizer`, what transformers' fast tokenizers
    wrap), so token ids are the ones the torch path makes; two configured copies, because truncation is tokenizer
    state and a shared one could be switched by a concurrent `count_tokens` call.
    """

    truncating: Any
    counting: Any
    pooling: str
    max_seq_length: int
    dims: int

    @classmethod
    def build(cls, tokenizer_json: str, pooling: str, max_seq_length: int, dims: int) -> RunnerSpec:
        from tokenizers import Tokenizer

        truncating, counting = Tokenizer.from_str(tokenizer_json), Tokenizer.from_str(tokenizer_json)
        truncating.enable_truncation(max_length=max_seq_length)
        counting.no_truncation()
        for tokenizer in (truncating, counting):
            tokenizer.no_padding()
        return cls(truncating, counting, pooling, max_seq_length, dims)

    @classmethod
    def from_model(cls, st_model: Any) -> RunnerSpec:
        """The spec of a loaded sentence-transformers model (UnsupportedModel if it cannot run outside torch)."""
        pooling = _pooling_mode(st_model)
        backend = getattr(st_model.tokenizer, "backend_tokenizer", None)
        if backend is None:
            raise UnsupportedModel(f"tokenizer {type(st_model.tokenizer).__name__} has no fast (Rust) tokenizer")
        dims = int(st_model.get_embedding_dimension())
        return cls.build(backend.to_str(), pooling, int(st_model.max_seq_length), dims)

    @classmethod
    def read(cls, folder: Path, max_seq_length: int | None = None) -> RunnerSpec | None:
        """The spec saved in an export folder (with another sequence limit if given), or None if absent or unreadable
        (the caller then takes the path through the model, which writes it anew)."""
        try:
            fields = json.loads((folder / SPEC_FILE).read_text(encoding="utf-8"))
            tokenizer_json = (folder / TOKENIZER_FILE).read_text(encoding="utf-8")
            limit = max_seq_length or int(fields["max_seq_length"])
            return cls.build(tokenizer_json, fields["pooling"], limit, int(fields["dims"]))
        except FileNotFoundError:  # not exported yet, or exported before specs were saved
            return None
        except Exception as exc:  # unreadable: bad JSON, missing keys, a tokenizer.json `tokenizers` cannot parse
            log.warning("cannot read the runner spec in %s (%s): the model will rewrite it", folder, exc)
            return None

    def save(self, folder: Path) -> None:
        """Write the spec into `folder` (each file through a temporary name: a crash leaves none half-written)."""
        fields = {"pooling": self.pooling, "max_seq_length": self.max_seq_length, "dims": self.dims}
        for name, text in ((TOKENIZER_FILE, self.counting.to_str()), (SPEC_FILE, json.dumps(fields, indent=2) + "\n")):
            tmp = folder / f".{name}.tmp"
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, folder / name)

    def feeds(self, texts: list[str]) -> list[dict[str, list[int]]]:
        """One unpadded input per text, truncated to max_seq_length: input name -> token values."""
        return [
            {name: getattr(encoding, attribute) for name, attribute in _ENCODING_FIELDS.items()}
            for encoding in self.truncating.encode_batch(texts)
        ]

    def count_tokens(self, text: str) -> int:
        """Tokens the model makes of `text` before truncation (special tokens included)."""
        return len(self.counting.encode(text).ids)


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
    """Write model.onnx (float32, fused), fusion.json and the RunnerSpec of `st_model` into `folder` (created;
    replaced if present).

    Written to a temporary folder and renamed, so a crash never leaves a half-written export in the cache.
    """
    import torch

    spec = RunnerSpec.from_model(st_model)  # refuse before spending time on an export that cannot be used
    sample = st_model.tokenizer(
        ["a short sample", "a longer sample sentence for export"], padding=True, return_tensors="pt"
    )
    input_names = list(sample.keys())
    if unknown := set(input_names) - set(_ENCODING_FIELDS):
        raise UnsupportedModel(f"tokenizer inputs {sorted(unknown)} are not made by the fast path")
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
        record = fuse(traced, tmp / _FILES["onnx"], auto_model.config, spec)
        (tmp / FUSION_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        spec.save(tmp)
        traced.unlink()
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def fuse(traced: Path, fused: Path, config: Any, spec: RunnerSpec) -> dict[str, Any]:
    """Write `traced` with ONNX Runtime's transformer fusions applied to `fused`, checked against the unfused graph.

    Why offline and not only ONNX Runtime's own session-time fusions: those do not fuse the attention of this export,
    the optimizer's do (com.microsoft Attention, which int8 quantization then turns into QAttention). opt_level 0:
    only the optimizer's fusions; the session still applies its hardware-specific ones at load. Returns what was
    fused and the check's cosine; a graph that fails the check is written unfused.
    """
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    from retriever.onnx_quantize import CALIBRATION

    options = FusionOptions("bert")
    options.enable_skip_layer_norm = False  # see UNFUSED
    model = optimize_model(
        str(traced),
        model_type="bert",
        num_heads=int(config.num_attention_heads),
        hidden_size=int(config.hidden_size),
        optimization_options=options,
        opt_level=0,
    )
    model.save_model_to_file(str(fused))
    counts = {op: n for op, n in model.get_fused_operator_statistics().items() if n}
    reference, candidate = (OnnxRunner.open(path, spec, threads=None).encode(CALIBRATION) for path in (traced, fused))
    cosine = float(np.sum(reference * candidate, axis=1).min())
    if cosine < MIN_FUSED_COSINE:
        shutil.copyfile(traced, fused)
        counts = {}
    return {"fused_operators": counts, "min_cosine_to_unfused": round(cosine, 6)}


def quantize(spec: RunnerSpec, folder: Path) -> None:
    """Write model.int8.onnx beside model.onnx, with a recipe checked against it (retriever/onnx_quantize.py)."""
    from retriever.onnx_quantize import quantize as quantize_checked

    def embed(path: Path, texts: list[str]) -> np.ndarray:
        return OnnxRunner.open(path, spec, threads=None).encode(texts)

    tmp = folder / f".{_FILES['onnx-int8']}.tmp"
    try:
        quantize_checked(folder / _FILES["onnx"], tmp, embed, spec.feeds)
    except ValueError as exc:
        raise UnsupportedModel(str(exc)) from exc
    os.replace(tmp, folder / _FILES["onnx-int8"])


@dataclass
class OnnxRunner:
    """Encode texts with an exported model: length-sorted batches, pooling and L2 normalization in numpy."""

    session: Any
    spec: RunnerSpec
    input_names: list[str]
    path: Path  # the .onnx file the session runs

    @classmethod
    def load(cls, st_model: Any, fingerprint: str, backend: str, *, threads: int | None = None) -> OnnxRunner:
        """Open the cached ONNX model of `st_model` for `backend`, exporting (and quantizing) it on first use."""
        _check_backend(backend)
        folder = cache_dir(fingerprint)
        if not (folder / _FILES["onnx"]).is_file():
            export(st_model, folder)
            for stale in folder.parent.glob(f"{fingerprint[:24]}*"):  # exports of older EXPORT_VERSIONs
                if stale != folder:
                    shutil.rmtree(stale, ignore_errors=True)
        spec = RunnerSpec.read(folder, int(st_model.max_seq_length))
        if spec is None:  # exported before specs were saved beside the graph
            spec = RunnerSpec.from_model(st_model)
            spec.save(folder)
        if backend == "onnx-int8" and not (folder / _FILES[backend]).is_file():
            quantize(spec, folder)
        return cls.open(folder / _FILES[backend], spec, threads=threads)

    @classmethod
    def cached(
        cls, fingerprint: str, backend: str, *, max_seq_length: int | None = None, threads: int | None = None
    ) -> OnnxRunner | None:
        """Open the cached export of the weights with `fingerprint` without their sentence-transformers model, or
        None when it is not complete (not exported or quantized yet, or exported before specs were saved)."""
        _check_backend(backend)
        folder = cache_dir(fingerprint)
        spec = RunnerSpec.read(folder, max_seq_length)
        if spec is None or not (folder / _FILES[backend]).is_file():
            return None
        return cls.open(folder / _FILES[backend], spec, threads=threads)

    @classmethod
    def open(cls, path: Path, spec: RunnerSpec, *, threads: int | None) -> OnnxRunner:
        """A runner over one .onnx file (`threads` None: default_threads())."""
        session = session_for(path, threads)
        return cls(session, spec, [i.name for i in session.get_inputs()], path)

    def encode(self, texts: list[str], batch_size: int = MAX_BATCH, *, progress: bool = False) -> np.ndarray:
        """(n, dims) float32 unit vectors, in the order of `texts`; batches hold at most MAX_BATCH texts."""
        from tqdm import tqdm

        batch_size = max(1, min(batch_size, MAX_BATCH))
        encoded = self.spec.feeds(texts)
        lengths = np.array([len(feed["input_ids"]) for feed in encoded])
        order = np.argsort(-lengths, kind="stable")  # longest first: padding only within similar lengths
        out = np.empty((len(texts), self.spec.dims), dtype=np.float32)
        for start in tqdm(range(0, len(order), batch_size), desc="Batches", disable=not progress):
            rows = order[start : start + batch_size]
            width = int(lengths[rows].max())
            feed = {}
            for name in self.input_names:
                array = np.zeros((len(rows), width), dtype=np.int64)
                for i, row in enumerate(rows):
                    values = encoded[row][name]
                    array[i, : len(values)] = values
                feed[name] = array
            hidden = self.session.run(None, feed)[0]
            out[rows] = self._pool(hidden, feed["attention_mask"])
        return out

    def _pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.spec.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def session_for(
    path: Path,
    threads: int | None,
    *,
    optimized_copy: Path | None = None,
    profile_prefix: Path | None = None,
    unfused: tuple[str, ...] = UNFUSED,
) -> Any:
    """The ONNX Runtime session every runner uses: all optimizations but `unfused`, `threads` intra-op threads (None:
    default_threads()). For eval/perf/fusions.py, which measures what leaving fusions out buys: `optimized_copy`
    saves the graph as the session optimized it (what really runs), `profile_prefix` turns on ONNX Runtime's
    per-node profiling (written by `session.end_profiling()`), `unfused` other than UNFUSED lets them in."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads or default_threads()
    options.inter_op_num_threads = 1
    if optimized_copy is not None:
        options.optimized_model_filepath = str(optimized_copy)
    if profile_prefix is not None:
        options.enable_profiling = True
        options.profile_file_prefix = str(profile_prefix)
    return ort.InferenceSession(
        str(path), options, providers=["CPUExecutionProvider"], disabled_optimizers=list(unfused)
    )


def _check_backend(backend: str) -> None:
    if backend not in FAST_BACKENDS:
        raise ValueError(f"unknown fast backend {backend!r}; choose one of {', '.join(FAST_BACKENDS)}")


def default_threads() -> int:
    """OMP_NUM_THREADS when set (the knob torch follows too), else 0: ONNX Runtime's own choice, one thread per
    physical core, which is torch's default as well. Read without importing torch (the fast path never loads it)."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isdigit() and int(value) > 0 else 0
