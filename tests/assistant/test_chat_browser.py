"""The chat in a real browser: Debian's Chromium driven by Playwright against the app on 127.0.0.1.

Real MiniLM index (fixture reports) and the real embedded SmolLM2. A resident types a finding, the answer and
the report cards appear; search only, markup in a report, empty input and "New case" are checked on the page.
The screenshot is saved under the test's output folder; docs/chat.png (the README's picture) is written
only when it is missing or RADSEARCH_UPDATE_SCREENSHOT=1, so test runs do not keep changing a committed file.

Needs `apt-get install chromium` and `pip install -e .[browser]` (Playwright's own browser download is not
used: it needs the internet). Skipped, saying which is missing, otherwise.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from chat_fixtures import CHAT_REPORTS, EFFUSION_QUERY, build_chat_index, served
from llm_fixtures import require_embedded_smollm2, smollm2_settings

from assistant.chat.render import score_label
from assistant.chat.service import ChatConfig
from assistant.rag import answer_defaults
from assistant.settings import Settings
from models.paths import DataPaths
from retriever.search.methods import DEFAULT_METHOD

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ANSWER_TIMEOUT_MS = 180_000  # SmolLM2 answers in seconds; generous for a loaded CI machine
CHAT = "#rs-chat"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("Playwright is not installed: pip install -e '.[browser]'")
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is absent: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory, minilm) -> Iterator[str]:
    require_embedded_smollm2()
    home = tmp_path_factory.mktemp("chat-home")
    index = build_chat_index(tmp_path_factory.mktemp("chat-browser") / "fixture-index", minilm)
    settings = Settings(paths=DataPaths(home=home), llm=smollm2_settings())  # offers only the test's index
    with served(ChatConfig(settings, indexes=(index,), max_tokens=160)) as url:
        yield url


@pytest.fixture
def page(browser, app_url: str) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.goto(app_url)
    page.wait_for_selector("#rs-input textarea")
    yield page
    context.close()


def _ask(page, text: str) -> None:
    page.fill("#rs-input textarea", text)
    page.click("#rs-ask")


def _answer_finished(page) -> None:
    """Wait until the answer is complete: the provenance line (the model id, or "no language model" for the default
    answer from the evidence) closes every answer."""
    page.wait_for_function(
        f"""() => {{
            const chat = document.querySelector('{CHAT}');
            return chat && ['smollm2', 'no language model', 'No LLM answer'].some(t => chat.innerText.includes(t))
                && !chat.innerText.includes('▍');
        }}""",
        timeout=ANSWER_TIMEOUT_MS,
    )


def test_resident_types_a_finding_and_sees_answer_and_reports(page, tmp_path: Path) -> None:
    assert "not a diagnosis" in page.inner_text(".rs-banner")
    _ask(page, EFFUSION_QUERY)
    page.wait_for_selector("#rs-reports .rs-card", timeout=ANSWER_TIMEOUT_MS)
    _answer_finished(page)
    chat = page.inner_text(CHAT)
    assert EFFUSION_QUERY in chat and "Most likely diagnosis" in chat
    cards = page.locator("#rs-reports .rs-card")
    assert cards.count() == min(answer_defaults.K, len(CHAT_REPORTS))  # the chat's default number of reports
    assert "similar reports affirm" in page.inner_text("#rs-reports").lower()  # the evidence panel, above the cards
    first = cards.first
    text = first.inner_text().lower()  # the label is upper-cased by CSS
    label = score_label(DEFAULT_METHOD)  # the chat searches with the product's default method
    assert "impression" in text and label in text and "small right pleural effusion" in text
    assert first.get_attribute("data-report-id")
    findings = first.locator("details.rs-findings")
    assert not findings.evaluate("d => d.open")
    findings.locator("summary").click()
    assert findings.evaluate("d => d.open") and findings.locator("p").is_visible()

    shot = tmp_path / "chat.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    docs = REPO / "docs" / "chat.png"
    if not docs.exists() or os.environ.get("RADSEARCH_UPDATE_SCREENSHOT") == "1":
        docs.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, docs)


def test_search_only_shows_report_markup_as_text(page) -> None:
    page.get_by_label("Search only (no LLM)").check()
    page.get_by_label("Similar findings").check()
    _ask(page, "Fracture of the left seventh rib")
    card = page.locator('#rs-reports .rs-card[data-report-id="xr-markup-<b>007</b>"]')
    card.wait_for(timeout=60_000)
    assert "<img src=x" in card.inner_text() and "**not bold**" in card.inner_text()
    assert page.locator("#rs-reports img, #rs-reports script, #rs-reports b").count() == 0
    assert page.title() != "pwned"
    assert "Search only" in page.inner_text(CHAT)


def test_empty_input_and_new_case_give_clear_page_states(page) -> None:
    page.click("#rs-ask")
    page.wait_for_selector("#rs-notice .rs-warning")
    assert "Type a finding first" in page.inner_text("#rs-notice")

    page.get_by_label("Search only (no LLM)").check()
    _ask(page, EFFUSION_QUERY)
    page.wait_for_selector("#rs-reports .rs-card", timeout=60_000)
    page.click("#rs-new-case")
    page.wait_for_selector("#rs-reports .rs-cards-empty")
    assert EFFUSION_QUERY not in page.inner_text(CHAT)
