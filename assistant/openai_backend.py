"""LLM over any OpenAI-compatible HTTP server: vLLM, llama.cpp server, Ollama (or OpenAI itself).

Retries are done here, not by the client, so they are bounded and visible: connection failures, 429 and
5xx are retried with exponential backoff; a timeout is not retried (it would multiply the wait) and
surfaces as `BackendTimeout`. Structured output is requested as `response_format` JSON schema (understood
by all three servers) or, for vLLM, through its own `structured_outputs` request field (vLLM >= 0.12;
the older `guided_json` was removed).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import openai

from assistant.llm import (
    BackendRejected,
    BackendTimeout,
    BackendUnavailable,
    JsonSchema,
    LLMError,
    LLMResult,
    Message,
)

if TYPE_CHECKING:
    from assistant.settings import LLMSettings, Structured

T = TypeVar("T")

DEFAULT_CONTEXT = 4096
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
            raise BackendUnavailable(
                "no server URL: set RADSEARCH_LLM_BASE_URL (e.g. http://127.0.0.1:8000/v1)"
            )
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

    @classmethod
    def from_settings(cls, settings: LLMSettings) -> OpenAIBackend:
        return cls(
            settings.base_url or "",
            settings.model,
            api_key=settings.api_key,
            timeout_s=settings.timeout_s,
            max_retries=settings.max_retries,
            structured=settings.structured,
            context_tokens=settings.context_tokens,
        )

    @property
    def model_id(self) -> str:
        return self.model

    @property
    def context_window(self) -> int:
        """Configured, else what vLLM reports as `max_model_len` in /v1/models, else a safe 4096."""
        if self._context_tokens is None:
            self._context_tokens = DEFAULT_CONTEXT
            try:
                for entry in self._call(lambda: self._client.models.list(timeout=min(self.timeout_s, 10.0))):
                    reported = getattr(entry, "max_model_len", None)
                    if entry.id == self.model and isinstance(reported, int):
                        self._context_tokens = reported
            except LLMError:
                pass  # the completion call reports the real problem; the budget stays conservative
        return self._context_tokens

    def count_tokens(self, text: str) -> int:
        """An over-estimate (1 token per 3 UTF-8 bytes) because the tokenizer lives on the server."""
        return math.ceil(len(text.encode("utf-8")) / 3)

    def _call(self, fn: Callable[[], T]) -> T:
        """Run one request with bounded retries, turning client errors into the project's typed errors."""
        for attempt in range(self.max_retries + 1):
            try:
                return fn()
            except openai.APITimeoutError as exc:
                raise BackendTimeout(f"{self.base_url} did not answer within {self.timeout_s:g} s") from exc
            except (openai.APIConnectionError, *_RETRYABLE) as exc:
                if attempt == self.max_retries:
                    raise BackendUnavailable(
                        f"LLM server {self.base_url} unavailable after {attempt + 1} attempts: {exc}"
                    ) from exc
                time.sleep(self.backoff_s * 2**attempt)
            except (openai.NotFoundError, openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise BackendUnavailable(
                    f"{self.base_url} refused model {self.model!r} ({exc.status_code}): check "
                    "RADSEARCH_LLM_MODEL and RADSEARCH_LLM_API_KEY"
                ) from exc
            except openai.APIStatusError as exc:
                raise BackendRejected(
                    f"{self.base_url} rejected the request ({exc.status_code}): {exc}"
                ) from exc
        raise AssertionError("unreachable: the loop returns or raises")

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
    ) -> LLMResult:
        kwargs = self._request(messages, json_schema, max_tokens, temperature, seed)
        start = time.monotonic()
        response = self._call(lambda: self._client.chat.completions.create(**kwargs))
        total = time.monotonic() - start
        usage: dict[str, int] = {}
        if response.usage is not None:
            usage = {
                "prompt_tokens": response.usage.prompt_tokens,
                "completion_tokens": response.usage.completion_tokens,
            }
        timings = {"total": total}
        if usage.get("completion_tokens"):
            timings["tokens_per_s"] = usage["completion_tokens"] / total
        text = (response.choices[0].message.content or "") if response.choices else ""
        return LLMResult(text=text, model_id=response.model or self.model, timings=timings, usage=usage)

    def stream(
        self,
        messages: Sequence[Message],
        *,
        json_schema: JsonSchema | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Iterator[str]:
        """Retries only cover opening the stream; a connection lost mid-answer is reported, not replayed."""
        kwargs = self._request(messages, json_schema, max_tokens, temperature, seed)
        chunks = self._call(lambda: self._client.chat.completions.create(stream=True, **kwargs))
        try:
            for chunk in chunks:
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content
        except openai.APITimeoutError as exc:
            raise BackendTimeout(f"{self.base_url} stopped sending within {self.timeout_s:g} s") from exc
        except openai.APIConnectionError as exc:
            raise BackendUnavailable(f"lost the connection to {self.base_url}: {exc}") from exc
