"""Run a blocking iterator in a worker thread, so the caller stays responsive while it waits.

Two callers need this: the chat keeps the page updating while the model reads its prompt, and the HTTP LLM
backend gives up at its deadline even when the server is still trickling bytes (an HTTP read cannot be
interrupted from the waiting thread, so the waiting happens in another one).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class _Failure:
    error: BaseException


_END = object()


def in_background(items: Iterator[T], poll_s: float = 0.1) -> Iterator[T | None]:
    """Run `items` in a worker thread and yield each item, or None every `poll_s` while waiting (so `items`
    must not yield None themselves). An exception in the worker is raised here. Closing this generator stops
    the worker at its next item and closes `items`, which releases what they hold (a shared model, a
    connection)."""
    box: queue.Queue[Any] = queue.Queue()
    stop = threading.Event()

    def work() -> None:
        try:
            for item in items:
                if stop.is_set():
                    break
                box.put(item)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, re-raised there
            box.put(_Failure(exc))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()
            box.put(_END)

    threading.Thread(target=work, name="background-iterator", daemon=True).start()
    try:
        while True:
            try:
                item = box.get(timeout=poll_s)
            except queue.Empty:
                yield None
                continue
            if item is _END:
                return
            if isinstance(item, _Failure):
                raise item.error
            yield item
    finally:
        stop.set()
