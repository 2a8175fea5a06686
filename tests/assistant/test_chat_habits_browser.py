"""The chat on a phone and the habits residents bring from other chats (issue 52), in real Chromium: no element covers
a report card or the answer at 390x844 and 1280x800 and the diagnosis is in view after asking; a citation in the
answer leads to its card; ArrowUp recalls the last question; Regenerate asks it again; Export after a follow-up keeps
the original findings; the print view leaves the controls out; and the sign-in page says what happened (wrong
password, locked out for N s, signed in as X, sign out).

The chat answers from the evidence (its default mode): MiniLM and Chromium only, no language model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_fixtures import CHAT, answer_finished, chromium
from chat_fixtures import EFFUSION_QUERY, build_chat_index, served

from assistant.chat.service import ChatConfig
from assistant.chat.sign_in_limit import SignInPolicy
from assistant.settings import LLMSettings, Settings
from models.paths import DataPaths

NO_MODEL = LLMSettings(backend="openai", base_url="http://127.0.0.1:9/v1", model="none", timeout_s=5, max_retries=0)
FOLLOW_UP = "Patient is 78 years old with fever."
DIAGNOSIS = f"{CHAT} [data-testid=bot] strong:has-text('Most likely diagnosis')"
#: The page's elements that must be on screen and uncovered: every card shown (not folded) and the answer.
CHECKED = "#rs-reports article.rs-card:not(details.rs-more article), #rs-chat [data-testid=bot]"
#: For each element of CHECKED, scrolled into view: what `elementFromPoint` hits at its centre, when not itself.
COVERED_JS = f"""() => [...document.querySelectorAll('{CHECKED}')].flatMap((element) => {{
    element.scrollIntoView({{block: 'center'}});
    const box = element.getBoundingClientRect();
    const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
    return element.contains(hit) ? [] : [[element.id || 'answer', hit ? (hit.id || hit.className) : 'nothing']];
}})"""


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, minilm) -> Path:
    return build_chat_index(tmp_path_factory.mktemp("habits") / "fixture-index", minilm)


def _config(index: Path, home: Path, **kwargs) -> ChatConfig:
    settings = Settings(paths=DataPaths(home=home), llm=NO_MODEL)
    return ChatConfig(settings, indexes=(index,), feedback=home / "feedback.sqlite", **kwargs)


@pytest.fixture(scope="module")
def app_url(index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(_config(index, tmp_path_factory.mktemp("habits-home"))) as url:
        yield url


@pytest.fixture
def page(browser, app_url: str) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    page = context.new_page()
    page.goto(app_url)
    page.wait_for_selector("#rs-input textarea")
    yield page
    context.close()


def _ask(page, text: str) -> None:
    page.fill("#rs-input textarea", text)
    page.click("#rs-ask")
    page.wait_for_function(f"() => document.querySelector('{CHAT}').innerText.includes({text!r})")
    answer_finished(page)
    page.wait_for_timeout(400)  # the steps after an answer: its feedback key, showing it, storing the conversation


def _in_view(page, selector: str) -> bool:
    """The element's centre is inside the viewport and the element is what is seen there."""
    return page.locator(selector).last.evaluate(
        """(element) => { const box = element.getBoundingClientRect();
            const x = box.x + Math.min(box.width / 2, 40), y = box.y + box.height / 2;
            return y >= 0 && y <= window.innerHeight && element.contains(document.elementFromPoint(x, y)); }"""
    )


@pytest.mark.parametrize("size", [(390, 844), (1280, 800)], ids=["phone", "laptop"])
def test_nothing_covers_a_card_or_the_answer_and_the_diagnosis_is_in_view(browser, app_url, size) -> None:
    """Before the fix, on a phone the cards spilled out of the reports panel under the settings column."""
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        page.goto(app_url)
        page.wait_for_selector("#rs-input textarea")
        page.click("#rs-ask")  # nothing typed: a notice, above the conversation and not over it
        page.wait_for_selector("#rs-notice .rs-warning", timeout=120_000)
        notice, chat = page.locator("#rs-notice").bounding_box(), page.locator(CHAT).bounding_box()
        assert notice["y"] + notice["height"] <= chat["y"] + 1, (notice, chat)
        _ask(page, EFFUSION_QUERY)
        assert _in_view(page, DIAGNOSIS), "the diagnosis is off-screen after asking"
        assert page.locator("#rs-reports article.rs-card").count() >= 5
        assert page.evaluate(COVERED_JS) == []
    finally:
        context.close()


def test_a_citation_in_the_answer_leads_to_its_card(page) -> None:
    _ask(page, EFFUSION_QUERY)
    citations = page.locator(f"{CHAT} a.rs-cite")
    assert citations.count() >= 1
    target = citations.last.get_attribute("href").removeprefix("#")
    page.evaluate("() => document.querySelector('#rs-reports').scrollTo(0, 0)")
    citations.last.click()
    assert _in_view(page, f"#{target}") and page.url.endswith("/")  # scrolled to the card; no navigation
    assert "rs-card-target" in page.locator(f"#{target}").get_attribute("class")


def test_arrow_up_recalls_the_last_question(page) -> None:
    _ask(page, EFFUSION_QUERY)
    box = page.locator("#rs-input textarea")
    box.click()
    box.press("ArrowUp")
    assert box.input_value() == EFFUSION_QUERY
    box.press("Enter")  # the recalled text is the input's value: Enter asks it again
    page.wait_for_function(f"() => document.querySelectorAll('{CHAT} [data-testid=user]').length === 2")


def test_regenerate_asks_the_last_question_again_in_its_place(page) -> None:
    _ask(page, EFFUSION_QUERY)
    first = page.inner_text(CHAT)
    # The old answer goes before the new one comes; the default answer takes a few hundredths of a second, so the
    # moment without it can fall between two polls: an observer sees every change of the page.
    page.evaluate(
        f"""() => {{
            window.rsCleared = false;
            new MutationObserver(() => {{
                const chat = document.querySelector('{CHAT}');
                if (chat && !chat.innerText.includes('no language model')) window.rsCleared = true;
            }}).observe(document.body, {{childList: true, subtree: true, characterData: true}});
        }}"""
    )
    page.locator(f"{CHAT} .message-buttons").last.get_by_role("button", name="Retry").click()
    page.wait_for_function("() => window.rsCleared === true")
    answer_finished(page)
    assert page.locator(f"{CHAT} [data-testid=user]").count() == 1  # replaced, not added
    assert page.locator(f"{CHAT} [data-testid=bot]").count() == 1
    said = re.compile(r"Most likely diagnosis: .+")
    assert said.search(page.inner_text(CHAT)).group(0) == said.search(first).group(0)


def test_export_after_a_follow_up_keeps_the_original_findings(page) -> None:
    _ask(page, EFFUSION_QUERY)
    _ask(page, FOLLOW_UP)
    with page.expect_download() as download:
        page.click("#rs-export")
    saved = Path(download.value.path()).read_text(encoding="utf-8")
    assert f"**Findings:** {EFFUSION_QUERY}" in saved and f"**Follow-up 1:** {FOLLOW_UP}" in saved
    assert "**Most likely diagnosis:**" in saved


def test_the_print_view_keeps_the_answer_and_reports_and_leaves_out_the_controls(page) -> None:
    _ask(page, EFFUSION_QUERY)
    page.emulate_media(media="print")
    for hidden in ("#rs-settings-col", "#rs-input", "#rs-actions", "#rs-feedback"):
        assert not page.locator(hidden).is_visible(), hidden
    assert page.locator("#rs-reports article.rs-card").first.is_visible()
    assert "Most likely diagnosis" in page.inner_text(CHAT)
    assert page.evaluate("() => document.querySelector('#rs-reports').scrollHeight") == page.evaluate(
        "() => document.querySelector('#rs-reports').clientHeight"
    )  # the reports are printed whole, not inside a scroll box


def test_the_sign_in_page_says_what_happened(browser, index, tmp_path: Path) -> None:
    """Wrong password (attempts left), signed in as X, sign out, then locked out for N s: the right password after
    the limit is refused, and the page says for how long (before, only the form came back)."""
    config = _config(index, tmp_path, sign_in=SignInPolicy(max_failures=2, window_s=60))
    with served(config, auth=[("anna", "right-passphrase")]) as url:
        context = browser.new_context()
        page = context.new_page()
        page.goto(url)

        def sign_in(password: str) -> None:
            page.get_by_label("username").fill("anna")
            page.get_by_label("password").fill(password)
            page.get_by_role("button", name="Login").click()

        sign_in("wrong")
        page.wait_for_selector("#rs-sign-in-status")
        assert "Wrong user name or password. 1 attempt(s) left" in page.inner_text("#rs-sign-in-status")
        sign_in("right-passphrase")
        page.wait_for_selector("#rs-user a#rs-sign-out")
        assert page.inner_text("#rs-user").startswith("Signed in as anna")
        page.click("#rs-sign-out")
        page.wait_for_selector("button:has-text('Login')")
        for _ in range(2):
            sign_in("wrong")
            page.wait_for_timeout(300)
        sign_in("right-passphrase")
        page.wait_for_function("() => document.body.innerText.includes('locked out')")
        status = page.inner_text("#rs-sign-in-status")
        seconds = int(re.search(r"Try again in (\d+) s", status).group(1))
        assert 0 < seconds <= 60 and not page.locator("#rs-input").count()
        context.close()
