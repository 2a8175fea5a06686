"""A chat answer timed where the resident sees it: `assistant chat` in its own process, Debian's Chromium driven by
Playwright on 127.0.0.1, the clock in the page itself.

Why not only the chat's request handler in-process (eval/perf/ask_vs_chat.py's `chat` side): that leaves out what
stands between a resident and the handler (the key press, Gradio's queue and event stream, the page drawing the
message), while `ask` is timed from its process start to its terminal output. Here the page records
`performance.now()` when Enter goes down in the input and when "Most likely diagnosis" first shows in the chat (a
MutationObserver), so neither Playwright's polling nor the browser's start-up is counted.

Needs `pip install -e .[browser]` and `apt-get install chromium` (`available` says which is missing).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eval.perf.ports import free_port

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
ANSWER_TIMEOUT_MS = 600_000
#: Installs the page's clock for one question: Enter down in the input, the first diagnosis text in a new message,
#: and the answer finished (its provenance line drawn, the typing cursor gone).
_CLOCK = """() => {
    const chat = document.querySelector('#rs-chat');
    const seen = chat.innerText.split('Most likely diagnosis').length;
    const lines = chat.querySelectorAll('sub').length;
    const clock = window.__rsClock = {enter: null, first: null, done: null};
    document.querySelector('#rs-input textarea').addEventListener('keydown', (event) => {
        if (event.key === 'Enter' && clock.enter === null) clock.enter = performance.now();
    }, {capture: true});
    new MutationObserver((_, observer) => {
        const text = chat.innerText;
        if (clock.first === null && text.split('Most likely diagnosis').length > seen) clock.first = performance.now();
        if (clock.first !== null && chat.querySelectorAll('sub').length > lines && !text.includes('\\u258d')) {
            clock.done = performance.now();
            observer.disconnect();
        }
    }).observe(chat, {subtree: true, childList: true, characterData: true});
}"""


def available() -> str | None:
    """None when the browser side can run; else what is missing."""
    if importlib.util.find_spec("playwright") is None:
        return "Playwright is not installed (pip install -e '.[browser]')"
    if not CHROMIUM.is_file():
        return f"{CHROMIUM} is absent (apt-get install -y chromium)"
    return None


@contextmanager
def chat_page(index: Path, env: dict[str, str], mode: str) -> Iterator[Any]:
    """`assistant chat` offering `index`, and a browser page on it with `mode` chosen; both stopped on the way out."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    command = [sys.executable, "-m", "assistant.cli", "chat", "--port", str(port), "--index", str(index)]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 600
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"assistant chat exited {server.returncode}")
            try:
                urllib.request.urlopen(url, timeout=5).close()  # noqa: S310 - the local chat
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("assistant chat did not answer within 600 s") from None
                time.sleep(0.5)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1440, "height": 1000})
                page.goto(url)
                page.wait_for_selector("#rs-input textarea")
                page.get_by_label(mode, exact=True).check()
                yield page
            finally:
                browser.close()
    finally:
        server.terminate()
        server.wait(timeout=60)


def browser_run(page: Any, query: str) -> dict[str, float]:
    """One question typed into the chat and sent with Enter: seconds, by the page's clock, from the key press to the
    first diagnosis text and to the finished answer. "New case" first: each question is a case of its own, as an
    `ask` is (a follow-up would send the earlier turns to the model too)."""
    page.click("#rs-new-case")
    page.wait_for_function("() => !document.querySelector('#rs-chat').innerText.includes('Most likely diagnosis')")
    page.fill("#rs-input textarea", query)
    page.evaluate(_CLOCK)
    page.press("#rs-input textarea", "Enter")
    page.wait_for_function("() => window.__rsClock.done !== null", timeout=ANSWER_TIMEOUT_MS)
    clock = page.evaluate("() => window.__rsClock")
    return {"ttft_s": (clock["first"] - clock["enter"]) / 1000, "total_s": (clock["done"] - clock["enter"]) / 1000}
