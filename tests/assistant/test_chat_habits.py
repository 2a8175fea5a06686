"""The pieces behind the chat's habits (issue 52), without a browser: the export keeps a case's findings and each
follow-up, citations link to their cards, notices in plain words, the page's text read back exactly for Regenerate,
and the sign-in page's script and attempts-left header."""

from __future__ import annotations

import pytest
from report_fixtures import hit
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from assistant.chat.escape import md_escape, md_unescape
from assistant.chat.export import answer_document
from assistant.chat.render import answer_markdown, plain_note
from assistant.chat.report_cards import card_anchor
from assistant.chat.sign_in_limit import FailedSignIns, SignInPolicy, SignInRateLimit
from assistant.chat.sign_in_page import ATTEMPTS_LEFT, STATUS_ID, SignInPage
from assistant.rag.answer import Answer

FIRST = "Blunting of the right costophrenic angle with a meniscus sign."
FOLLOW_UPS = ["Patient is 78 years old.", "Fever for three days."]


def _answer(query: str = FOLLOW_UPS[-1]) -> Answer:
    retrieved = [hit("openi:2747", 1, 0.8, "findings", "Right pleural effusion."), hit("b/2", 2, 0.7, "findings", "x")]
    return Answer(
        query=query,
        diagnosis="pleural effusion",
        differential=["empyema"],
        rationale="",
        cited_report_ids=["openi:2747", "gone"],
        retrieved=retrieved,
        model_id=None,
        prompt_id="evidence",
        configuration_hash="abcd",
    )


def test_the_export_after_follow_ups_keeps_the_first_findings_and_each_follow_up() -> None:
    document = answer_document(_answer(), earlier=[FIRST, FOLLOW_UPS[0]])
    assert f"**Findings:** {md_escape(FIRST)}" in document
    assert f"**Follow-up 1:** {md_escape(FOLLOW_UPS[0])}" in document
    assert f"**Follow-up 2:** {md_escape(FOLLOW_UPS[1])}" in document
    assert "**Finding:**" in answer_document(_answer(FIRST))  # a first question: as before


def test_a_citation_links_to_its_card_and_an_unknown_one_stays_text() -> None:
    message = answer_markdown(_answer())
    assert f'<a class="rs-cite" href="#{card_anchor("openi:2747")}"' in message and ">#1</a> openi:2747" in message
    assert "#? gone" in message


@pytest.mark.parametrize(
    ("note", "plain"),
    [
        (
            "answer: the model's choice could not be read (no JSON); the diagnosis the most similar reports affirm "
            "is given",
            "The model's reply could not be read, so the answer is the diagnosis the most similar reports support.",
        ),
        ("prompt: reference report rank 3 shortened to fit the context", "Report #3 was shortened"),
        ("prompt: 2 earlier message(s) of the conversation left out (no room)", "The 2 earliest message(s)"),
        ("retrieval: something else", "Something else"),
    ],
)
def test_notices_are_in_plain_words(note: str, plain: str) -> None:
    assert plain_note(note).startswith(plain) and "answer:" not in plain_note(note)


@pytest.mark.parametrize("text", ["a \\* b", "1. <b>x</b> & **y** _z_ [w] #5 ~q~ |t|", "- list\n> quote", "&amp;"])
def test_the_page_text_of_a_question_reads_back_exactly(text: str) -> None:
    assert md_unescape(md_escape(text)) == text


def _app(policy: SignInPolicy) -> TestClient:
    async def page(request):
        return HTMLResponse("<html><head><title>t</title></head><body>form</body></html>")

    async def login(request):
        form = await request.form()
        ok = form.get("password") == "right"
        return JSONResponse({"success": ok}, status_code=200 if ok else 400)

    middleware = [Middleware(SignInPage), Middleware(SignInRateLimit, failures=FailedSignIns(policy))]
    routes = [Route("/", page), Route("/login", login, methods=["POST"])]
    return TestClient(Starlette(routes=routes, middleware=middleware))


def test_the_sign_in_page_gets_its_script_and_a_refused_password_the_attempts_left() -> None:
    client = _app(SignInPolicy(max_failures=3, window_s=60))
    html = client.get("/")
    assert STATUS_ID in html.text and html.text.index("<script>") < html.text.index("</head>")
    assert int(html.headers["content-length"]) == len(html.content)
    wrong = client.post("/login", data={"username": "a", "password": "wrong"})
    assert wrong.status_code == 400 and wrong.headers[ATTEMPTS_LEFT] == "2"
    client.post("/login", data={"username": "a", "password": "wrong"})
    client.post("/login", data={"username": "a", "password": "wrong"})
    locked = client.post("/login", data={"username": "a", "password": "right"})
    assert locked.status_code == 429 and 0 < int(locked.headers["retry-after"]) <= 60
    assert client.post("/login").headers.get("content-type", "").startswith("application/json")
