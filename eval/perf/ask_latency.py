"""`assistant ask` latency with the embedded model: a new context per question, with and without the saved prompt.

    python -m eval.perf.ask_latency --threads 2              # ask's defaults, 8 questions
    python -m eval.perf.ask_latency --threads 2 --prompt diagnosis_rag   # the free-text answer (Qwen2.5 1.5B)
    python -m eval.perf.ask_latency --model smollm2 --queries 2 --quick

Measured as `ask` answers by default (models/preset.json: its k, prompt and evidence weighting, the shipped encoder's
index); another `--prompt` (`evidence`, which asks no model, or `diagnosis_rag`) is stored as the section
`ask_latency_llm` beside it.

Each `assistant ask` is a new process: the model is loaded (from the page cache after the first time) into an
empty context, so llama.cpp's in-process prefix reuse never helps it. Here every question gets a freshly loaded
model, as a new process would, and is asked twice, interleaved: once evaluating the whole prompt ("cold") and once
with the system prompt's state loaded from disk (assistant/llm/llamacpp_prefix.py, built once before the timed runs).
Both go through the product's pipeline with `assistant ask`'s defaults (retrieval k, prompt, answer tokens) and
stream, so the time to the first answer token is measured where the resident sees it. Model load is timed apart.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from assistant.rag import answer_defaults
from eval.perf import results
from eval.perf.answer import EMBEDDED_MODEL, build_index, timed_stream
from eval.perf.data import held_out_findings
from models.preset import PRESET


def fresh_backend(model: str, threads: int, prefix_dir: Path | None) -> tuple[Any, float]:
    """A backend with the model loaded anew (an empty context, as in a new process) and the load's seconds."""
    from assistant.llm import llamacpp_backend

    backend = llamacpp_backend.LlamaCppBackend(model, n_threads=threads, timeout_s=600, prefix_dir=prefix_dir)
    for key in [k for k in llamacpp_backend._CACHE if k[2] == threads]:
        del llamacpp_backend._CACHE[key]
    start = time.perf_counter()
    backend.model_id  # noqa: B018 - loads the model
    return backend, time.perf_counter() - start


def ask_once(
    backend: Any, index: Any, query: str, max_tokens: int | None, prompt: str = answer_defaults.PROMPT
) -> dict[str, Any]:
    """One question through `assistant ask`'s pipeline (its defaults; `max_tokens` None = ask's), streamed."""
    from assistant.rag.assemble import build_pipeline
    from assistant.rag.lc_retriever import ReportRetriever
    from assistant.rag.modes import mode_of_prompt
    from assistant.settings import Settings

    mode = mode_of_prompt(prompt)
    settings = Settings().with_flags(mode=mode, prompt=prompt if mode.asks_model else None)
    pipeline = build_pipeline(settings, backend, ReportRetriever(index=index), max_tokens=max_tokens)
    return timed_stream(pipeline.iter_answer(query)) | {"prefix": backend.last_prefix}


def measure(
    index: Any,
    queries: list[str],
    model: str,
    threads: int,
    states: Path,
    max_tokens: int | None = None,
    prompt: str = answer_defaults.PROMPT,
) -> dict[str, Any]:
    """Cold and saved-prefix runs, interleaved per question; medians and every run."""
    backend, _ = fresh_backend(model, threads, states)
    ask_once(backend, index, queries[0], max_tokens, prompt)  # builds the saved state (untimed: once per prompt)
    runs: dict[str, list[dict[str, Any]]] = {"cold": [], "saved_prefix": []}
    loads = []
    for query in queries:
        for side, folder in (("cold", None), ("saved_prefix", states)):
            backend, load_s = fresh_backend(model, threads, folder)
            loads.append(load_s)
            runs[side].append(ask_once(backend, index, query, max_tokens, prompt))
            print(side, runs[side][-1], flush=True)

    def median(side: str, key: str) -> float:
        return round(statistics.median(r[key] for r in runs[side]), 3)

    return {
        "prompt": prompt,
        "model": backend.model_id,
        "model_load_s": round(statistics.median(loads), 3),
        **{f"{side}_{key}": median(side, key) for side in runs for key in ("ttft_s", "total_s")},
        "prefix_sources": {side: sorted({r["prefix"] for r in rows}) for side, rows in runs.items()},
        "runs": {
            side: [{k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()} for r in rows]
            for side, rows in runs.items()
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = results.parser(__doc__, threads_help="threads for llama.cpp and the encoder (2 = this machine)")
    parser.add_argument("--queries", type=int, default=8, help="held-out findings asked (each twice)")
    parser.add_argument("--model", default=EMBEDDED_MODEL, help="embedded GGUF: qwen1.5b, qwen0.5b, smollm2 or a path")
    parser.add_argument(
        "--prompt",
        default=answer_defaults.PROMPT,
        help="how the answer is made (ask --prompt); another than ask's default is stored apart",
    )
    args = results.parse_args(parser, argv)
    queries = held_out_findings(args.queries)
    if queries is None:
        return 0
    with tempfile.TemporaryDirectory(prefix="radsearch-ask-") as tmp:
        index = build_index(
            Path(tmp) / "index", args.threads, 200 if args.quick else None, (answer_defaults.FIELD,), PRESET.encoder
        )
        data = {"queries": len(queries)} | measure(
            index, queries, args.model, args.threads, Path(tmp) / "states", prompt=args.prompt
        )
    section = "ask_latency" if args.prompt == answer_defaults.PROMPT else "ask_latency_llm"
    results.store_run(section, data, args, "eval.perf.ask_latency", argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
