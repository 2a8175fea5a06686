"""Build the configured LLM backend from the LLM settings.

Kept apart from assistant/settings.py so the settings import no backend: this module is the one place that knows
both. The HTTP backend takes plain arguments; the embedded one still reads its settings object itself.
"""

from __future__ import annotations

from assistant.llm import LLM
from assistant.settings import LLMSettings


def make_llm(settings: LLMSettings) -> LLM:
    """The backend `settings` name. Cheap: the embedded model loads on first use and is cached per file."""
    if settings.backend == "openai":
        from assistant.openai_backend import OpenAIBackend

        return OpenAIBackend(
            settings.base_url or "",
            settings.model,
            api_key=settings.api_key,
            timeout_s=settings.timeout_s,
            max_retries=settings.max_retries,
            structured=settings.structured,
            context_tokens=settings.context_tokens,
        )
    from assistant.llamacpp_backend import LlamaCppBackend

    return LlamaCppBackend.from_settings(settings)
