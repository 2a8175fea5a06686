"""LLM over any OpenAI-compatible HTTP server: vLLM, llama.cpp server, Ollama (or OpenAI itself).

Retries are done here, not by the client, so they are bounded and visible: connection failures, 429 and
5xx are retried with exponential backoff; a timeout is not retried (it would multiply the wait) and
surfaces as `BackendTimeout`. The timeout is a deadline for the whole call (the model check before it when the
caller passes `started_at`, connecting, every read, every retry and backoff): the request runs in a worker thread
and the caller stops waiting when the deadline passes, however slowly the server trickles its answer. A 200 answer
that is not a chat completion (an HTML page from a proxy, JSON of another shape, a truncated body) is
`BackendMalformed`, never a traceback; so is a `/v1/models` reply that is not JSON (nested too deep, too large), at
once rather than after the completion call's deadline. Replies are read within size bounds, streamed events by this
module's own reader (assistant/llm/bounded_reply.py). Structured output is requested as `response_format` JSON
schema (understood by all three servers) or, for vLLM, through its own `structured_outputs` request field (vLLM >=
0.12; the older `guided_json` was removed).
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import httpx2
import openai

from assistant.llm.base import (
    BackendMalformed,
    BackendRejected,
    BackendTimeout,
    BackendUnavailable,
    JsonSchema,
    LLMError,
    LLMResult,
    Message,
    Structured,
)
from assistant.llm.bounded_reply import MAX_REPLY_BYTES, MalformedReply, decode_json, event_data
from assistant.llm.deadline import Deadline, call_before, iterate_before

T = TypeVar("T")

DEFAULT_CONTEXT = 4096
EXCERPT_CHARS = 200  # of a malformed answer, in the error message
PROBE_TIMEOUT_S = 10.0  # the /v1/models probe for the context size: a missing answer only costs a default
_RETRYABLE = (openai.RateLimitError, openai.InternalServerError, openai.ConflictError)


class OpenAIBackend:
    """`LLM` over the `openai` client. `model` is the name the server serves (e.g. `--served-model-name`)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str = "not-needed",
        timeout_s: float = 120.0,
        max_retries: int = 2,
        structured: Structured = "response_format",
        context_tokens: int | None = None,
        backoff_s: float = 0.5,
    ) -> None:
        if not base_url:
            raise BackendUnavailable("no server URL: set RADSEARCH_LLM_BASE_URL (e.g. http://127.0.0.1:8000/v1)")
        if not model:
            raise BackendUnavailable("no model name: set RADSEARCH_LLM_MODEL to the name the server serves")
        self.base_url = base_url
        self.model = model
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.structured = structured
        self.backoff_s = backoff_s
        self._context_tokens = context_tokens
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)

    @property
    def model_id(self) -> str:
        return self.model

    def identity(self) -> dict[str, str]:
        return {"backend": "openai", "model": self.model, "server": self.base_url}

    @property
    def context_window(self) -> int:
        """Configured, else what vLLM reports as `max_model_len` in /v1/models, else a safe 4096."""
        if self._context_tokens is None:
            self._context_tokens = DEFAULT_CONTEXT
            deadline = Deadline.after(min(self.timeout_s, PROBE_TIMEOUT_S))
            models = self._client.models.with_streaming_response
            try:
                listing = self._json(deadline, lambda timeout: models.list(timeout=timeout))
            except BackendMalformed:
                raise  # the server answers, but not as an OpenAI-compatible one: no completion call would do better
            except LLMError:
                return self._context_tokens  # the completion call reports the real problem; the budget stays safe
            entries = _field(listing, "data")
            for entry in entries if isinstance(entries, list) else []:
                reported = _field(entry, "max_model_len")
                if _field(entry, "id") == self.model and isinstance(reported, int):
                    self._context_tokens = reported
        return self._context_tokens

    def count_tokens(self, text: str) -> int:
        """An over-estimate (1 token per 3 UTF-8 bytes) because the tokenizer lives on the server."""
        return math.ceil(len(text.encode("utf-8")) / 3)

    def _json(self, deadline: Deadline, open_response: Callable[[float], Any]) -> Any:
        """The decoded JSON body of one request (with retries), all before `deadline`. It runs in a worker thread
        that the caller stops waiting for at the deadline; the body is read piece by piece so that the worker
        stops there too, even when a server trickles its answer."""

        def request(timeout: float) -> Any:
            with open_response(timeout) as response:
                return self._read_json(response, deadline)

        return call_before(deadline, lambda: self._call(request, deadline), lambda: self._timed_out(deadline))

    def _read_json(self, response: Any, deadline: Deadline) -> Any:
        """The body of an open response, given up at `deadline` between pieces, decoded as JSON."""
        body = bytearray()
        try:
            for piece in response.iter_bytes():
                if deadline.passed:
                    raise self._timed_out(deadline)
                body += piece
                if len(body) > MAX_REPLY_BYTES:
                    raise self._malformed(f"a reply larger than {MAX_REPLY_BYTES // 2**20} MB, more than any answer")
        except httpx2.TimeoutException as exc:  # the client's transport: its errors reach a body read directly
            raise self._timed_out(deadline) from exc
        except httpx2.HTTPError as exc:
            raise BackendUnavailable(f"lost the connection to {self.base_url}: {exc}") from exc
        try:
            return decode_json(bytes(body))
        except MalformedReply as exc:
            text = bytes(body[:EXCERPT_CHARS]).decode("utf-8", "replace")
            raise self._malformed(f"{exc} in {text!r}") from exc

    def _timed_out(self, deadline: Deadline) -> BackendTimeout:
        return BackendTimeout(f"{self.base_url} did not answer within {deadline.seconds:g} s")

    def _call(self, request: Callable[[float], T], deadline: Deadline) -> T:
        """Run one request with bounded retries, turning client errors into the project's typed errors. Each
        attempt gets the time left as its timeout; no retry starts that the deadline leaves no room for."""
        for attempt in range(self.max_retries + 1):
            try:
                return request(deadline.remaining())
            except openai.APITimeoutError as exc:
                raise self._timed_out(deadline) from exc
            except (openai.APIConnectionError, *_RETRYABLE) as exc:
                backoff = self.backoff_s * 2**attempt
                if attempt == self.max_retries or backoff >= deadline.remaining():
                    raise BackendUnavailable(
                        f"LLM server {self.base_url} unavailable after {attempt + 1} attempts: {exc}"
                    ) from exc
                time.sleep(backoff)
            except (openai.NotFoundError, openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise BackendUnavailable(
                    f"{self.base_url} refused model {self.model!r} ({exc.status_code}): check "
                    "RADSEARCH_LLM_MODEL and RADSEARCH_LLM_API_KEY"
                ) from exc
            except openai.APIStatusError as exc:
                raise BackendRejected(f"{self.base_url} rejected the request ({exc.status_code}): {exc}") from exc
        raise AssertionError("unreachable: the loop returns or raises")

    def _malformed(self, problem: object) -> BackendMalformed:
        return BackendMalformed(
            f"{self.base_url} answered, but not with a chat completion (is it an OpenAI-compatible server?): "
            f"{str(problem)[:EXCERPT_CHARS]}"
        )

    def _request(
        self,
        messages: Sequence[Message],
        json_schema: JsonSchema | None,
        max_tokens: int,
        temperature: float,
        seed: int,
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "seed": seed,
        }
        if json_schema is not None and self.structured == "response_format":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": json_schema},
            }
        elif json_schema is not None and self.structured == "vllm":
            kwargs["extra_body"] = {"structured_outputs": {"json": json_schema}}
        return kwargs

    def complete(
        self,
        messages: Sequence[Message],
        *,
        json_schema: JsonSchema | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        seed: int = 0,
        started_at: float | None = None,
    ) -> LLMResult:
        kwargs = self._request(messages, json_schema, max_tokens, temperature, seed)
        start = time.monotonic()
        deadline = Deadline.after(self.timeout_s, started_at)
        completions = self._client.chat.completions.with_streaming_response
        response = self._json(deadline, lambda timeout: completions.create(timeout=timeout, **kwargs))
        total = time.monotonic() - start
        text = _choice_text(response, "message")
        if text is None:
            raise self._malformed(_excerpt(response))
        usage = {
            name: value
            for name in ("prompt_tokens", "completion_tokens")
            if isinstance(value := _field(_field(response, "usage"), name), int)
        }
        timings = {"total": total}
        if usage.get("completion_tokens") and total > 0:
            timings["tokens_per_s"] = usage["completion_tokens"] / total
        model = _field(response, "model")
        return LLMResult(
            text=text, model_id=model if isinstance(model, str) and model else self.model, timings=timings, usage=usage
        )

    def stream(
        self,
        messages: Sequence[Message],
        *,
        json_schema: JsonSchema | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        seed: int = 0,
        cancel: threading.Event | None = None,
        started_at: float | None = None,
    ) -> Iterator[str]:
        """Retries only cover opening the stream; a connection lost mid-answer is reported, not replayed. The
        deadline starts at `started_at`, else when iteration does, and covers the whole answer. A set `cancel` ends
        the stream at the next piece, which closes the connection."""
        kwargs = self._request(messages, json_schema, max_tokens, temperature, seed)
        deadline = Deadline.after(self.timeout_s, started_at)
        for piece in iterate_before(deadline, self._pieces(kwargs, deadline), lambda: self._timed_out(deadline)):
            yield piece
            if cancel is not None and cancel.is_set():
                return

    def _pieces(self, kwargs: dict[str, Any], deadline: Deadline) -> Iterator[str]:
        """The streamed text pieces (run in the worker thread), each event read within size bounds and checked for
        the completion shape (assistant/llm/bounded_reply.py)."""
        completions = self._client.chat.completions.with_streaming_response
        with contextlib.ExitStack() as held:
            response = self._call(
                lambda timeout: held.enter_context(completions.create(stream=True, timeout=timeout, **kwargs)),
                deadline,
            )
            content_type = response.headers.get("content-type", "")
            if not content_type.startswith("text/event-stream"):
                raise self._malformed(f"a {content_type or 'untyped'} body instead of an event stream")
            try:
                for data in event_data(response.iter_bytes()):
                    if data.strip() == "[DONE]":
                        return
                    piece = _choice_text(decode_json(data), "delta")
                    if piece is None:
                        raise self._malformed(data[:EXCERPT_CHARS])
                    if piece:
                        yield piece
            except httpx2.TimeoutException as exc:
                raise self._timed_out(deadline) from exc
            except httpx2.HTTPError as exc:
                raise BackendUnavailable(f"lost the connection to {self.base_url}: {exc}") from exc
            except MalformedReply as exc:
                raise self._malformed(exc) from exc


def _field(value: Any, name: str) -> Any:
    """`value[name]` of decoded JSON, `value.name` of the client's stream events (whose lenient parsing
    leaves plain values where a server sent another shape); None when absent."""
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def _excerpt(response: Any) -> str:
    """The beginning of what the server sent, for the error message."""
    if isinstance(response, openai.BaseModel):
        response = response.model_dump(exclude_none=True, warnings=False)
    return json.dumps(response, default=str)[:EXCERPT_CHARS]


def _choice_text(response: Any, part: str) -> str | None:
    """The text of the first choice's `part` (`message`, or `delta` in a stream; "" when a choice carries no
    text, e.g. a stream's final event), or None when the response does not have the completion shape."""
    choices = _field(response, "choices")
    if not isinstance(choices, list):
        return None
    if not choices:
        return ""
    container = _field(choices[0], part)
    if not isinstance(container, dict | openai.BaseModel):
        return None
    content = _field(container, "content")
    if content is None:
        return ""
    return content if isinstance(content, str) else None
