"""Which LLM backend to use and how, from environment variables and command-line flags.

The embedded model is the default so `assistant ask` works on a laptop with nothing running; setting
`RADSEARCH_LLM_BASE_URL` switches to an OpenAI-compatible server (vLLM, llama.cpp server, Ollama). Flags win
over the environment, which wins over the defaults.

Environment: RADSEARCH_LLM_BACKEND (embedded|openai), RADSEARCH_LLM_BASE_URL, RADSEARCH_LLM_MODEL,
RADSEARCH_LLM_API_KEY, RADSEARCH_LLM_GGUF (qwen1.5b|smollm2|FILE.gguf), RADSEARCH_LLM_TIMEOUT (seconds),
RADSEARCH_LLM_RETRIES, RADSEARCH_LLM_STRUCTURED (response_format|vllm|off; `off` also turns off the
embedded model's JSON grammar, which cost 3x generation speed with Qwen's 151k vocabulary here),
RADSEARCH_LLM_CONTEXT (tokens), RADSEARCH_LLM_THREADS.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Literal

from assistant.llm import LLM

Backend = Literal["embedded", "openai"]
Structured = Literal["response_format", "vllm", "off"]

DEFAULT_GGUF = "qwen1.5b"


@dataclass(frozen=True)
class LLMSettings:
    """Everything needed to build a backend. `model` is the served model name (openai) or a GGUF name/path."""

    backend: Backend = "embedded"
    model: str = DEFAULT_GGUF
    base_url: str | None = None
    api_key: str = "not-needed"
    timeout_s: float = 120.0
    max_retries: int = 2
    structured: Structured = "response_format"
    context_tokens: int | None = None
    n_threads: int = 2

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> LLMSettings:
        """Read RADSEARCH_LLM_* variables; a base URL without an explicit backend means `openai`."""
        env = dict(os.environ) if env is None else env
        base_url = env.get("RADSEARCH_LLM_BASE_URL") or None
        backend = env.get("RADSEARCH_LLM_BACKEND") or ("openai" if base_url else "embedded")
        if backend not in ("embedded", "openai"):
            raise ValueError(f"RADSEARCH_LLM_BACKEND must be embedded or openai, not {backend!r}")
        structured = env.get("RADSEARCH_LLM_STRUCTURED", "response_format")
        if structured not in ("response_format", "vllm", "off"):
            raise ValueError(f"RADSEARCH_LLM_STRUCTURED must be response_format, vllm or off, not {structured!r}")
        if backend == "openai":
            model = env.get("RADSEARCH_LLM_MODEL", "")
        else:
            model = env.get("RADSEARCH_LLM_GGUF") or env.get("RADSEARCH_LLM_MODEL") or DEFAULT_GGUF
        context = env.get("RADSEARCH_LLM_CONTEXT")
        return cls(
            backend=backend,  # type: ignore[arg-type]
            model=model,
            base_url=base_url,
            api_key=env.get("RADSEARCH_LLM_API_KEY", "not-needed"),
            timeout_s=float(env.get("RADSEARCH_LLM_TIMEOUT", "120")),
            max_retries=int(env.get("RADSEARCH_LLM_RETRIES", "2")),
            structured=structured,  # type: ignore[arg-type]
            context_tokens=int(context) if context else None,
            n_threads=int(env.get("RADSEARCH_LLM_THREADS", "2")),
        )

    def with_flags(self, *, backend: str | None = None, model: str | None = None) -> LLMSettings:
        """Apply CLI flags. Switching backend by flag drops a model name that belongs to the other backend."""
        settings = self
        if backend is not None and backend != self.backend:
            if backend not in ("embedded", "openai"):
                raise ValueError(f"--backend must be embedded or openai, not {backend!r}")
            default_model = DEFAULT_GGUF if backend == "embedded" else os.environ.get("RADSEARCH_LLM_MODEL", "")
            settings = replace(settings, backend=backend, model=default_model)  # type: ignore[arg-type]
        if model:
            settings = replace(settings, model=model)
        return settings


def make_llm(settings: LLMSettings) -> LLM:
    """Build the configured backend. Cheap: the embedded model loads on first use and is cached per file."""
    if settings.backend == "openai":
        from assistant.openai_backend import OpenAIBackend

        return OpenAIBackend.from_settings(settings)
    from assistant.llamacpp_backend import LlamaCppBackend

    return LlamaCppBackend.from_settings(settings)
