"""Append-only JSONL cache of benchmark predictions, so an interrupted run resumes where it stopped.

Keyed by (case id, condition, model id, prompt id, max_tokens): changing the model, the prompt version or the
answer's token limit never reuses an old answer (a differential cut at 32 tokens is not the one a user reads), while
rerunning the same configuration costs nothing. Rows written before the limit was recorded were all asked at the
benchmark's old limit, LEGACY_MAX_TOKENS. One line per prediction, flushed at once; a
partly written last line (the run was killed mid-write) is ignored on reading.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

Key = tuple[str, str, str, str, int]
#: The token limit every prediction was asked with before rows recorded theirs.
LEGACY_MAX_TOKENS = 32


def cache_key(case_id: str, condition: str, model_id: str, prompt_id: str, max_tokens: int) -> Key:
    return (case_id, condition, model_id, prompt_id, max_tokens)


class PredictionCache:
    """Thread-safe (server backends answer from a pool of threads), and several processes may append to one file
    (`eval.diagnosis.benchmark --shard`); each reads the others' lines when it starts."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._rows: dict[Key, dict[str, Any]] = {}
        if self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                self._rows[self._key(row)] = row

    @staticmethod
    def _key(row: dict[str, Any]) -> Key:
        return cache_key(
            row["case_id"],
            row["condition"],
            row["model_id"],
            row["prompt_id"],
            int(row.get("max_tokens", LEGACY_MAX_TOKENS)),
        )

    def get(self, key: Key) -> dict[str, Any] | None:
        return self._rows.get(key)

    def put(self, row: dict[str, Any]) -> None:
        """Store and append one prediction (must carry the key fields)."""
        with self._lock:
            self._rows[self._key(row)] = row
            self.path.parent.mkdir(parents=True, exist_ok=True)
            line = (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")
            # One write() on an O_APPEND descriptor: processes sharing the cache (--shard) never interleave lines.
            handle = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(handle, line)
            finally:
                os.close(handle)

    def __len__(self) -> int:
        return len(self._rows)
