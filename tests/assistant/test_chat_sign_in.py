"""Chat sign-in (`--auth`) is rate limited per client address: against the real Gradio app on 127.0.0.1, from
two loopback addresses, and the counting itself with a clock the test moves. The sign-in page tells a client that is
not signed in nothing about the server's indexes."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from chat_fixtures import free_port

from assistant.chat.page import build_app
from assistant.chat.serve import launch_app
from assistant.chat.service import ChatConfig
from assistant.settings import Settings
from models.paths import DataPaths
from retriever.index.report_index import STORE_FILE
from retriever.index.store import write_store
from retriever.reports.record import Report

USER, PASSWORD = "resident", "correct horse battery"
#: One account per test below (all with PASSWORD): failures are counted per account as well as per address.
USERS = (USER, "resident-forwarded", "resident-repeat", "resident-clear", "resident-burst", "resident-other")
#: Filter values of the served index that only its reports name (a hospital's source names, a modality it holds).
SOURCE, MODALITY = "st-elsewhere-radiology-pacs", "MG"


@pytest.fixture(scope="module")
def chat_folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The chat's data folder (its default index folder lies inside) and an `--index` folder holding reports of one
    source and modality (the store is what the page reads its filter values from)."""
    home, index = tmp_path_factory.mktemp("sign-in-home"), tmp_path_factory.mktemp("ward-7") / "mammo-index"
    index.mkdir()
    write_store(index / STORE_FILE, [Report("m:1", "Scattered calcifications.", "Benign.", MODALITY, source=SOURCE)])
    return home, index


@pytest.fixture(scope="module")
def login_url(chat_folders: tuple[Path, Path]) -> Iterator[str]:
    home, index = chat_folders
    config = ChatConfig(Settings(paths=DataPaths(home=home)), indexes=(index,))
    app = build_app(config)
    port = free_port()
    launch_app(app, config, host="127.0.0.1", port=port, auth=[(user, PASSWORD) for user in USERS], block=False)
    try:
        yield f"http://127.0.0.1:{port}/login"
    finally:
        app.close()


def _sign_in(
    url: str, password: str, source: str = "127.0.0.1", forwarded_for: str | None = None, user: str = USER
) -> httpx.Response:
    transport = httpx.HTTPTransport(local_address=source)
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    with httpx.Client(transport=transport, trust_env=False, timeout=30) as client:
        return client.post(url, data={"username": user, "password": password}, headers=headers)


def test_a_new_forwarded_for_on_every_attempt_does_not_escape_the_limit(login_url: str) -> None:
    """The server believes no X-Forwarded-For unless told which proxies to trust (issue 39's review): the limit is
    the real peer's, and a fresh made-up address cannot sign in while the real one is locked. From 127.0.0.1,
    the one loopback address uvicorn believes by default (no other test here signs in from it)."""
    source = "127.0.0.1"
    user = "resident-forwarded"
    statuses = [_sign_in(login_url, f"guess-{i}", source, f"10.0.0.{i}", user).status_code for i in range(7)]
    assert statuses[:5] == [400] * 5 and statuses[5:] == [429] * 2, statuses
    assert _sign_in(login_url, PASSWORD, source, "10.9.9.9", user).status_code == 429


def test_trusted_proxies_come_from_the_environment_only() -> None:
    from assistant.settings import ChatSettings

    assert ChatSettings.from_env({}).trusted_proxies == ()
    assert ChatSettings.from_env({"RADSEARCH_CHAT_TRUSTED_PROXIES": "10.1.1.1, ::1"}).trusted_proxies == (
        "10.1.1.1",
        "::1",
    )


def test_repeated_wrong_passwords_are_refused_with_429_even_the_right_one_then(login_url: str) -> None:
    source, user = "127.0.0.3", "resident-repeat"
    assert _sign_in(login_url, PASSWORD, source, user=user).status_code == 200
    statuses = [_sign_in(login_url, f"guess-{i}", source, user=user).status_code for i in range(8)]
    assert statuses[:5] == [400] * 5 and statuses[5:] == [429] * 3, statuses
    locked = _sign_in(login_url, PASSWORD, source, user=user)
    assert locked.status_code == 429 and 0 < int(locked.headers["Retry-After"]) <= 300
    assert "Too many failed sign-ins" in locked.json()["detail"]
    assert _sign_in(login_url, PASSWORD, source, user="resident-other").status_code == 429, "the address is locked"
    assert _sign_in(login_url, PASSWORD, "127.0.0.4", user=user).status_code == 429, "so is the account (issue 51)"
    assert _sign_in(login_url, PASSWORD, "127.0.0.4", user="resident-other").status_code == 200, "others are not"


def test_a_successful_sign_in_clears_the_failures(login_url: str) -> None:
    source, user = "127.0.0.5", "resident-clear"
    for _ in range(3):
        assert [_sign_in(login_url, "wrong", source, user=user).status_code for _ in range(4)] == [400] * 4
        assert _sign_in(login_url, PASSWORD, source, user=user).status_code == 200


def test_a_burst_of_parallel_guesses_stays_within_the_limit(login_url: str) -> None:
    with ThreadPoolExecutor(max_workers=12) as pool:
        guesses = pool.map(lambda i: _sign_in(login_url, f"g-{i}", "127.0.0.6", user="resident-burst"), range(12))
        statuses = [guess.status_code for guess in guesses]
    assert sorted(statuses) == [400] * 5 + [429] * 7


def test_a_sign_in_form_over_16_kb_is_refused_unchecked(login_url: str) -> None:
    """The limit reads the form for its user name (issue 51), at most MAX_FORM_BYTES of it."""
    from assistant.chat.sign_in_limit import MAX_FORM_BYTES

    padded = _sign_in(login_url, "x" * MAX_FORM_BYTES, "127.0.0.7")
    assert padded.status_code == 413, padded.text


def test_failures_leave_the_window() -> None:
    from assistant.chat.sign_in_limit import FailedSignIns, SignInPolicy

    now = [1000.0]
    failures = FailedSignIns(SignInPolicy(max_failures=2, window_s=60), clock=lambda: now[0])
    assert failures.try_attempt("10.0.0.1") == 0
    now[0] += 30
    assert failures.try_attempt("10.0.0.1") == 0
    assert failures.try_attempt("10.0.0.1") == pytest.approx(30) and failures.try_attempt("10.0.0.2") == 0
    now[0] += 31
    assert failures.try_attempt("10.0.0.1") == 0, "the first failure is older than the window"
    failures.succeeded("10.0.0.1")
    assert failures.try_attempt("10.0.0.1") == failures.try_attempt("10.0.0.1") == 0


def test_uploads_are_refused_for_a_signed_in_user(login_url: str) -> None:
    """Issue 39: a signed-in user could upload files of any size; issue 51: 20 files of 1 MB in one request. The chat
    takes no files, so every upload request is refused (tests/regressions/test_upload_requests_refused.py: more
    forms, against the chat command)."""
    base = login_url.removesuffix("/login")
    with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.9"), trust_env=False, timeout=60) as client:
        assert client.post(login_url, data={"username": USER, "password": PASSWORD}).status_code == 200
        small = client.post(f"{base}/gradio_api/upload", files={"files": ("a.txt", b"x" * 1000)})
        large = client.post(f"{base}/gradio_api/upload", files={"files": ("b.txt", b"x" * 3_000_000)})
    assert small.status_code == large.status_code == 413, (small.text, large.text)


#: The kinds of component the page is made of: none of them uploads a file, which is why the chat refuses every
#: upload (assistant/chat/no_uploads.py). A new kind must be checked (File, Image, UploadButton... upload) and added.
PAGE_COMPONENTS = {"Accordion", "BrowserState", "Button", "Chatbot", "Checkbox", "Column", "Dataset", "Dropdown"}
PAGE_COMPONENTS |= {"Form", "Group", "HTML", "Radio", "Row", "Slider", "State", "Textbox"}


def test_no_component_of_the_page_uploads_a_file(chat_folders: tuple[Path, Path]) -> None:
    home, index = chat_folders
    app = build_app(ChatConfig(Settings(paths=DataPaths(home=home)), indexes=(index,)))
    kinds = {type(block).__name__ for block in app.blocks.values()}
    assert kinds <= PAGE_COMPONENTS, kinds - PAGE_COMPONENTS


def test_the_sign_in_page_names_no_index_folder_or_filter_value(
    login_url: str, chat_folders: tuple[Path, Path]
) -> None:
    """Issue 39 (L5): Gradio serves the page's API description (each input's choices and default) with the sign-in
    page, to anyone; it held the index folders' absolute paths and the index's modalities and sources."""
    home, index = chat_folders
    with httpx.Client(trust_env=False, timeout=30) as client:
        page = client.get(login_url.removesuffix("login"))
    assert page.status_code == 200 and '"auth_required":true' in page.text.replace(" ", "")
    assert "gradio_api_info" in page.text, "the page still carries the API description: the test reads it"
    for private in (str(index), str(home), index.name, SOURCE, f'"{MODALITY}"'):
        assert private not in page.text, f"{private!r} is on the sign-in page"
