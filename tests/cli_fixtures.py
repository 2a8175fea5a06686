"""The `assistant` command as a user runs it: a real process of this checkout's interpreter, wide output."""

from __future__ import annotations

import os
import subprocess
import sys

ASSISTANT = [sys.executable, "-m", "assistant.cli"]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ASSISTANT, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {}), "COLUMNS": "200"},
    )
