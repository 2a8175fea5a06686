"""Rate limit for the chat's sign-in: after too many wrong passwords from one address, sign-in is refused.

Gradio checks `--auth` passwords at POST /login as fast as they arrive, so a password could be guessed at
network speed. `SignInRateLimit` is ASGI middleware in front of the app: an address with `max_failures` failed
sign-ins within `window_s` gets HTTP 429 with Retry-After, without its password being checked (so a correct
guess is not even confirmed); a successful sign-in clears its count, and a refused one says how many attempts are
left (sign_in_page.py shows both on the page). Addresses are the connecting socket's: a
reverse proxy in front makes all residents one address, so limit sign-ins at the proxy in that set-up.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assistant.chat.sign_in_page import ATTEMPTS_LEFT

MAX_TRACKED = 4096  # addresses with recent failures kept before expired ones are swept out


@dataclass(frozen=True)
class SignInPolicy:
    """How many failed sign-ins one address may make within `window_s` seconds."""

    max_failures: int = 5
    window_s: float = 300.0


class FailedSignIns:
    """Recent failed sign-ins per client address (thread-safe; only the last `max_failures` are kept)."""

    def __init__(self, policy: SignInPolicy, clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def try_attempt(self, address: str) -> float:
        """Count a sign-in attempt by `address` as failed until `succeeded` says otherwise, and return 0; or,
        when the address is over its limit, count nothing and return the seconds it must wait. Counting before
        the password is checked keeps a burst of parallel guesses within the limit too."""
        with self._lock:
            recent = self._recent(address)
            if len(recent) >= self.policy.max_failures:
                return max(recent[0] + self.policy.window_s - self._clock(), 1e-3)
            if len(self._failures) >= MAX_TRACKED:
                self._failures = {known: kept for known in self._failures if (kept := self._recent(known))}
            self._failures[address] = recent
            recent.append(self._clock())
            return 0.0

    def left(self, address: str) -> int:
        """The failed sign-ins `address` may still make before it is locked out."""
        with self._lock:
            return max(0, self.policy.max_failures - len(self._recent(address)))

    def succeeded(self, address: str) -> None:
        """The address signed in: its failures are forgotten."""
        with self._lock:
            self._failures.pop(address, None)

    def _recent(self, address: str) -> deque[float]:
        """The failures of `address` inside the window, oldest first."""
        failures = self._failures.get(address) or deque(maxlen=self.policy.max_failures)
        cutoff = self._clock() - self.policy.window_s
        while failures and failures[0] <= cutoff:
            failures.popleft()
        return failures


class SignInRateLimit:
    """ASGI middleware: POST .../login from an address over its limit gets 429; any other attempt counts as
    failed unless the app answers 200 (signed in)."""

    def __init__(self, app: ASGIApp, failures: FailedSignIns) -> None:
        self.app = app
        self.failures = failures

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].rstrip("/").endswith("/login"):
            await self.app(scope, receive, send)
            return
        address = (scope.get("client") or ("unknown",))[0]
        wait = self.failures.try_attempt(address)
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            refusal = JSONResponse(
                {"detail": f"Too many failed sign-ins from this address: try again in {seconds} s."},
                status_code=429,
                headers={"Retry-After": str(seconds)},
            )
            await refusal(scope, receive, send)
            return

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                self.failures.succeeded(address)
            elif message["type"] == "http.response.start":  # refused: the page says how many attempts are left
                left = (ATTEMPTS_LEFT.lower().encode(), str(self.failures.left(address)).encode())
                message = {**message, "headers": [*message.get("headers", []), left]}
            await send(message)

        await self.app(scope, receive, watched)
