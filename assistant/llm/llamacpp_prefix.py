"""The embedded model's evaluated system prompt, kept on disk so a new process reads only the question.

llama-cpp-python already reuses the longest token prefix a prompt shares with the previous call of the same
context, so the chat and a benchmark (one process, many questions) read the system prompt once. A one-shot
command (`assistant ask`) starts with an empty context and would spend seconds of its time to first token on
the same few hundred system-prompt tokens every time. So the KV state after the prompt's shared prefix (every
message before the question, with the chat template's framing) is saved once with llama.cpp's own state file and
loaded by later processes; llama-cpp-python's prefix match then evaluates only the question and its references.

A state is only valid for the exact tokens and model it was made from, so the file name is a hash of the model
file (path, size, modification time), the context size, the llama-cpp-python version and the prefix tokens; a
file that does not load (another llama.cpp build, a truncated write) is rebuilt.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from llama_cpp import Llama

    from assistant.llm.base import Message

#: Files kept per folder: a state is a few MB per hundred tokens; prompts change rarely.
KEEP_STATES = 16
_PROBE = "\u2063"  # a message content no real one equals: where the two prompts part, the content begins

PrefixSource = Literal["memory", "disk", "built", "none"]


def shared_prefix(llm: Llama, messages: Sequence[Message]) -> list[int]:
    """The prompt tokens every conversation that opens with this system message shares: the formatted prompt up
    to where the next message's content begins. Only the system message: a chat's history holds findings, which
    must not be written to disk. Empty without a system message or when the model's chat format is not its own
    GGUF template (the only formatting reproduced here)."""
    if (
        len(messages) < 2
        or messages[0]["role"] != "system"
        or llm.chat_format != "chat_template.default"
        or "tokenizer.chat_template" not in llm.metadata
    ):
        return []
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    model = llm._model
    eos, bos = model.token_eos(), model.token_bos()
    formatter = Jinja2ChatFormatter(
        template=llm.metadata["tokenizer.chat_template"],
        eos_token=model.token_get_text(eos) if eos != -1 else "",
        bos_token=model.token_get_text(bos) if bos != -1 else "",
    )

    def tokens(conversation: Sequence[Message]) -> list[int]:
        result = formatter(messages=[dict(m) for m in conversation])
        return llm.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)

    system, following = messages[0], messages[1]
    real = tokens([system, following])
    probe = tokens([system, {**following, "content": _PROBE}])
    common = 0
    for a, b in zip(real, probe, strict=False):
        if a != b:
            break
        common += 1
    return real[:common]


class PrefixStates:
    """Saved KV states of prompt prefixes in one folder (see the module docstring)."""

    def __init__(self, folder: Path, model_path: Path) -> None:
        self.folder = folder
        stat = model_path.stat()
        self._model_key = f"{model_path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"

    def path_for(self, llm: Llama, prefix: Sequence[int]) -> Path:
        import llama_cpp

        digest = hashlib.sha256(f"{self._model_key}:{llm.n_ctx()}:{llama_cpp.__version__}:".encode())
        digest.update(bytes((ctypes.c_int32 * len(prefix))(*prefix)))
        return self.folder / f"{digest.hexdigest()[:32]}.kv"

    def prepare(self, llm: Llama, prefix: Sequence[int]) -> PrefixSource:
        """Leave `llm` holding `prefix` evaluated: already in its context, loaded from disk, or evaluated now
        and saved. Must be called under the model's lock, before the prompt is generated from; a failure to
        read or write the folder only costs the saving."""
        if not prefix:
            return "none"
        if llm.n_tokens >= len(prefix) and list(llm.input_ids[: len(prefix)]) == list(prefix):
            return "memory"
        path = self.path_for(llm, prefix)
        if path.is_file() and _load(llm, path, prefix):
            os.utime(path)  # most recently used: the last to be pruned
            return "disk"
        llm.reset()
        llm.eval(list(prefix))
        _save(llm, path, prefix)
        self._prune()
        return "built"

    def _prune(self) -> None:
        """Keep the KEEP_STATES most recently used files."""
        try:
            states = sorted(self.folder.glob("*.kv"), key=lambda p: p.stat().st_mtime, reverse=True)
            for stale in states[KEEP_STATES:]:
                stale.unlink(missing_ok=True)
        except OSError:
            pass  # another process pruning at the same time


def _load(llm: Llama, path: Path, prefix: Sequence[int]) -> bool:
    """Restore a saved state; False (and an empty context) if it does not load or holds other tokens."""
    import llama_cpp

    capacity = llm.n_ctx()
    tokens = (llama_cpp.llama_token * capacity)()
    count = ctypes.c_size_t(0)
    loaded = llama_cpp.llama_state_load_file(llm.ctx, str(path).encode(), tokens, capacity, ctypes.byref(count))
    if loaded and list(tokens[: count.value]) == list(prefix):
        llm.input_ids[: count.value] = tokens[: count.value]
        llm.n_tokens = count.value
        llm._requires_eval = True  # the logits are not from a live decode: the question's tokens come next
        return True
    llm.reset()
    path.unlink(missing_ok=True)
    return False


def _save(llm: Llama, path: Path, prefix: Sequence[int]) -> None:
    """Write the context's state atomically (readers never see a partial file); a failure only costs the saving."""
    import llama_cpp

    from models.atomic import write_atomic

    tokens = (llama_cpp.llama_token * len(prefix))(*prefix)

    def write(temporary: Path) -> None:
        if not llama_cpp.llama_state_save_file(llm.ctx, str(temporary).encode(), tokens, len(prefix)):
            raise OSError(f"llama.cpp could not write {temporary}")

    with contextlib.suppress(OSError):  # a read-only or full disk: the next process evaluates the prefix itself
        write_atomic(path, write)
