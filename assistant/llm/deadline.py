"""The LLM timeout as a deadline for a whole call: connecting, every read and every retry share one budget, and so
does what the caller asked before the completion (the HTTP backend's model check, issue 39: a 5 s timeout waited 10 s).

A per-read timeout lets a server that sends a byte now and then hold a caller forever (84 s at a 5 s timeout
was measured); a `Deadline` is fixed when the call starts and everything in the call checks what is left.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from assistant.llm.background import in_background

T = TypeVar("T")
POLL_S = 0.05  # how late past its deadline a call may end


@dataclass(frozen=True)
class Deadline:
    """`seconds` from the moment it was made (`Deadline.after`)."""

    seconds: float
    end: float

    @classmethod
    def after(cls, seconds: float, started_at: float | None = None) -> Deadline:
        """`seconds` from `started_at` (a `time.monotonic()` reading: a call that began earlier), else from now."""
        return cls(seconds, (time.monotonic() if started_at is None else started_at) + seconds)

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self.end - time.monotonic())

    @property
    def passed(self) -> bool:
        return time.monotonic() >= self.end


def iterate_before(deadline: Deadline, items: Iterator[T], timed_out: Callable[[], Exception]) -> Iterator[T]:
    """`items` (produced in a worker thread) until the deadline, then `timed_out()` is raised. The worker is
    told to stop and close `items`; a read it is blocked in ends by its own timeout, in the background. A deadline
    that passed before the first item (the call's earlier steps took all of it) starts no worker."""
    if deadline.passed:
        raise timed_out()
    with contextlib.closing(in_background(items, poll_s=POLL_S)) as produced:
        for item in produced:
            if deadline.passed:
                raise timed_out()
            if item is not None:
                yield item


def call_before(deadline: Deadline, fn: Callable[[], T], timed_out: Callable[[], Exception]) -> T:
    """`fn()` run in a worker thread; `timed_out()` is raised if it has not returned by the deadline."""

    def one() -> Iterator[tuple[T]]:
        yield (fn(),)  # boxed: in_background reserves None for "still waiting"

    with contextlib.closing(iterate_before(deadline, one(), timed_out)) as results:
        (result,) = next(results)
        return result
