"""Issue 51 (item 3): the chat guide's proxy set-up reopened the sign-in bypass. With
`RADSEARCH_CHAT_TRUSTED_PROXIES=127.0.0.1` and the guide's nginx block (which forwarded the client's own
X-Forwarded-For, lacking the `proxy_set_header X-Forwarded-For $remote_addr;` its text asked for), a new
X-Forwarded-For on every attempt got 400 (Gradio's "Incorrect credentials") ten times, never 429, and the right
password with a fresh header signed in.

The real `assistant chat` trusts 127.0.0.1 here, and the test connects from 127.0.0.1: what a proxy sends. A proxy
that passes the client's header on unchanged cannot be told from one that sets it, so the guesses one account may
take are limited whatever address a request names; and where the proxy appends the client's real address (nginx's
`$proxy_add_x_forwarded_for`), that address is the one limited, never the one the client wrote in front of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from chat_process import REPO, running_chat

from assistant.chat.sign_in_limit import SignInPolicy

pytestmark = pytest.mark.models  # starts the chat command

PROXY = "127.0.0.1"
ACCOUNTS = [(f"resident-{i}", f"passphrase of resident {i}") for i in range(5)]
LIMIT = SignInPolicy().max_failures


@pytest.fixture(scope="module")
def login_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_chat(tmp_path_factory.mktemp("proxy"), ACCOUNTS, RADSEARCH_CHAT_TRUSTED_PROXIES=PROXY) as base:
        yield f"{base}/login"


def _sign_in(url: str, account: int, password: str, forwarded_for: str | None, source: str = PROXY) -> int:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for is not None else {}
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(transport=transport, trust_env=False, timeout=30) as client:
        form = {"username": ACCOUNTS[account][0], "password": password}
        return client.post(url, data=form, headers=headers).status_code


def test_a_new_forwarded_address_on_every_guess_is_still_locked_out(login_url: str) -> None:
    """The issue's form: the proxy passes the client's header on, one made-up address per guess."""
    statuses = [_sign_in(login_url, 0, f"guess-{i}", f"10.0.{i}.7") for i in range(LIMIT + 5)]
    assert statuses == [400] * LIMIT + [429] * 5, statuses
    assert _sign_in(login_url, 0, ACCOUNTS[0][1], "10.99.99.99") == 429, "the right password got in while locked"


def test_a_made_up_address_in_front_of_a_trusted_one_is_still_locked_out(login_url: str) -> None:
    """A chain that ends in the trusted proxy's own address: the entry before it is the client's invention."""
    statuses = [_sign_in(login_url, 1, f"guess-{i}", f"10.1.{i}.7, {PROXY}") for i in range(LIMIT + 3)]
    assert statuses == [400] * LIMIT + [429] * 3, statuses
    assert _sign_in(login_url, 1, ACCOUNTS[1][1], f"10.99.99.98, {PROXY}") == 429


def test_the_address_a_proxy_appends_is_the_one_limited(login_url: str) -> None:
    """nginx's `$proxy_add_x_forwarded_for`: the client's header, then its real address (127.0.0.9). Rotating the
    part the client wrote does not escape the limit of the real address, for any account."""
    statuses = [_sign_in(login_url, 2, f"guess-{i}", f"10.2.{i}.7, 127.0.0.9") for i in range(LIMIT + 3)]
    assert statuses == [400] * LIMIT + [429] * 3, statuses
    assert _sign_in(login_url, 3, ACCOUNTS[3][1], "10.99.99.97, 127.0.0.9") == 429, "the address is locked out"
    assert _sign_in(login_url, 3, ACCOUNTS[3][1], "127.0.0.10") == 200, "another address is not"


def test_guesses_at_one_account_from_many_real_addresses_are_limited(login_url: str) -> None:
    """Without any header: each guess from another loopback address (what many clients, or one with many
    addresses, do). The account is locked, its right password included, until the window has passed."""
    statuses = [_sign_in(login_url, 4, f"guess-{i}", None, f"127.0.4.{i + 1}") for i in range(LIMIT + 3)]
    assert statuses == [400] * LIMIT + [429] * 3, statuses
    assert _sign_in(login_url, 4, ACCOUNTS[4][1], None, "127.0.4.99") == 429


def test_the_guides_nginx_block_sets_the_forwarded_address_itself() -> None:
    """The guide's block must overwrite the client's X-Forwarded-For (or append the real address to it): nginx
    passes every request header on unless the block sets it."""
    guide = (REPO / "docs" / "guide" / "chat.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```nginx\n(.*?)```", guide, flags=re.DOTALL)
    assert len(blocks) == 1, "the guide has one nginx block"
    settings = re.findall(r"^\s*proxy_set_header\s+X-Forwarded-For\s+(\S+);", blocks[0], flags=re.MULTILINE)
    assert settings in (["$remote_addr"], ["$proxy_add_x_forwarded_for"]), settings
