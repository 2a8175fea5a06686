"""int8 dynamic quantization of an exported encoder, checked against the float32 export before it is used.

Why a check: int8 weights are safe for most layers, but some models have layers whose inputs carry outliers (the
feed-forward down-projection after GELU in all-mpnet-base-v2: a few of its 3,072 input channels reach 30-90 where the
median channel stays under 1.6, so one int8 scale per tensor leaves the rest a handful of levels and every embedding
turns into noise). So the recipes below are tried in order, and the first whose embeddings of CALIBRATION stay
within MIN_COSINE of the float32 export wins; the choice and its cosine are recorded beside the model.

The outlier-channel recipe (LLM.int8()-style decomposition) keeps int8 for those layers: the input channels that
reach the largest magnitudes on CALIBRATION (OUTLIER_FRACTION of each weight product's inputs) go through a small
float product, the others through the int8 one, and the two are added. Measured on mpnet side by side with keeping
13 whole products in float: 15% more reports/s at 1 thread, 7% at 2, and closer to the float model (mean cosine
0.996 vs 0.992 on real reports).

All recipes: per-channel weight scales (per-tensor costs MiniLM ~0.06 of cosine) and reduce_range (7-bit weights:
without VNNI, x86 int8 kernels can saturate their 16-bit intermediate sums; 8-bit weights turn mpnet's embeddings
into noise). Fused attention nodes (com.microsoft Attention, retriever/encoders/onnx/export.py) become QAttention, int8
in every recipe: their query/key/value projection is quantized like the other weight MatMuls.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from models.atomic import write_atomic

#: Mean cosine to the float32 export a quantized model must reach on CALIBRATION (0.99: measured to keep
#: findings -> impression match@5 within 1 point on the shared data, eval/results/performance.md).
MIN_COSINE = 0.99
RECIPE_FILE = "quantization.json"
#: Varied radiology sentences (short, long, negated), written for this check.
CALIBRATION = [
    "No acute cardiopulmonary abnormality.",
    "Small left pleural effusion with adjacent basilar atelectasis; no pneumothorax.",
    "Ill-defined hypoattenuation along the falciform ligament, most consistent with focal fatty infiltration.",
    "Enlarged cardiac silhouette with cephalization of pulmonary vessels and bilateral interstitial opacities, "
    "compatible with congestive heart failure. Small bilateral effusions. Degenerative changes of the spine.",
    "4 mm noncalcified nodule in the right lower lobe. Recommend follow-up CT in 12 months per Fleischner criteria.",
    "The liver, spleen, pancreas and kidneys are unremarkable. No free fluid. No lymphadenopathy.",
    "Comminuted fracture of the distal radius with dorsal angulation and intra-articular extension.",
    "Right upper lobe consolidation with air bronchograms, in keeping with pneumonia.",
]


#: Share of a weight product's input channels computed in float by the outlier-channel recipe (16 of mpnet's 768,
#: 64 of its 3,072: measured 0.9972 calibration cosine, where 32 of 3,072 on the down-projections alone gave 0.986).
OUTLIER_FRACTION = 1 / 48
#: Suffix of the float products the outlier-channel recipe adds (left out of quantization).
OUTLIER_SUFFIX = "/outlier_channels_float"

#: A tokenizer for the exported graph: texts -> one unpadded input per text (input name -> token values); names the
#: graph does not take are ignored (onnx_spec.RunnerSpec.feeds).
Tokenize = Callable[[list[str]], list[dict[str, list[int]]]]


@dataclass(frozen=True)
class Recipe:
    """How to quantize: weight MatMuls kept in float, and whether outlier input channels are split off to float."""

    name: str
    keep_float: list[str] = field(default_factory=list)
    split_outliers: bool = False


def _weight_matmuls(graph: Any) -> dict[str, tuple[int, int]]:
    """MatMul nodes of an ONNX graph with a constant 2-D weight: name -> (inputs, outputs). Takes the loaded graph,
    so a caller that already holds the model (hundreds of MB for mpnet) does not read it again."""
    shapes = {init.name: tuple(init.dims) for init in graph.initializer if len(init.dims) == 2}
    found = {}
    for node in graph.node:
        weight = next((shapes[name] for name in node.input if name in shapes), None)
        if node.op_type == "MatMul" and weight is not None:
            found[node.name] = weight
    return found


def recipes(model_path: Path) -> list[Recipe]:
    """The recipes in the order tried, fastest first: everything int8; everything int8 with each weight product's
    outlier input channels in float; the feed-forward down-projections in float (the only weight MatMuls that shrink
    their input, e.g. 3072 -> 768); those and one layer's up-projection (768 -> 3072), layer by layer (all equally
    fast; mpnet passes with layer 1's, measured 0.9905 where the down-projections alone give 0.9887); the whole
    feed-forward block in float, leaving int8 to the attention."""
    import onnx

    weights = _weight_matmuls(onnx.load(str(model_path), load_external_data=False).graph)
    down = [name for name, (inputs, outputs) in weights.items() if inputs > outputs]
    up = [name for name, (inputs, outputs) in weights.items() if inputs < outputs]
    one_up = [
        Recipe(f"down-projection-float+up-projection-{layer}-float", [*down, name]) for layer, name in enumerate(up)
    ]
    return [
        Recipe("all-matmul-int8"),
        Recipe("outlier-channels-float", split_outliers=True),
        Recipe("down-projection-float", down),
        *one_up,
        Recipe("feed-forward-float", down + up),
    ]


def channel_peaks(model_path: Path, feeds: list[dict[str, list[int]]]) -> dict[str, np.ndarray]:
    """Per-channel largest |value| of every weight MatMul's input tensor over `feeds` (float model, unoptimized)."""
    import onnx
    import onnxruntime as ort

    model = onnx.load(str(model_path))
    weights = _weight_matmuls(model.graph)
    tensors = list(dict.fromkeys(n.input[0] for n in model.graph.node if n.name in weights))
    for name in tensors:
        model.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # keep the probed tensors
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    inputs = [i.name for i in session.get_inputs()]
    peaks: dict[str, np.ndarray] = {}
    for feed in feeds:
        arrays = {name: np.array([feed[name]], dtype=np.int64) for name in inputs}
        values = dict(zip(names, session.run(None, arrays), strict=True))
        for name in tensors:
            channel_max = np.abs(values[name]).reshape(-1, values[name].shape[-1]).max(axis=0)
            peaks[name] = np.maximum(peaks[name], channel_max) if name in peaks else channel_max
    return peaks


def split_outlier_channels(model_path: Path, out_path: Path, peaks: dict[str, np.ndarray]) -> list[str]:
    """Write `model_path` with every weight MatMul y = x W rewritten as y = (x * keep) W + x[..., top] W[top] and
    return the names of the added float products (W[top]); mathematically the same model.

    `top` are the OUTLIER_FRACTION of input channels with the largest `peaks`; `keep` zeroes them, so the int8
    product's per-tensor scale is set by the ordinary channels. The mask and gather are shared by the products that
    read the same tensor (a layer's query, key and value).
    """
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(model_path))
    graph = model.graph
    weights = _weight_matmuls(graph)
    initializers = {init.name: init for init in graph.initializer}
    split: dict[str, tuple[str, str, np.ndarray]] = {}  # input tensor -> (masked, outliers, channel indices)
    added: list[str] = []
    nodes: list[Any] = []
    for node in graph.node:
        if node.name not in weights:
            nodes.append(node)
            continue
        source = node.input[0]
        weight = numpy_helper.to_array(initializers[node.input[1]])
        if source not in split:
            count = max(1, math.ceil(weight.shape[0] * OUTLIER_FRACTION))
            top = np.sort(np.argsort(-peaks[source], kind="stable")[:count]).astype(np.int64)
            keep = np.ones(weight.shape[0], dtype=np.float32)
            keep[top] = 0.0
            base = f"{source}{OUTLIER_SUFFIX}"
            graph.initializer.extend(
                [numpy_helper.from_array(keep, f"{base}/keep"), numpy_helper.from_array(top, f"{base}/channels")]
            )
            nodes.append(helper.make_node("Mul", [source, f"{base}/keep"], [f"{base}/masked"], name=f"{base}/mask"))
            nodes.append(
                helper.make_node(
                    "Gather", [source, f"{base}/channels"], [f"{base}/outliers"], name=f"{base}/gather", axis=-1
                )
            )
            split[source] = (f"{base}/masked", f"{base}/outliers", top)
        masked, outliers, top = split[source]
        output = node.output[0]
        float_name = f"{node.name}{OUTLIER_SUFFIX}"
        graph.initializer.append(numpy_helper.from_array(weight[top].astype(np.float32), f"{float_name}/weight"))
        node.input[0] = masked
        node.output[0] = f"{node.name}/int8_part"
        nodes.append(node)
        nodes.append(
            helper.make_node("MatMul", [outliers, f"{float_name}/weight"], [f"{float_name}/out"], name=float_name)
        )
        nodes.append(helper.make_node("Add", [node.output[0], f"{float_name}/out"], [output], name=f"{node.name}/sum"))
        added.append(float_name)
    graph.ClearField("node")
    graph.node.extend(nodes)
    onnx.save(model, str(out_path))
    return added


@contextmanager
def _quiet_root_logger() -> Iterator[None]:
    """ONNX Runtime's quantizer warns through the root logger about a pre-processing step its own check below makes
    moot; an index's first build would print it to the user."""
    root = logging.getLogger()
    previous = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(previous)


def quantize(
    float_path: Path, int8_path: Path, embed: Callable[[Path, list[str]], np.ndarray], tokenize: Tokenize
) -> dict[str, float | str]:
    """Write the first recipe that passes the check to `int8_path`; `embed(model_path, texts)` runs a model,
    `tokenize` makes its inputs (for the outlier-channel recipe's calibration).

    Raises ValueError when no recipe keeps the model's embeddings (the int8 backend is then not offered for it).
    """
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    reference = embed(float_path, CALIBRATION)
    split_path = int8_path.with_name(f".{int8_path.stem}.outliers.onnx")
    tried = {}
    try:
        for recipe in recipes(float_path):
            source, keep_float = float_path, recipe.keep_float
            if recipe.split_outliers:
                peaks = channel_peaks(float_path, tokenize(CALIBRATION))
                keep_float = keep_float + split_outlier_channels(float_path, split_path, peaks)
                source = split_path
            with _quiet_root_logger():  # "Please consider to run pre-processing before quantization": not for users
                quantize_dynamic(
                    str(source),
                    str(int8_path),
                    weight_type=QuantType.QInt8,
                    per_channel=True,
                    reduce_range=True,
                    op_types_to_quantize=["MatMul", "Attention"],
                    nodes_to_exclude=keep_float,
                    extra_options={"DefaultTensorType": TensorProto.FLOAT},
                )
            cosine = float(np.mean(np.sum(embed(int8_path, CALIBRATION) * reference, axis=1)))
            tried[recipe.name] = round(cosine, 4)
            if cosine >= MIN_COSINE:
                record = {
                    "recipe": recipe.name,
                    "calibration_cosine": round(cosine, 4),
                    "float_layers": len(recipe.keep_float),
                    **({"outlier_fraction": round(OUTLIER_FRACTION, 4)} if recipe.split_outliers else {}),
                }
                write_atomic(int8_path.parent / RECIPE_FILE, json.dumps(record, indent=2) + "\n")
                return record
    finally:
        split_path.unlink(missing_ok=True)
    int8_path.unlink(missing_ok=True)
    raise ValueError(f"no int8 recipe keeps this model's embeddings (mean cosine to float32: {tried})")
