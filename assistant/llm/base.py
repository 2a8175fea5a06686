"""The one interface every LLM backend implements, and the errors callers degrade on.

The pipeline, the chat app and the benchmarks only see `LLM`, so an OpenAI-compatible server (vLLM, llama.cpp
server, Ollama) and the embedded llama-cpp-python model are interchangeable. Failures are typed so a caller
can fall back to retrieval-only results instead of showing a traceback.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable


class Message(TypedDict):
    """One chat message in the OpenAI shape (`system`, `user` or `assistant`)."""

    role: str
    content: str


JsonSchema = dict[str, Any]

#: How structured output is asked for: the OpenAI `response_format` JSON schema, vLLM's own `structured_outputs`
#: field, or not at all (`off` also turns off the embedded model's JSON grammar).
Structured = Literal["response_format", "vllm", "off"]


@dataclass(frozen=True)
class LLMResult:
    """A finished completion: `timings` in seconds (`total`, `tokens_per_s`), `usage` in tokens."""

    text: str
    model_id: str
    timings: dict[str, float] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)


class LLMError(RuntimeError):
    """Base class: the backend could not produce a completion. The message says what to do."""


class BackendUnavailable(LLMError):
    """The backend cannot be reached or loaded (server down, model missing, package not installed)."""


class BackendTimeout(LLMError):
    """The backend did not finish within the configured time."""


class BackendRejected(LLMError):
    """The backend answered but refused the request (bad parameters, context too long)."""


class BackendMalformed(LLMError):
    """The backend answered, but not with a completion (an HTML page, JSON of another shape, a truncated
    body): a proxy or a server of another kind is at the URL. Callers treat it like unparseable output."""


@runtime_checkable
class LLM(Protocol):
    """A chat model. `temperature=0` and a fixed `seed` make benchmark runs repeatable."""

    @property
    def model_id(self) -> str:
        """Stable name of the model that answers (recorded in every Answer and result file)."""
        ...

    def identity(self) -> dict[str, str]:
        """Who answers, known without loading the model or calling the server (an answer that timed out still says
        it): backend and model name, and the model file's SHA-256 or the server's address
        (assistant/rag/configuration.py)."""
        ...

    @property
    def context_window(self) -> int:
        """Tokens the model accepts for prompt + answer; the pipeline fits its prompt into this."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens `text` takes (exact for the embedded model, a conservative estimate for HTTP backends)."""
        ...

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
        """Generate one answer; with `json_schema`, constrain the output to it where the backend can.
        `started_at` (`time.monotonic()`) is when the caller's call began, before it asked `context_window` (for the
        HTTP backend a request of its own): the timeout counts from there, so the whole call has one deadline."""
        ...

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
        """Generate the same answer as `complete` (and within the same deadline, from `started_at` when given),
        yielding text pieces as they arrive. Once `cancel` is set the
        stream ends early (the resident pressed Stop): between pieces, and for the embedded model also while it
        reads the prompt, which can take many seconds on a busy CPU."""
        ...
