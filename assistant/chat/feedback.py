"""The chat's side of residents' feedback: each answer it shows gets a random key, and a verdict given on the page
names the answer by that key.

Why keys and not the answer itself: the page (the browser) could send any answer text, and the store must hold the
answer the resident was actually shown, with its configuration hash. So the answers of this server run are kept here,
in memory, the most recent `MAX_KEPT`, and a verdict is stored (assistant/feedback/store.py) with the one its key
names. The conversation itself stays in the browser; only a judged answer reaches the feedback file. After a restart
the keys are gone, and so is the browser's stored conversation (it is encrypted with a key of the server run).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import replace

from assistant.feedback.store import Answered, FeedbackError, FeedbackStore, Verdict

MAX_KEPT = 2000
UNKNOWN_ANSWER = "This answer is from before the chat restarted (or too long ago): ask again to give feedback on it."


class RecentAnswers:
    """The answers of this server run by key, and the store their verdicts go to (thread-safe)."""

    def __init__(self, store: FeedbackStore, kept: int = MAX_KEPT) -> None:
        self.store = store
        self._kept = kept
        self._answers: OrderedDict[str, Answered] = OrderedDict()
        self._lock = threading.Lock()

    def keep(self, answered: Answered) -> str:
        """Remember an answer shown on the page; its key."""
        key = secrets.token_urlsafe(16)
        with self._lock:
            self._answers[key] = answered
            while len(self._answers) > self._kept:
                self._answers.popitem(last=False)
        return key

    def get(self, key: str) -> Answered | None:
        with self._lock:
            return self._answers.get(key)

    def judge(self, key: str, verdict: Verdict, user: str | None) -> tuple[int, Answered]:
        """Store `user`'s verdict on the answer of `key` (a second verdict on it updates the same entry); the entry's
        id and the answer. FeedbackError for a key this run does not know, or a verdict that says nothing."""
        answered = self.get(key or "")
        if answered is None:
            raise FeedbackError(UNKNOWN_ANSWER)
        return self.store.record(replace(answered, user=user), verdict, key=key), answered
