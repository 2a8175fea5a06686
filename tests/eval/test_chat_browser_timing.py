"""The chat timed where a resident sees it (eval/perf/chat_browser.py, ask_vs_chat's `chat_browser` side): a real
`assistant chat` process, Chromium, the page's own clock. Skipped without Playwright or Chromium."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from chat_fixtures import EFFUSION_QUERY, build_chat_index

from assistant.chat.service import MODE_EVIDENCE
from eval.perf.chat_browser import available, browser_run, chat_page
from models.paths import DataPaths

pytestmark = pytest.mark.models  # a real chat process, a real encoder and a real browser


def test_the_page_clock_times_each_question_from_enter_to_the_diagnosis(tmp_path: Path, minilm) -> None:
    if (missing := available()) is not None:
        pytest.skip(missing)
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(DataPaths.from_env(os.environ).models)
    index = build_chat_index(home / "indexes" / "fixture", minilm)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RADSEARCH_")} | {"RADSEARCH_HOME": str(home)}
    with chat_page(index, env, MODE_EVIDENCE) as page:
        first = browser_run(page, EFFUSION_QUERY)
        second = browser_run(page, "Enlarged cardiac silhouette.")  # a new case: only its own answer is timed
        chat = page.inner_text("#rs-chat")
    for run in (first, second):
        assert 0 < run["ttft_s"] <= run["total_s"] < 120
    assert chat.count("Most likely diagnosis") == 1  # "New case" cleared the first question's answer
