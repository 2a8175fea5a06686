"""Answer latency: time to first token and total, the project's pipeline vs the raw backend, same prompt.

    python -m eval.perf.answer                       # embedded Qwen2.5 1.5B, then vLLM CPU (SmolLM2); 1 thread
    python -m eval.perf.answer --backends embedded --model smollm2 --queries 1 --max-tokens 16 --quick

"Project" = `assistant ask`'s path: retrieval from a saved index (query encode + FAISS search), prompt fitting,
the LLM, answer parsing (RagPipeline.iter_answer, streaming so the first token can be timed). "Raw" = the same
messages and JSON schema sent straight to llama-cpp-python's `create_chat_completion` or to the server with the
`openai` client, bypassing every project module. Raw and project use separate model instances that see the same
sequence of prompts, so llama.cpp's prompt-prefix reuse favours neither; vLLM runs without prefix caching.
Overhead = (project total - raw total) / raw total, from the medians.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from eval.perf import results
from eval.perf.data import held_out_findings, shared_reports, test_split
from models.preset import PRESET

EMBEDDED_MODEL = PRESET.answer.llm
ENCODER = "minilm"


class RecordingLLM:
    """Wraps the project's LLM and keeps the messages and schema of the last call, for the raw replay."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.last: tuple[list[dict], dict | None] | None = None

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def identity(self) -> dict[str, str]:
        return self.inner.identity()

    @property
    def context_window(self) -> int:
        return self.inner.context_window

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def complete(self, messages: Sequence[dict], **kwargs: Any) -> Any:
        self.last = ([dict(m) for m in messages], kwargs.get("json_schema"))
        return self.inner.complete(messages, **kwargs)

    def stream(self, messages: Sequence[dict], **kwargs: Any) -> Iterator[str]:
        self.last = ([dict(m) for m in messages], kwargs.get("json_schema"))
        return self.inner.stream(messages, **kwargs)


def timed_stream(pieces: Iterator[Any]) -> dict[str, float]:
    """Seconds to the first text piece and to the end of the stream."""
    start = time.perf_counter()
    first = None
    for piece in pieces:
        if first is None and isinstance(piece, str) and piece:
            first = time.perf_counter() - start
    total = time.perf_counter() - start
    return {"ttft_s": first if first is not None else total, "total_s": total}


def raw_llamacpp(gguf_path: str, threads: int, max_tokens: int) -> Any:
    """A function (messages, schema) -> piece iterator over a separate llama-cpp-python instance."""
    from llama_cpp import Llama

    llm = Llama(model_path=gguf_path, n_ctx=4096, n_threads=threads, seed=0, verbose=False)

    def run(messages: list[dict], schema: dict | None) -> Iterator[str]:
        extra = {"response_format": {"type": "json_object", "schema": schema}} if schema else {}
        for chunk in llm.create_chat_completion(
            messages=messages, max_tokens=max_tokens, temperature=0.0, seed=0, stream=True, **extra
        ):
            yield chunk["choices"][0]["delta"].get("content") or ""

    return run


def raw_openai(base_url: str, model: str, max_tokens: int) -> Any:
    """The same for an OpenAI-compatible server, through the `openai` client alone (vLLM structured outputs)."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="not-needed", max_retries=0)

    def run(messages: list[dict], schema: dict | None) -> Iterator[str]:
        extra = {"extra_body": {"structured_outputs": {"json": schema}}} if schema else {}
        for chunk in client.chat.completions.create(
            model=model, messages=messages, max_tokens=max_tokens, temperature=0.0, seed=0, stream=True, **extra
        ):
            if chunk.choices and chunk.choices[0].delta.content:
                yield chunk.choices[0].delta.content

    return run


def compare(pipeline: Any, recorder: RecordingLLM, raw: Any, queries: list[str]) -> dict[str, Any]:
    """Project then raw for each query; medians, and the overhead of the project over raw."""
    project, direct = [], []
    for query in queries:
        project.append(timed_stream(pipeline.iter_answer(query)))
        assert recorder.last is not None, "the pipeline did not call the LLM"
        direct.append(timed_stream(raw(*recorder.last)))
        print({"project": project[-1], "raw": direct[-1]}, flush=True)

    def median(rows: list[dict[str, float]], key: str) -> float:
        return round(statistics.median(r[key] for r in rows), 3)

    summary = {f"{side}_{key}": median(rows, key) for side, rows in (("project", project), ("raw", direct))
               for key in ("ttft_s", "total_s")}  # fmt: skip
    summary["overhead"] = round(summary["project_total_s"] / summary["raw_total_s"] - 1, 4)
    summary["runs"] = len(queries)
    return summary


def build_index(
    folder: Path,
    threads: int,
    limit: int | None = None,
    fields: tuple[str, ...] = ("impression",),
    encoder_name: str = ENCODER,
) -> Any:
    """A saved index of `fields` over the shared train/dev reports (the test split supplies the queries)."""
    from eval.common.shared_data import index_backend
    from retriever.encoders.encoder import load_encoder
    from retriever.index.report_index import ReportIndex

    reports = shared_reports()
    held_out = {r.id for r in test_split(reports)}
    encoder = load_encoder(encoder_name, backend=index_backend(), threads=threads)
    corpus = [r for r in reports if r.id not in held_out][:limit]
    ReportIndex.build(corpus, encoder, fields).save(folder)
    return ReportIndex.load(folder, encoder)


def pipeline_for(llm: Any, index: Any, max_tokens: int) -> tuple[Any, RecordingLLM]:
    from assistant.rag.assemble import build_pipeline
    from assistant.rag.lc_retriever import ReportRetriever
    from assistant.rag.modes import AnswerMode
    from assistant.settings import Settings

    recorder = RecordingLLM(llm)
    retriever = ReportRetriever(index=index, field="impression", k=1)
    # The project's overhead over the raw backend is measured on a model answer (ask's default asks no model since
    # 2026-11-27): the paper's prompt, as the committed figures were.
    settings = Settings().with_flags(mode=AnswerMode.FREE_TEXT, prompt="diagnosis_rag")
    return build_pipeline(settings, recorder, retriever, max_tokens=max_tokens), recorder


def measure_embedded(index: Any, queries: list[str], threads: int, max_tokens: int, model: str) -> dict[str, Any]:
    from assistant.llm.llamacpp_backend import LlamaCppBackend
    from models.gguf import resolve

    backend = LlamaCppBackend(model, n_threads=threads)
    pipeline, recorder = pipeline_for(backend, index, max_tokens)
    raw = raw_llamacpp(str(resolve(model).path), threads, max_tokens)
    return {"model": backend.model_id, "structured": "json-schema grammar"} | compare(pipeline, recorder, raw, queries)


def measure_vllm(index: Any, queries: list[str], threads: int, max_tokens: int, log: Path) -> dict[str, Any]:
    from assistant.llm.openai_backend import OpenAIBackend
    from eval.perf.vllm_server import SERVED_NAME, vllm_server

    with vllm_server(log, cores=",".join(str(c) for c in range(threads))) as (url, ready_s):
        backend = OpenAIBackend(url, SERVED_NAME, structured="vllm")
        pipeline, recorder = pipeline_for(backend, index, max_tokens)
        summary = compare(pipeline, recorder, raw_openai(url, SERVED_NAME, max_tokens), queries)
    return {"model": SERVED_NAME, "structured": "vllm structured_outputs", "server_start_s": round(ready_s, 1)} | (
        summary
    )


def main(argv: list[str] | None = None) -> int:
    parser = results.parser(__doc__)
    parser.add_argument("--backends", default="embedded,vllm")
    parser.add_argument(
        "--queries", type=int, default=8, help="held-out findings asked (runs per side; 3 gave medians 6 points apart)"
    )
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--model", default=EMBEDDED_MODEL, help="embedded GGUF: qwen1.5b, smollm2 or a path")
    args = results.parse_args(parser, argv)
    queries = held_out_findings(args.queries)
    if queries is None:
        return 0
    data: dict[str, Any] = {"queries": len(queries), "max_tokens": args.max_tokens, "k": 1, "field": "impression"}
    with tempfile.TemporaryDirectory(prefix="radsearch-perf-") as tmp:
        index = build_index(Path(tmp) / "index", args.threads, 200 if args.quick else None)
        for backend in args.backends.split(","):
            if backend == "embedded":
                data["embedded"] = measure_embedded(index, queries, args.threads, args.max_tokens, args.model)
            elif backend == "vllm":
                from eval.perf.vllm_server import ServerUnavailable

                try:
                    data["vllm"] = measure_vllm(index, queries, args.threads, args.max_tokens, Path(tmp) / "vllm.log")
                except ServerUnavailable as exc:  # keep the embedded figures; say why this one is missing
                    data["vllm_error"] = str(exc)
                    print(f"vLLM skipped: {exc}")
            else:
                parser.error(f"unknown backend {backend!r}")
    results.store_run("answer", data, args, "eval.perf.answer", argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
