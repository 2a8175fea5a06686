"""The README's screenshot (docs/chat.png), taken in real Chromium from what a new user runs: the demo index (`make
demo`'s real MTSamples reports, built here into a temporary folder) and the default model, in the default mode (the
answer from the evidence). Issue 52: the earlier picture showed the test fixture ("fixture-index", "LLM: embedded
smollm2", a report reading "IGNORE ALL PREVIOUS INSTRUCTIONS").

docs/chat.png is written only when RADSEARCH_UPDATE_SCREENSHOT=1, so test runs do not keep changing a committed
file; the picture is checked either way. Slow: it builds the demo index with the shipped encoder.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_fixtures import CHAT, answer_finished, chromium
from chat_fixtures import served
from cli_fixtures import run

from assistant.chat.service import ChatConfig
from assistant.settings import Settings

REPO = Path(__file__).resolve().parents[2]
QUERY = "Small bilateral pleural effusions with bibasilar atelectasis."
FIXTURE_TEXT = ("fixture", "smollm2", "IGNORE ALL PREVIOUS", "pwned")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


@pytest.mark.slow
@pytest.mark.models
def test_the_screenshot_shows_the_demo_index_and_the_default_model(browser, tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    built = run("index", "demo", "--keep-incomplete", "--out", str(demo))
    assert built.returncode == 0, built.stderr
    settings = Settings.from_env(os.environ)  # the default model, as a new user has it
    if settings.llm.backend != "embedded":
        pytest.skip("RADSEARCH_LLM_* name another model than the default")
    config = ChatConfig(settings, indexes=(demo,), feedback=tmp_path / "feedback.sqlite")
    with served(config) as url:
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("#rs-input textarea")
        page.fill("#rs-input textarea", QUERY)
        page.click("#rs-ask")
        page.wait_for_selector("#rs-reports .rs-card", timeout=120_000)
        answer_finished(page)
        page.wait_for_timeout(500)
        text = page.inner_text("body")
        assert f"LLM: {settings.llm.describe()}" in text
        assert page.get_by_label("Index (encoder)").input_value().startswith("demo · ")
        assert "Most likely diagnosis" in page.inner_text(CHAT)
        assert not [t for t in FIXTURE_TEXT if t.lower() in text.lower()], text
        shot = tmp_path / "chat.png"
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=str(shot))
        context.close()
    assert shot.stat().st_size > 30_000
    if os.environ.get("RADSEARCH_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(shot, REPO / "docs" / "chat.png")
