"""Several residents at once: 10 concurrent chat requests through `gradio_client` on loopback, all answered,
none lost, none given another resident's answer.

Each request comes from its own client (its own session, as ten browsers would), carries a unique tag, and
must get back its own question and the report its finding was taken from. The server runs with a
concurrency limit below 10, so the queue is exercised. The search-only variant needs no LLM; the LLM variant
(embedded SmolLM2, one shared model answering in turn) is marked slow.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from chat_fixtures import CHAT_REPORTS, FIRST_INDEX, MARKUP_REPORT, build_chat_index, served
from llm_fixtures import require_embedded_smollm2, smollm2_settings

from assistant.chat.service import MODE_ANSWER, MODE_SEARCH, ChatConfig
from assistant.settings import Settings
from models.paths import DataPaths

REQUESTS = 10
CONCURRENCY = 4
PLAIN_REPORTS = [r for r in CHAT_REPORTS if r is not MARKUP_REPORT]


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory, minilm) -> Path:
    return build_chat_index(tmp_path_factory.mktemp("chat-load") / "index", minilm)


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory, index_dir: Path) -> Iterator[str]:
    require_embedded_smollm2()
    home = tmp_path_factory.mktemp("chat-load-home")
    config = ChatConfig(
        Settings(paths=DataPaths(home=home), llm=smollm2_settings()),
        indexes=(index_dir,),
        concurrency=CONCURRENCY,
        max_tokens=96,
    )
    with served(config) as url:
        yield url


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def _one_resident(url: str, i: int, mode: str) -> tuple[int, str, Any, str, float]:
    """One resident's request from a fresh client; returns (i, question, conversation, cards, seconds)."""
    from gradio_client import Client

    report = PLAIN_REPORTS[i % len(PLAIN_REPORTS)]
    question = f"{report.findings} (resident {i})"
    start = time.monotonic()
    client = Client(url, verbose=False)
    conversation, cards, _notice, _box = client.predict(
        question, [], mode, "findings", 1, True, FIRST_INDEX, "dense", "Any", "Any", "", "", api_name="/ask"
    )
    return i, question, conversation, cards, time.monotonic() - start


def _run_all(url: str, mode: str) -> list[tuple[int, str, Any, str, float]]:
    with ThreadPoolExecutor(max_workers=REQUESTS) as pool:
        futures = [pool.submit(_one_resident, url, i, mode) for i in range(REQUESTS)]
        return [f.result(timeout=600) for f in futures]


def _check_each_got_its_own_answer(results: list[tuple[int, str, Any, str, float]], answered: str) -> None:
    assert sorted(r[0] for r in results) == list(range(REQUESTS)), "a request was lost"
    for i, question, conversation, cards, _seconds in results:
        assert [m["role"] for m in conversation] == ["user", "assistant"], f"resident {i}: {conversation}"
        assert _text(conversation[0]) == question, f"resident {i} got another session's conversation"
        assert answered in _text(conversation[1]), f"resident {i}: {_text(conversation[1])}"
        expected = PLAIN_REPORTS[i % len(PLAIN_REPORTS)].id
        assert f'data-report-id="{expected}"' in cards, f"resident {i} did not get report {expected}"


def test_ten_concurrent_searches_are_all_answered(app_url: str) -> None:
    results = _run_all(app_url, MODE_SEARCH)
    _check_each_got_its_own_answer(results, "Search only")


@pytest.mark.slow
def test_ten_concurrent_llm_answers_are_all_answered(app_url: str) -> None:
    results = _run_all(app_url, MODE_ANSWER)
    _check_each_got_its_own_answer(results, "smollm2")
    slowest = max(r[4] for r in results)
    print(f"10 concurrent LLM answers: slowest {slowest:.1f} s")
