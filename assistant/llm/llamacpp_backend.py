"""Embedded LLM: a GGUF model run in-process by llama-cpp-python, the default when no server is configured.

Loading a model takes seconds and hundreds of MB, so each file is loaded once per process and shared; a lock
serialises calls because a llama.cpp context is not thread-safe (the chat app serves several residents).
Structured output uses llama-cpp-python's JSON-schema grammar. The timeout is a deadline for the whole call:
waiting for the shared model, reading the prompt (interrupted by llama.cpp's abort callback) and generating
(checked after every token). With a `prefix_dir`, the evaluated system prompt is kept on disk
(assistant/llm/llamacpp_prefix.py), so a new process reads only the question and its references.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.llm.base import (
    BackendRejected,
    BackendTimeout,
    BackendUnavailable,
    JsonSchema,
    LLMResult,
    Message,
)
from assistant.llm.deadline import Deadline
from assistant.llm.llamacpp_prefix import PrefixSource, PrefixStates, shared_prefix

if TYPE_CHECKING:
    from llama_cpp import Llama


DEFAULT_N_CTX = 4096
INSTALL_HINT = (
    "llama-cpp-python is not installed: run `make llm-embedded`, or "
    "pip install --no-cache-dir llama-cpp-python==0.3.36 (built for this CPU)"
)


#: System prompts whose prefix tokens a loaded model remembers (the prompts of prompts/ and a few custom ones).
MAX_PREFIXES = 8


@dataclass
class _Loaded:
    """A loaded model shared by every caller; `lock` is held for a whole generation."""

    llm: Llama
    model_id: str
    path: Path
    lock: threading.Lock
    prompt_deadline: float = math.inf  # monotonic time at which llama.cpp abandons the prompt it is reading
    cancel: threading.Event | None = None  # the running call's Stop: llama.cpp abandons the prompt when it is set
    _abort_callback: Any = field(default=None, repr=False)  # kept referenced while llama.cpp may call it
    #: (system message, next role) -> its shared prefix tokens, and folder -> saved states: the chat template is
    #: rendered and tokenized twice per prefix, so once per system prompt, not once per question.
    _prefixes: dict[tuple[str, ...], list[int]] = field(default_factory=dict, repr=False)
    _states: dict[Path, PrefixStates] = field(default_factory=dict, repr=False)

    def prefix_state(self, folder: Path, messages: Sequence[Message]) -> PrefixSource:
        """Leave the context holding the messages' shared system-prompt prefix (see assistant.llm.llamacpp_prefix).
        Called under `lock`."""
        key = tuple(m["role"] for m in messages[:2]) + tuple(m["content"] for m in messages[:1])
        if key not in self._prefixes:
            if len(self._prefixes) >= MAX_PREFIXES:
                self._prefixes.clear()
            self._prefixes[key] = shared_prefix(self.llm, messages)
        if folder not in self._states:
            self._states[folder] = PrefixStates(folder, self.path)
        return self._states[folder].prepare(self.llm, self._prefixes[key])

    def _abandon(self) -> bool:
        """Whether llama.cpp should stop reading the prompt: the deadline passed, or the caller cancelled."""
        return time.monotonic() > self.prompt_deadline or (self.cancel is not None and self.cancel.is_set())

    def interrupt_prompt_at(self, deadline: float | None) -> None:
        """Let llama.cpp abort the prompt evaluation (`llama_decode` then fails) once `deadline` passes; None
        removes the check. It is a Python call from every step of the compute graph, which costs generation
        speed, so it is only installed while a prompt is read: tokens are checked one by one instead."""
        import ctypes

        import llama_cpp

        if deadline is None and self.prompt_deadline == math.inf:
            return  # nothing installed: the call per generated token stays free
        if self._abort_callback is None:
            self._abort_callback = llama_cpp.ggml_abort_callback(lambda _data: self._abandon())
        self.prompt_deadline = math.inf if deadline is None else deadline
        callback = self._abort_callback if deadline is not None else ctypes.cast(None, llama_cpp.ggml_abort_callback)
        llama_cpp.llama_set_abort_callback(self.llm.ctx, callback, None)


_CACHE: dict[tuple[str, int, int], _Loaded] = {}
_CACHE_LOCK = threading.Lock()


def _load(gguf: str, n_ctx: int, n_threads: int) -> _Loaded:
    """Resolve and load a GGUF once per (file, n_ctx, threads); later calls reuse it."""
    from models.gguf import GGUFNotAvailable, resolve

    try:
        model = resolve(gguf)
    except GGUFNotAvailable as exc:
        raise BackendUnavailable(str(exc)) from exc
    key = (str(model.path), n_ctx, n_threads)
    with _CACHE_LOCK:
        if key not in _CACHE:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise BackendUnavailable(INSTALL_HINT) from exc
            try:
                llm = Llama(model_path=str(model.path), n_ctx=n_ctx, n_threads=n_threads, seed=0, verbose=False)
            except (ValueError, RuntimeError) as exc:
                raise BackendUnavailable(f"llama.cpp could not load {model.path}: {exc}") from exc
            _CACHE[key] = _Loaded(llm, model.model_id, model.path, threading.Lock())
        return _CACHE[key]


class LlamaCppBackend:
    """`LLM` over llama-cpp-python. `gguf` is `qwen1.5b`, `smollm2` or a .gguf path (see models/gguf.py)."""

    def __init__(
        self,
        gguf: str,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int = 2,
        timeout_s: float = 120.0,
        constrained: bool = True,
        prefix_dir: Path | None = None,
    ) -> None:
        self.gguf = gguf
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.timeout_s = timeout_s
        self.constrained = constrained
        self.prefix_dir = prefix_dir
        #: Where the last call's prompt prefix came from (memory, disk, built, none): the benchmark reports it.
        self.last_prefix: PrefixSource = "none"

    def _loaded(self) -> _Loaded:
        return _load(self.gguf, self.n_ctx, self.n_threads)

    @property
    def model_id(self) -> str:
        return self._loaded().model_id

    def identity(self) -> dict[str, str]:
        """The GGUF's name and SHA-256: pinned for the packaged models (models/gguf.py), else hashed once (cached by
        file identity, models/file_hash.py)."""
        from models.file_hash import cached_sha256
        from models.gguf import MODELS, GGUFNotAvailable, resolve

        try:
            model = resolve(self.gguf)
        except GGUFNotAvailable:
            return {"backend": "embedded", "model": self.gguf, "sha256": "unavailable"}
        packaged = MODELS.get(self.gguf)
        digest = packaged.sha256 if packaged else cached_sha256(model.path)
        return {"backend": "embedded", "model": model.model_id, "sha256": digest}

    @property
    def context_window(self) -> int:
        return int(self._loaded().llm.n_ctx())

    def count_tokens(self, text: str) -> int:
        return len(self._loaded().llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def _generate(
        self,
        messages: Sequence[Message],
        json_schema: JsonSchema | None,
        max_tokens: int,
        temperature: float,
        seed: int,
        cancel: threading.Event | None = None,
        started_at: float | None = None,
    ) -> Iterator[str]:
        """Stream text pieces under the model's lock, all within one deadline (from `started_at`, else from the
        first `next`); a set
        `cancel` ends the stream quietly, checked by the same abort callback and after every piece.

        llama-cpp-python has no timeout, and an exception raised inside its sampling callbacks is swallowed
        by ctypes, so generation always streams and the deadline is checked after every piece; closing the
        stream stops generation. The prompt, read before the first piece, is cut off by llama.cpp's abort
        callback instead, and the wait for a model busy with another request is bounded too.
        """
        deadline = Deadline.after(self.timeout_s, started_at)
        loaded = self._loaded()
        kwargs: dict[str, Any] = {
            "messages": [dict(m) for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "seed": seed,
            "stream": True,
        }
        if json_schema is not None and self.constrained:
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema}
        if not loaded.lock.acquire(timeout=deadline.remaining()):
            raise BackendTimeout(
                f"the embedded model was busy with other requests for all of the {self.timeout_s:g} s allowed"
            )
        try:
            loaded.cancel = cancel
            loaded.interrupt_prompt_at(deadline.end)
            if self.prefix_dir is not None:
                self.last_prefix = loaded.prefix_state(self.prefix_dir, messages)
            yield from self._pieces(loaded, loaded.llm.create_chat_completion(**kwargs), deadline, cancel)
        except ValueError as exc:  # llama-cpp-python raises ValueError for a prompt over n_ctx
            raise BackendRejected(f"the embedded model refused the prompt: {exc}") from exc
        except RuntimeError as exc:  # llama_decode failed: aborted (deadline, cancel), or no room left in memory
            if cancel is not None and cancel.is_set():
                return
            if deadline.passed:
                raise BackendTimeout(
                    f"the embedded model did not finish reading the prompt within {self.timeout_s:g} s"
                ) from exc
            raise BackendRejected(f"the embedded model failed: {exc}") from exc
        finally:
            loaded.interrupt_prompt_at(None)
            loaded.cancel = None
            loaded.lock.release()

    def _pieces(
        self, loaded: _Loaded, chunks: Generator[Any, None, None], deadline: Deadline, cancel: threading.Event | None
    ) -> Iterator[str]:
        """The text of llama.cpp's streamed `chunks`, checked after every one: a set `cancel` closes the stream
        quietly, a passed `deadline` closes it with BackendTimeout. Called under the model's lock."""
        for chunk in chunks:
            loaded.interrupt_prompt_at(None)  # the prompt is read once the first piece is out
            piece = chunk["choices"][0]["delta"].get("content")
            if piece:
                yield piece
            if cancel is not None and cancel.is_set():
                chunks.close()
                return
            if deadline.passed:
                chunks.close()
                raise BackendTimeout(f"the embedded model did not finish within {self.timeout_s:g} s")

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
        start = time.monotonic()
        pieces: list[str] = []
        timings: dict[str, float] = {}
        for piece in self._generate(messages, json_schema, max_tokens, temperature, seed, started_at=started_at):
            if not pieces:
                timings["first_token"] = time.monotonic() - start  # the prompt read: what prefix reuse shortens
            pieces.append(piece)
        total = time.monotonic() - start
        # llama-cpp-python streams one token per piece, so the count is the completion length.
        usage = {"completion_tokens": len(pieces)}
        timings |= {"total": total, "tokens_per_s": len(pieces) / total if total > 0 else 0.0}
        return LLMResult(text="".join(pieces), model_id=self.model_id, timings=timings, usage=usage)

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
        return self._generate(messages, json_schema, max_tokens, temperature, seed, cancel, started_at)
