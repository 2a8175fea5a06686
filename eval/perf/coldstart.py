"""Cold start of the `assistant` CLI: `--help`, a search and a question, each in a fresh process.

    python -m eval.perf.coldstart                     # needs an index (default: the demo index, `make demo`)

`--help` must not import the heavy libraries (torch, transformers, FAISS, llama.cpp, onnxruntime): the CLI keeps
them inside the commands. The search and the question are timed from process start to exit; their own pipeline
timings (printed with --json) are subtracted to give the start-up share (imports, index load); the GGUF model is
loaded lazily inside the pipeline, before the prompt is fitted, and reported as its own share.

The search is timed twice, side by side: as shipped (an index built by a fast backend opens its cached ONNX export
with the `tokenizers` library alone) and through the sentence-transformers model, the path every search took before
(`OnnxEncoder.cached` switched off in that process, so it loads the model, hence torch, then the same export). Each
run reports the heavy libraries it imported.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from eval.perf import results
from models.preset import PRESET

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "sentence_transformers", "faiss", "llama_cpp", "onnxruntime", "gradio", "openai")
QUERY = "Small left pleural effusion with adjacent basilar opacity."


#: Run in the measured process before the CLI: disables opening a cached export without its model.
MODEL_PATH = (
    "import retriever.encoders.onnx.encoder as o; o.OnnxEncoder.cached = classmethod(lambda cls, *a, **k: None)"
)
_HEAVY_MARK = "heavy imports at exit:"


def run_cli(args: list[str], env: dict[str, str], prelude: str = "") -> tuple[float, str, list[str]]:
    """(wall seconds, stdout, heavy libraries imported) of one `assistant` invocation in a fresh process."""
    code = "\n".join(
        [
            "import atexit, sys",
            f"atexit.register(lambda: print({_HEAVY_MARK!r}, *[m for m in {HEAVY!r} if m in sys.modules], "
            "file=sys.stderr))",
            prelude,
            "from assistant.cli import app",
            "app()",
        ]
    )
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=REPO)
    wall = time.perf_counter() - start
    if out.returncode not in (0, 3, 4, 5):  # 3-5: the answer degraded, the start-up was still measured
        raise RuntimeError(f"{' '.join(args)} exited {out.returncode}: {out.stderr[-800:]}")
    heavy = next(line for line in out.stderr.splitlines() if line.startswith(_HEAVY_MARK))
    return wall, out.stdout, heavy.removeprefix(_HEAVY_MARK).split()


def main(argv: list[str] | None = None) -> int:
    parser = results.parser(__doc__)
    parser.add_argument("--index", type=Path, default=None, help="index folder (default: the default index)")
    parser.add_argument("--model", default=PRESET.answer.llm, help="embedded model `ask` loads")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-ask", action="store_true", help="only --help and search")
    args = results.parse_args(parser, argv)
    from models.paths import default_index_dir

    index = args.index or default_index_dir()
    if not (index / "manifest.json").is_file():
        print(f"skipped: no index at {index} (run `make demo-index` or pass --index)")
        return 0
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "RADSEARCH_LLM_THREADS": str(args.threads)}
    helps = [run_cli(["--help"], env) for _ in range(args.repeats)]
    data: dict[str, Any] = {
        "heavy_imports_of_cli": helps[-1][2],
        "help_s": round(statistics.median(wall for wall, _, _ in helps), 3),
    }
    search_args = ["search", QUERY, "--index", str(index), "-k", "5", "--json"]
    paths = {"search": "", "search_model_path": MODEL_PATH}
    runs: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(args.repeats):  # interleaved, so a change in the machine's load hits both alike
        for name, prelude in paths.items():
            wall, _, heavy = run_cli(search_args, env, prelude)
            runs[name].append(wall)
            data[f"heavy_imports_of_{name}"] = heavy
    for name, walls in runs.items():
        data[f"{name}_s"] = round(statistics.median(walls), 3)
    if not args.skip_ask:
        wall, out, _ = run_cli(["ask", QUERY, "--index", str(index), "--model", args.model, "--json"], env)
        timings = json.loads(out).get("timings", {})
        pipeline = float(timings.get("total", 0.0))
        data["ask"] = {
            "model": args.model,
            "wall_s": round(wall, 2),
            "pipeline_s": round(pipeline, 2),
            "retrieval_s": round(float(timings.get("retrieval", 0.0)), 2),
            "llm_s": round(float(timings.get("llm", 0.0)), 2),
            # The GGUF is loaded lazily, when the prompt is fitted to its context: inside the pipeline's time.
            "model_load_and_prompt_s": round(
                pipeline - float(timings.get("retrieval", 0.0)) - float(timings.get("llm", 0.0)), 2
            ),
            "startup_s": round(wall - pipeline, 2),
        }
    data["index"] = index.name
    results.store_run("coldstart", data, args, "eval.perf.coldstart", argv)
    print(json.dumps(data, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
