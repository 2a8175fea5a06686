"""Build the configured LLM backend from the settings.

Kept apart from assistant/settings.py so the settings import no backend and the backends no settings: each backend
takes plain arguments, and this module is the one place that knows both.
"""

from __future__ import annotations

from assistant.llm.base import LLM
from assistant.settings import LLMSettings
from models.paths import DataPaths


def make_llm(settings: LLMSettings, paths: DataPaths) -> LLM:
    """The backend `settings` name; the embedded one keeps its evaluated system prompt under `paths.llm_state`.
    Cheap: the embedded model loads on first use and is cached per file."""
    if settings.backend == "openai":
        from assistant.llm.openai_backend import OpenAIBackend

        return OpenAIBackend(
            settings.base_url or "",
            settings.model,
            api_key=settings.api_key,
            timeout_s=settings.timeout_s,
            max_retries=settings.max_retries,
            structured=settings.structured,
            context_tokens=settings.context_tokens,
        )
    from assistant.llm.llamacpp_backend import DEFAULT_N_CTX, LlamaCppBackend

    return LlamaCppBackend(
        settings.model,
        n_ctx=settings.context_tokens or DEFAULT_N_CTX,
        n_threads=settings.n_threads,
        timeout_s=settings.timeout_s,
        constrained=settings.structured != "off",
        prefix_dir=paths.llm_state,
    )
