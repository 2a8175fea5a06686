"""What leaving ONNX Runtime's SkipLayerNormalization out of the fast embedding path buys, side by side in one run.

    python -m eval.perf.fusions              # at 1 thread and at every core
    python -m eval.perf.fusions --quick      # a smoke run: few texts, few repetitions

retriever/encoders/onnx/runner.py keeps the residual add and the layer norm as two nodes (UNFUSED) because the fused
node is slower on this CPU. Two measurements, each at every thread count:

- node: SkipLayerNormalization vs Add + LayerNormalization on the same (8, 200, hidden) float32 inputs (the shape of
  one micro-batch of long reports), median time per call and per element;
- model: MiniLM's int8 export (the same file) run by the shipped session and by one that lets ONNX Runtime fuse,
  both encoding the same full reports in interleaved rounds (eval.perf.embedding.throughput): reports/s, the
  SkipLayerNormalization and LayerNormalization nodes in each session's optimized graph (what really ran), and
  the cosine between their vectors (the same maths in another float order, which the activations' dynamic int8
  quantization turns into int8 rounding noise), and each op type's share of the kernel time in one more profiled
  pass over the texts (ONNX Runtime's own profiler; the share of SkipLayerNormalization is what leaving it out
  can save at most).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from eval.perf import results
from eval.perf.data import sample_texts, shared_reports_or_skip
from eval.perf.embedding import throughput
from retriever.encoders.onnx.encoder import OnnxEncoder
from retriever.encoders.onnx.runner import MAX_BATCH, PROVIDERS, UNFUSED, OnnxRunner, session_for, session_options

ENCODER = "minilm"
#: One micro-batch of long reports: MAX_BATCH texts of 200 tokens.
NODE_SHAPE = (MAX_BATCH, 200)


def _node_models(hidden: int) -> dict[str, bytes]:
    """The fused node and the two nodes it replaces, as serialized one-node/two-node ONNX models."""
    from onnx import TensorProto, helper, numpy_helper

    gamma = numpy_helper.from_array(np.ones(hidden, np.float32), "gamma")
    beta = numpy_helper.from_array(np.zeros(hidden, np.float32), "beta")
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [*NODE_SHAPE, hidden]) for n in ("x", "skip")]
    output = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    graphs = {
        "SkipLayerNormalization": [
            helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta"], ["y"], domain="com.microsoft")
        ],
        "Add + LayerNormalization": [
            helper.make_node("Add", ["x", "skip"], ["sum"]),
            helper.make_node("LayerNormalization", ["sum", "gamma", "beta"], ["y"], axis=-1),
        ],
    }
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return {
        name: helper.make_model(
            helper.make_graph(nodes, name, inputs, output, [gamma, beta]), opset_imports=opsets, ir_version=8
        ).SerializeToString()
        for name, nodes in graphs.items()
    }


def time_nodes(hidden: int, threads: int, calls: int) -> list[dict[str, Any]]:
    """Median seconds per call of each node form, interleaved call by call; both outputs are checked equal."""
    import onnxruntime as ort

    rng = np.random.default_rng(0)
    feed = {name: rng.standard_normal((*NODE_SHAPE, hidden)).astype(np.float32) for name in ("x", "skip")}
    sessions = {}
    for name, model in _node_models(hidden).items():
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        sessions[name] = ort.InferenceSession(
            model, options, providers=["CPUExecutionProvider"], disabled_optimizers=list(UNFUSED)
        )
    outputs = {name: session.run(None, feed)[0] for name, session in sessions.items()}  # warm-up
    fused, unfused = outputs.values()
    seconds: dict[str, list[float]] = {name: [] for name in sessions}
    for _ in range(calls):
        for name, session in sessions.items():
            start = time.perf_counter()
            session.run(None, feed)
            seconds[name].append(time.perf_counter() - start)
    elements = int(np.prod(NODE_SHAPE)) * hidden
    return [
        {
            "threads": threads,
            "node": name,
            "ms_per_call": round(statistics.median(times) * 1e3, 3),
            "ns_per_element": round(statistics.median(times) / elements * 1e9, 3),
            "max_abs_difference": round(float(np.abs(fused - unfused).max()), 7),
        }
        for name, times in seconds.items()
    ]


def bench_session(path: Path, threads: int, unfused: tuple[str, ...], **options: Any) -> Any:
    """A session on `path` as the product opens it (retriever.encoders.onnx.runner.session_for) or, with `unfused` other
    than UNFUSED, one that leaves those fusions out instead. `options` are SessionOptions only a benchmark sets:
    optimized_model_filepath saves the graph as the session optimized it (what really runs); enable_profiling with
    profile_file_prefix turns on ONNX Runtime's per-node profile (written by `session.end_profiling()`)."""
    import onnxruntime as ort

    base = ort.SessionOptions()
    for name, value in options.items():
        setattr(base, name, value)
    if unfused == UNFUSED:
        return session_for(path, threads, base)
    settings = session_options(threads, base)
    return ort.InferenceSession(str(path), settings, providers=PROVIDERS, disabled_optimizers=list(unfused))


def op_shares(
    runner: OnnxRunner, texts: list[str], threads: int, unfused: tuple[str, ...], prefix: Path
) -> dict[str, float]:
    """Op type -> share of the kernel time while `runner`'s graph encodes `texts` in a profiled session."""
    import json

    profiled = bench_session(runner.path, threads, unfused, enable_profiling=True, profile_file_prefix=str(prefix))
    OnnxRunner(profiled, runner.spec, runner.input_names, runner.path).encode(texts)
    events = json.loads(Path(profiled.end_profiling()).read_text(encoding="utf-8"))
    micros: Counter[str] = Counter()
    for event in events:
        if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time"):
            micros[event["args"]["op_name"]] += event["dur"]
    total = sum(micros.values()) or 1
    return {op: round(us / total, 4) for op, us in micros.most_common() if us / total >= 0.005}


def _ops(path: Path) -> Counter[str]:
    import onnx

    return Counter(node.op_type for node in onnx.load(str(path), load_external_data=False).graph.node)


def time_model(texts: list[str], threads: int) -> list[dict[str, Any]]:
    """The int8 MiniLM export in the shipped session and in one that fuses SkipLayerNormalization, side by side."""
    from retriever.encoders.encoder import load_encoder

    encoder = load_encoder(ENCODER, backend="onnx-int8", threads=threads)
    encoder.encode(["warm-up"])  # exports and quantizes on first use
    engine = encoder.engine
    assert isinstance(engine, OnnxEncoder) and engine.runner is not None
    shipped = engine.runner
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        runners, ops, shares = {}, {}, {}
        for name, unfused in (("shipped (fusion left out)", UNFUSED), ("SkipLayerNormalization fused", ())):
            copy = Path(tmp) / f"{len(runners)}.onnx"
            opened = bench_session(shipped.path, threads, unfused, optimized_model_filepath=str(copy))
            runners[name] = (OnnxRunner(opened, shipped.spec, shipped.input_names, shipped.path), MAX_BATCH)
            ops[name] = _ops(copy)
            shares[name] = op_shares(shipped, texts, threads, unfused, Path(tmp) / f"profile-{len(shares)}")
        timed = throughput(runners, texts)
    reference = timed["shipped (fusion left out)"][0]
    for name, (vectors, per_s) in timed.items():
        rows.append(
            {
                "threads": threads,
                "session": name,
                "reports_per_s": round(per_s, 2),
                "skip_layer_norm_nodes": ops[name]["SkipLayerNormalization"],
                "layer_norm_nodes": ops[name]["LayerNormalization"],
                "cosine_to_shipped_min": round(float(np.sum(vectors * reference, axis=1).min()), 6),
                "kernel_time_shares": shares[name],
            }
        )
    base = rows[1]["reports_per_s"]
    for row in rows:
        row["speedup_over_fused"] = round(row["reports_per_s"] / base, 3)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = results.parser(__doc__)
    parser.add_argument("--texts", type=int, default=256, help="full reports encoded per round")
    parser.add_argument("--calls", type=int, default=50, help="timed calls per node form")
    parser.set_defaults(threads=os.cpu_count() or 1)
    args = results.parse_args(parser, argv)
    reports = shared_reports_or_skip()
    if reports is None:
        return 0
    texts = sample_texts(reports, 8 if args.quick else args.texts)
    calls = 3 if args.quick else args.calls
    thread_counts = sorted({1, args.threads})
    from retriever.encoders.encoder import load_encoder

    hidden = load_encoder(ENCODER, backend="onnx-int8").dims  # the node test's width: the model's hidden size
    data = {
        "encoder": ENCODER,
        "texts": len(texts),
        "node_shape": [*NODE_SHAPE, hidden],
        "thread_counts": thread_counts,
        "nodes": [row for threads in thread_counts for row in time_nodes(hidden, threads, calls)],
        "model": [row for threads in thread_counts for row in time_model(texts, threads)],
    }
    results.store_run("fusions", data, args, "eval.perf.fusions", argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
