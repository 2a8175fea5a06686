"""Rate limit for the chat's sign-in: after too many wrong passwords from one address, or for one account, sign-in
is refused.

Gradio checks `--auth` passwords at POST /login as fast as they arrive, so a password could be guessed at
network speed. `SignInRateLimit` is ASGI middleware in front of the app: an address with `max_failures` failed
sign-ins within `window_s` gets HTTP 429 with Retry-After, without its password being checked (so a correct
guess is not even confirmed); a successful sign-in clears its count, and a refused one says how many attempts are
left (sign_in_page.py shows both on the page).

An address is the connecting socket's, or the one a trusted proxy forwards (uvicorn takes the rightmost entry of
X-Forwarded-For that is not a trusted proxy, so what a client writes in front of the address its proxy appends is
never used). A proxy that passes the client's own X-Forwarded-For on unchanged cannot be told from one that sets it,
and then a client names a new address on every guess (issue 51, item 3). So each account is limited as well, from
whatever addresses its guesses come: `max_failures` wrong passwords for one account within `window_s` lock that
account out too, at every address, until the oldest leaves the window. Only the server's accounts are counted, so
made-up user names cost no memory (they can never sign in).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assistant.chat.sign_in_page import ATTEMPTS_LEFT

MAX_TRACKED = 4096  # addresses with recent failures kept before expired ones are swept out
#: A sign-in form holds a user name and a password; a longer body is refused before anything is checked.
MAX_FORM_BYTES = 16_384


@dataclass(frozen=True)
class SignInPolicy:
    """How many failed sign-ins one address, or one account, may make within `window_s` seconds."""

    max_failures: int = 5
    window_s: float = 300.0


class FailedSignIns:
    """Recent failed sign-ins per key (an address or an account; thread-safe; only the last `max_failures` are
    kept). An attempt names all its keys at once, and is refused when any of them is over the limit."""

    def __init__(self, policy: SignInPolicy, clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def try_attempt(self, *keys: str) -> float:
        """Count a sign-in attempt against each of `keys` as failed until `succeeded` says otherwise, and return 0;
        or, when a key is over its limit, count nothing and return the seconds it must wait. Counting before the
        password is checked keeps a burst of parallel guesses within the limit too."""
        with self._lock:
            recents = [self._recent(key) for key in keys]
            waits = [r[0] + self.policy.window_s - self._clock() for r in recents if len(r) >= self.policy.max_failures]
            if waits:
                return max(max(waits), 1e-3)
            if len(self._failures) >= MAX_TRACKED:
                self._failures = {known: kept for known in self._failures if (kept := self._recent(known))}
            for key, recent in zip(keys, recents, strict=True):
                self._failures[key] = recent
                recent.append(self._clock())
            return 0.0

    def left(self, *keys: str) -> int:
        """The failed sign-ins the attempt of `keys` may still make before one of them is locked out."""
        with self._lock:
            return max(0, min(self.policy.max_failures - len(self._recent(key)) for key in keys))

    def succeeded(self, *keys: str) -> None:
        """The attempt signed in: the failures of its keys are forgotten."""
        with self._lock:
            for key in keys:
                self._failures.pop(key, None)

    def _recent(self, key: str) -> deque[float]:
        """The failures of `key` inside the window, oldest first."""
        failures = self._failures.get(key) or deque(maxlen=self.policy.max_failures)
        cutoff = self._clock() - self.policy.window_s
        while failures and failures[0] <= cutoff:
            failures.popleft()
        return failures


class SignInRateLimit:
    """ASGI middleware: POST .../login from an address, or for an account, over its limit gets 429; any other
    attempt counts as failed unless the app answers 200 (signed in). `accounts` are the server's user names."""

    def __init__(self, app: ASGIApp, failures: FailedSignIns, accounts: Collection[str] = ()) -> None:
        self.app = app
        self.failures = failures
        self.accounts = frozenset(accounts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].rstrip("/").endswith("/login"):
            await self.app(scope, receive, send)
            return
        body = await _read_form(receive)
        if body is None:
            too_long = JSONResponse(
                {"detail": f"A sign-in form is at most {MAX_FORM_BYTES // 1024} KB."},
                status_code=413,
                headers={"Connection": "close"},  # the rest of the body is left unread
            )
            await too_long(scope, receive, send)
            return
        user = await _user_name(scope, body)
        address = (scope.get("client") or ("unknown",))[0]
        keys = (f"address {address}", *([f"account {user}"] if user in self.accounts else []))
        wait = self.failures.try_attempt(*keys)
        if wait > 0:
            await _locked_out(wait)(scope, receive, send)
            return

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                self.failures.succeeded(*keys)
            elif message["type"] == "http.response.start":  # refused: the page says how many attempts are left
                left = (ATTEMPTS_LEFT.lower().encode(), str(self.failures.left(*keys)).encode())
                message = {**message, "headers": [*message.get("headers", []), left]}
            await send(message)

        await self.app(scope, _replay(body, receive), watched)


async def _read_form(receive: Receive) -> bytes | None:
    """The request's body, or None once it is longer than MAX_FORM_BYTES (the rest is left unread)."""
    body = bytearray()
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > MAX_FORM_BYTES:
            return None
        if message["type"] != "http.request" or not message.get("more_body"):
            return bytes(body)


async def _user_name(scope: Scope, body: bytes) -> str | None:
    """The form's user name as Gradio compares it (stripped), or None when the form has none or cannot be read
    (the app then refuses it, which counts against the address)."""
    try:
        form = await Request(scope, _replay(body, _nothing)).form()
    except (HTTPException, MultiPartException):
        return None
    user = form.get("username")
    await form.close()
    return user.strip() if isinstance(user, str) else None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives `body` (already read) first, then whatever the connection says next."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


async def _nothing() -> Message:
    return {"type": "http.disconnect"}


def _locked_out(wait: float) -> JSONResponse:
    """429 with the seconds to wait (the sign-in page counts them down)."""
    seconds = max(1, math.ceil(wait))
    return JSONResponse(
        {"detail": f"Too many failed sign-ins from this address or for this account: try again in {seconds} s."},
        status_code=429,
        headers={"Retry-After": str(seconds)},
    )
