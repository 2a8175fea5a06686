"""Residents' feedback becomes the site's benchmark (issue 52), in a real browser: two residents, signed in as
different users, judge three answers (a thumb down with the right diagnosis, a thumb up, the form); the chat server
restarts; `assistant feedback export` writes the three cases with their users and configuration hashes; and the
diagnosis benchmark grades them (`--limit 3`).

The chat answers from the evidence (its default mode, no language model), so the test needs the MiniLM encoder and
Chromium only. Needs `apt-get install chromium` and `pip install -e .[browser]`; skipped, saying which, otherwise.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_fixtures import CHAT, answer_finished, chromium
from chat_fixtures import CHAT_REPORTS, EFFUSION_QUERY, build_chat_index, served
from cli_fixtures import run

from assistant.chat.service import ChatConfig
from assistant.settings import LLMSettings, Settings
from models.paths import DataPaths

ACCOUNTS = [("anna", "anna-passphrase"), ("ben", "ben-passphrase")]
CARDIO_QUERY = "Enlarged cardiac silhouette with cephalization of the pulmonary vessels."
PNEUMONIA_QUERY = "Patchy air space opacity in the right lower lobe with air bronchograms."
#: No question here reaches a model (answers from the evidence); an unreachable server makes sure of it.
NO_MODEL = LLMSettings(backend="openai", base_url="http://127.0.0.1:9/v1", model="none", timeout_s=5, max_retries=0)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, minilm) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("site")
    index = build_chat_index(root / "fixture-index", minilm)
    corpus = root / "reports.jsonl"  # the site's report export, for the benchmark's retrieval
    rows = [{k: getattr(r, k) for k in ("id", "findings", "impression", "modality", "source")} for r in CHAT_REPORTS]
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return {"root": root, "index": index, "corpus": corpus, "feedback": root / "feedback.sqlite"}


def _config(site: dict[str, Path]) -> ChatConfig:
    home = DataPaths(home=site["root"] / "home")
    return ChatConfig(Settings(paths=home, llm=NO_MODEL), indexes=(site["index"],), feedback=site["feedback"])


def _sign_in(browser, url: str, user: str, password: str):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url)
    page.get_by_label("username").fill(user)
    page.get_by_label("password").fill(password)
    page.get_by_role("button", name="Login").click()
    page.wait_for_selector("#rs-input textarea")
    page.wait_for_function(f"() => document.querySelector('#rs-user').innerText.includes('{user}')")
    return context, page


def _ask(page, text: str) -> str:
    """Ask and wait for the answer; its configuration hash."""
    page.fill("#rs-input textarea", text)
    page.click("#rs-ask")
    page.wait_for_function(f"() => document.querySelectorAll('{CHAT} [data-testid=bot]').length > 0")
    answer_finished(page)
    page.wait_for_timeout(300)  # the page takes the answer's key for feedback after the answer
    hashes = re.findall(r"configuration ([0-9a-f]{16})", page.inner_text(CHAT))
    return hashes[-1]


def _thanked(page, count: int) -> None:
    page.wait_for_function(
        f"() => (document.querySelector('#rs-feedback-note').innerText.match(/Thank you/g) || []).length >= 1"
        f" && document.querySelector('#rs-feedback-note').innerText.includes('feedback {count}')"
    )


def _thumb(page, name: str) -> None:
    page.locator(f"{CHAT} .message-buttons").last.get_by_role("button", name=name, exact=True).click()


def test_two_residents_feedback_survives_a_restart_and_becomes_graded_cases(browser, site) -> None:
    given: dict[str, tuple[str, str]] = {}  # the diagnosis given -> (user, configuration hash)
    with served(_config(site), auth=ACCOUNTS) as url:
        context, anna = _sign_in(browser, url, *ACCOUNTS[0])
        effusion = _ask(anna, EFFUSION_QUERY)
        _thumb(anna, "Dislike")  # a thumb down opens the form for the right diagnosis
        anna.wait_for_selector("#rs-right textarea, #rs-right input", state="visible")
        anna.locator("#rs-right input, #rs-right textarea").first.fill("Parapneumonic effusion")
        anna.click("#rs-send-feedback")
        _thanked(anna, 1)
        given["Parapneumonic effusion"] = ("anna", effusion)
        anna.click("#rs-new-case")
        cardio = _ask(anna, CARDIO_QUERY)
        diagnosis = re.search(r"Most likely diagnosis: (.+)", anna.inner_text(CHAT).split(CARDIO_QUERY)[-1]).group(1)
        _thumb(anna, "Like")
        _thanked(anna, 2)
        given[diagnosis.strip()] = ("anna", cardio)
        context.close()

        context, ben = _sign_in(browser, url, *ACCOUNTS[1])
        pneumonia = _ask(ben, PNEUMONIA_QUERY)
        ben.click("#rs-feedback")  # the form, opened by hand
        ben.get_by_label("Not helpful").check()
        ben.locator("#rs-right input, #rs-right textarea").first.fill("Lobar pneumonia")
        ben.locator("#rs-comment textarea").fill("Air bronchograms in one lobe.")
        ben.click("#rs-send-feedback")
        _thanked(ben, 3)
        given["Lobar pneumonia"] = ("ben", pneumonia)
        context.close()

    with served(_config(site), auth=ACCOUNTS) as url:  # the restart: a new server on the same feedback file
        context, anna = _sign_in(browser, url, *ACCOUNTS[0])
        assert "Most likely diagnosis" not in anna.inner_text(CHAT)  # the old conversation is gone with its key
        context.close()

    cases = site["root"] / "cases.jsonl"
    env = {"RADSEARCH_FEEDBACK": str(site["feedback"])}
    exported = run("feedback", "export", "--out", str(cases), env=env)
    assert exported.returncode == 0 and "3 case(s) written" in exported.stderr, exported.stderr
    rows = [json.loads(line) for line in cases.read_text(encoding="utf-8").splitlines()]
    assert {r["diagnosis"]: (r["meta"]["user"], r["meta"]["configuration_hash"]) for r in rows} == given
    assert all(r["source"] == "site" and r["id"].startswith("feedback-") for r in rows)

    out = site["root"] / "bench"
    bench_env = {
        **os.environ,
        "RADSEARCH_HOME": str(site["root"] / "bench-home"),  # its index cache, not the user's data folder
        "RADSEARCH_LLM_BACKEND": "openai",
        "RADSEARCH_LLM_BASE_URL": NO_MODEL.base_url,
        "RADSEARCH_LLM_MODEL": "none",
    }
    bench = [sys.executable, "-m", "eval.diagnosis.benchmark", "--cases", str(cases), "--limit", "3"]
    bench += ["--corpus", str(site["corpus"]), "--conditions", "evidence:minilm[k=8]", "--out", str(out)]
    bench += ["--cache", str(out / "predictions.jsonl"), "--name", "site", "--icd", "off"]  # ICD: minutes to load
    done = subprocess.run(bench, capture_output=True, text=True, timeout=900, env=bench_env)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((out / "site.json").read_text(encoding="utf-8"))
    graded = result["cases"]["evidence:minilm[k=8]"]
    assert result["n_cases"] == 3 and result["cases_by_source"] == {"site": 3}
    assert {row["case_id"] for row in graded} == {row["id"] for row in rows}
    assert all(isinstance(row["correct"], bool) and not row["missing"] for row in graded), graded
