"""Benchmark measures kept as each one finishes, so a run stopped part-way resumes where it was.

Why: on 2 CPU cores one measure of a benchmark can take many minutes (a cross-encoder re-scoring a thousand
queries), and a session or a machine can end in the middle. The finished measures are written to a progress file
(atomically, after each one) together with a key saying what they were measured on; a later run with the same key
reuses them and runs only the rest, a run with another key (other model weights, another split) starts over.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from models.atomic import write_atomic


def run_resumable(
    jobs: Mapping[str, Mapping[str, Callable[[], Any]]],
    key: Any,
    progress: Path | None,
    log: Callable[[str], None] = print,
) -> dict[str, dict[str, Any]]:
    """`jobs` (group -> measure -> function) run in order, skipping those `progress` already holds for `key`; each
    result is saved to `progress` as soon as it is made. Returns group -> measure -> result as JSON gives it back
    (tuples become lists), whether measured now or kept, so a resumed run returns what a fresh one does. The key is
    compared in that form too: a key holding a tuple still matches the one read back."""
    key = _as_json(key)
    kept = json.loads(progress.read_text(encoding="utf-8")) if progress is not None and progress.is_file() else {}
    done: dict[str, dict[str, Any]] = kept.get("done", {}) if kept.get("key") == key else {}
    for group, measures in jobs.items():
        finished = done.setdefault(group, {})
        for measure, run in measures.items():
            if measure in finished:
                log(f"{group}: {measure} (kept from an earlier run)")
                continue
            log(f"{group}: {measure}")
            finished[measure] = _as_json(run())
            if progress is not None:
                write_atomic(progress, json.dumps({"key": key, "done": done}) + "\n")
    return {group: done[group] for group in jobs}


def _as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))
