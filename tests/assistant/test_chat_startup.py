"""`assistant chat`'s start-up lines say what is on (issue 52): the address and who can reach it, sign-in, the index,
how answers are made and by which model, where feedback is kept; and nothing contradicts the docs (Gradio's "To
create a public link, set `share=True`" line is gone: the chat never makes one)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eval.perf.ports import free_port


@pytest.mark.models
def test_start_up_lines_say_what_is_on_and_nothing_about_share_links(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "RADSEARCH_HOME": str(tmp_path / "home"),  # no index built there (the data home may hold the demo's)
        "RADSEARCH_INDEX": str(tmp_path / "no-index"),
        "RADSEARCH_FEEDBACK": str(tmp_path / "feedback.sqlite"),
        "RADSEARCH_LLM_BACKEND": "openai",
        "RADSEARCH_LLM_BASE_URL": "http://127.0.0.1:9/v1",
        "RADSEARCH_LLM_MODEL": "site-model",
        "RADSEARCH_CHAT_AUTH": "anna:a-long-passphrase",
    }
    command = [sys.executable, "-m", "assistant.cli", "chat", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not any(line.lstrip().startswith("feedback:") for line in lines):
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip())
        time.sleep(3)  # anything printed once the server listens
    finally:
        process.terminate()
        rest, _ = process.communicate(timeout=60)
    text = "\n".join([*lines, rest])
    assert f"RadSearch Assistant chat on http://localhost:{port} (this machine only)" in text, text
    assert "sign-in: on for anna" in text and "a-long-passphrase" not in text
    assert "index: no-index · not built" in text
    assert "answers: Answer from the evidence (no LLM) by default; the language model: " in text
    assert "site-model" in text and f"feedback: kept in {tmp_path / 'feedback.sqlite'}" in text
    assert "share" not in text.lower() and "Running on" not in text
