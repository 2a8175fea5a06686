"""int8 dynamic quantization of an exported encoder, checked against the float32 export before it is used.

Why a check: int8 weights are safe for most layers, but some models have layers whose inputs carry outliers (the
feed-forward down-projection after GELU in all-mpnet-base-v2: quantizing it turns every embedding into noise, cosine
~0 to the float model). So the recipes below are tried in order, and the first whose embeddings of CALIBRATION stay
within MIN_COSINE of the float32 export wins; the choice and its cosine are recorded beside the model.

All recipes: per-channel weight scales (per-tensor costs MiniLM ~0.06 of cosine) and reduce_range (7-bit weights:
without VNNI, x86 int8 kernels can saturate their 16-bit intermediate sums; 8-bit weights turn mpnet's embeddings
into noise). Fused attention nodes (com.microsoft Attention, retriever/onnx_encoder.py) become QAttention, int8 in
every recipe: their query/key/value projection is quantized like the other weight MatMuls.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

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


def _weight_matmuls(model_path: Path) -> dict[str, tuple[int, int]]:
    """MatMul nodes with a constant 2-D weight: name -> (inputs, outputs)."""
    import onnx

    graph = onnx.load(str(model_path), load_external_data=False).graph
    shapes = {init.name: tuple(init.dims) for init in graph.initializer if len(init.dims) == 2}
    found = {}
    for node in graph.node:
        weight = next((shapes[name] for name in node.input if name in shapes), None)
        if node.op_type == "MatMul" and weight is not None:
            found[node.name] = weight
    return found


def recipes(model_path: Path) -> list[tuple[str, list[str]]]:
    """(name, MatMul nodes kept in float) in the order tried, fastest first: everything int8; the feed-forward
    down-projections in float (the only weight MatMuls that shrink their input, e.g. 3072 -> 768); those and one
    layer's up-projection (768 -> 3072), layer by layer (all equally fast; mpnet passes with layer 1's, measured
    0.9905 where the down-projections alone give 0.9887); the whole feed-forward block in float, leaving int8 to
    the attention."""
    weights = _weight_matmuls(model_path)
    down = [name for name, (inputs, outputs) in weights.items() if inputs > outputs]
    up = [name for name, (inputs, outputs) in weights.items() if inputs < outputs]
    one_up = [(f"down-projection-float+up-projection-{layer}-float", [*down, name]) for layer, name in enumerate(up)]
    return [("all-matmul-int8", []), ("down-projection-float", down), *one_up, ("feed-forward-float", down + up)]


def quantize(
    float_path: Path, int8_path: Path, embed: Callable[[Path, list[str]], np.ndarray]
) -> dict[str, float | str]:
    """Write the first recipe that passes the check to `int8_path`; `embed(model_path, texts)` runs a model.

    Raises ValueError when no recipe keeps the model's embeddings (the int8 backend is then not offered for it).
    """
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    reference = embed(float_path, CALIBRATION)
    tried = {}
    for name, keep_float in recipes(float_path):
        quantize_dynamic(
            str(float_path),
            str(int8_path),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
            op_types_to_quantize=["MatMul", "Attention"],
            nodes_to_exclude=keep_float,
            extra_options={"DefaultTensorType": TensorProto.FLOAT},
        )
        cosine = float(np.mean(np.sum(embed(int8_path, CALIBRATION) * reference, axis=1)))
        tried[name] = round(cosine, 4)
        if cosine >= MIN_COSINE:
            record = {"recipe": name, "calibration_cosine": round(cosine, 4), "float_layers": len(keep_float)}
            (int8_path.parent / RECIPE_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
            return record
    int8_path.unlink(missing_ok=True)
    raise ValueError(f"no int8 recipe keeps this model's embeddings (mean cosine to float32: {tried})")
