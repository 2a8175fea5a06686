"""The embedded model's system prompt state on disk: a new context reads only the question, answers unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_fixtures import require_embedded_smollm2

from assistant.llm import llamacpp_backend
from assistant.llm.llamacpp_backend import LlamaCppBackend
from assistant.llm.llamacpp_prefix import PrefixStates, shared_prefix
from prompts import load

pytestmark = pytest.mark.models  # real CLI processes or a real model: not the fast tier

N_CTX = 1536  # a context size no other test loads, so dropping it from the cache gives a fresh context
SYSTEM = load("diagnosis_rag").system
QUESTION = "<findings>\nBlunting of the right costophrenic angle with a meniscus sign.\n</findings>\nDiagnosis?"
MESSAGES = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]


def _fresh(prefix_dir: Path | None) -> LlamaCppBackend:
    """A backend whose model is loaded anew: an empty context, as in a new `assistant ask` process."""
    require_embedded_smollm2()
    backend = LlamaCppBackend(
        "smollm2", n_ctx=N_CTX, n_threads=1, timeout_s=600, constrained=False, prefix_dir=prefix_dir
    )
    loaded = backend._loaded()
    llamacpp_backend._CACHE.pop((str(loaded.path), N_CTX, 1))
    return backend


def test_a_saved_prefix_is_loaded_by_a_new_context_and_the_answer_is_unchanged(tmp_path: Path) -> None:
    plain = _fresh(None).complete(MESSAGES, max_tokens=16).text
    building = _fresh(tmp_path)
    assert building.complete(MESSAGES, max_tokens=16).text == plain
    assert building.last_prefix == "built" and len(list(tmp_path.glob("*.kv"))) == 1
    restored = _fresh(tmp_path)
    assert restored.complete(MESSAGES, max_tokens=16).text == plain
    assert restored.last_prefix == "disk"
    other_question = [MESSAGES[0], {"role": "user", "content": "<findings>\nCardiomegaly.\n</findings>"}]
    restored.complete(other_question, max_tokens=4)
    assert restored.last_prefix == "memory"  # the same context keeps it: nothing read again


def test_the_prefix_is_the_system_part_only(tmp_path: Path) -> None:
    llm = _fresh(tmp_path)._loaded().llm
    prefix = shared_prefix(llm, MESSAGES)
    text = llm.detokenize(prefix).decode("utf-8")
    assert SYSTEM[-60:] in text and "costophrenic" not in text
    history = [
        MESSAGES[0],
        {"role": "user", "content": "<findings>\nA secret finding.\n</findings>"},
        {"role": "assistant", "content": "Pneumonia."},
        MESSAGES[1],
    ]
    assert shared_prefix(llm, history) == prefix  # a chat's history (findings) never becomes part of the state
    assert shared_prefix(llm, MESSAGES[1:]) == []  # no system message: nothing to keep


def test_an_unreadable_state_file_is_rebuilt(tmp_path: Path) -> None:
    backend = _fresh(tmp_path)
    loaded = backend._loaded()
    path = PrefixStates(tmp_path, loaded.path).path_for(loaded.llm, shared_prefix(loaded.llm, MESSAGES))
    path.write_bytes(b"not a llama.cpp state")
    answer = backend.complete(MESSAGES, max_tokens=8)
    assert answer.text and backend.last_prefix == "built"
    assert path.stat().st_size > 1000  # replaced by a real state


def test_without_a_folder_nothing_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    backend = _fresh(None)
    backend.complete(MESSAGES, max_tokens=4)
    assert backend.last_prefix == "none" and not list(tmp_path.rglob("*.kv"))


def test_the_prefix_tokens_are_computed_once_per_system_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def counted(llm, messages):  # the real function, counted
        calls.append(1)
        return shared_prefix(llm, messages)

    monkeypatch.setattr(llamacpp_backend, "shared_prefix", counted)
    backend = _fresh(tmp_path)
    for finding in ("Cardiomegaly.", "Pneumothorax.", "Pleural effusion."):
        backend.complete([MESSAGES[0], {"role": "user", "content": finding}], max_tokens=2)
    assert len(calls) == 1 and backend.last_prefix == "memory"
    backend.complete([{"role": "system", "content": "Answer briefly."}, MESSAGES[1]], max_tokens=2)
    assert len(calls) == 2  # another system prompt: its own prefix
