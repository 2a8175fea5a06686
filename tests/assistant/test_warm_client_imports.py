"""What `ask` imports once a warm server has taken its question, checked without a server (fast tier): the
hand-over and the printing of every part of an answer, the model's knowledge beside weak evidence included, load no
index, encoder, model or CLI library (CI found the printing importing langchain-core through the model-knowledge
line; the full check with a running server is tests/assistant/test_warm_server.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cli_fixtures import CLI, HEAVY

REPO = Path(__file__).resolve().parents[2]


def test_the_hand_over_and_the_answer_printing_import_no_heavy_or_cli_library() -> None:
    code = (
        "import sys\n"
        "import assistant.__main__, assistant.commands.ask_warm, assistant.warm.client, assistant.warm.address\n"
        "import rich.console, assistant.commands.ask_output\n"
        f"print(sorted(m for m in {HEAVY + CLI!r} if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
