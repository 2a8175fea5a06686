"""Shared by the chat's browser tests: Debian's Chromium driven by Playwright (never Playwright's own browser
download, which needs the internet), skipped, saying which is missing, when either is absent."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

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


@contextmanager
def chromium() -> Iterator[object]:
    """A headless Chromium for a test module's `browser` fixture (skips the module when it cannot start)."""
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("Playwright is not installed: pip install -e '.[browser]'")
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is absent: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def answer_finished(page, timeout_ms: int = ANSWER_TIMEOUT_MS) -> None:
    """Wait until the answer is complete: the provenance line (the model id, or "no language model" for the default
    answer from the evidence) closes every answer."""
    page.wait_for_function(
        f"""() => {{
            const chat = document.querySelector('{CHAT}');
            return chat && ['smollm2', 'no language model', 'No LLM answer'].some(t => chat.innerText.includes(t))
                && !chat.innerText.includes('▍');
        }}""",
        timeout=timeout_ms,
    )
