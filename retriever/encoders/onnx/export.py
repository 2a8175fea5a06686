"""Export a sentence-transformers model to ONNX, fuse it and quantize it to int8, each step checked.

Why: on CPU, torch's eager BERT forward pass is the indexing bottleneck. The export is traced with plain (eager)
attention and fused by ONNX Runtime's transformer optimizer (attention, bias-GELU: fewer, larger kernels; not the
residual add + layer norm, see onnx_runner.UNFUSED), and int8 dynamic quantization of the weights
(retriever/encoders/onnx/quantize.py, checked against the float export) speeds it up further. The export is made locally
from the offline weights: nothing is downloaded. Where exports are cached and when they are made:
retriever/encoders/onnx/encoder.py.
"""

from __future__ import annotations

import json
import shutil
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from models.atomic import write_atomic
from retriever.encoders.onnx.files import MODEL_FILES
from retriever.encoders.onnx.runner import OnnxRunner
from retriever.encoders.onnx.spec import ENCODING_FIELDS, RunnerSpec, UnsupportedModel

#: The graph file of each fast backend inside an export folder.
FUSION_FILE = "fusion.json"
#: Least cosine between the fused and the unfused float export on the calibration sentences: fusion only
#: reorders float arithmetic, so anything lower means a fusion pattern matched wrongly (the unfused graph is kept).
MIN_FUSED_COSINE = 0.9999
_OPSET = 17


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

    Written to a temporary folder and renamed (models.atomic), so a crash never leaves a half-written export in
    the cache.
    """
    import torch

    spec = RunnerSpec.from_model(st_model)  # refuse before spending time on an export that cannot be used
    sample = st_model.tokenizer(
        ["a short sample", "a longer sample sentence for export"], padding=True, return_tensors="pt"
    )
    input_names = list(sample.keys())
    if unknown := set(input_names) - set(ENCODING_FIELDS):
        raise UnsupportedModel(f"tokenizer inputs {sorted(unknown)} are not made by the fast path")
    auto_model = st_model[0].auto_model
    wrapped = _positional(auto_model, input_names)
    axes = {name: {0: "batch", 1: "tokens"} for name in [*input_names, "last_hidden_state"]}

    def write(tmp: Path) -> None:
        tmp.mkdir()
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
        record = fuse(traced, tmp / MODEL_FILES["onnx"], auto_model.config, spec)
        (tmp / FUSION_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        spec.save(tmp)
        traced.unlink()
        if folder.exists():  # an older export: replaced by the rename that follows
            shutil.rmtree(folder)

    write_atomic(folder, write)


def fuse(traced: Path, fused: Path, config: Any, spec: RunnerSpec) -> dict[str, Any]:
    """Write `traced` with ONNX Runtime's transformer fusions applied to `fused`, checked against the unfused graph.

    Why offline and not only ONNX Runtime's own session-time fusions: those do not fuse the attention of this export,
    the optimizer's do (com.microsoft Attention, which int8 quantization then turns into QAttention). opt_level 0:
    only the optimizer's fusions; the session still applies its hardware-specific ones at load. Returns what was
    fused and the check's cosine; a graph that fails the check is written unfused.
    """
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    from retriever.encoders.onnx.quantize import CALIBRATION

    options = FusionOptions("bert")
    options.enable_skip_layer_norm = False  # see onnx_runner.UNFUSED
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
    """Write model.int8.onnx beside model.onnx, with a recipe checked against it
    (retriever/encoders/onnx/quantize.py)."""
    from retriever.encoders.onnx.quantize import quantize as quantize_checked

    def embed(path: Path, texts: list[str]) -> np.ndarray:
        return OnnxRunner.open(path, spec, threads=None).encode(texts)

    try:
        write_atomic(
            folder / MODEL_FILES["onnx-int8"],
            lambda tmp: quantize_checked(folder / MODEL_FILES["onnx"], tmp, embed, spec.feeds),
        )
    except ValueError as exc:
        raise UnsupportedModel(str(exc)) from exc
