"""The real `assistant chat` in a child process, for the regression tests that attack it over HTTP: started with
the given accounts and environment, waited for by polling its page, stopped at the end."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from eval.perf.ports import free_port
from retriever.index.report_index import STORE_FILE
from retriever.index.store import write_store
from retriever.reports.record import Report

REPO = Path(__file__).resolve().parents[1]
START_S = 300.0  # a busy 2-core machine imports Gradio in ~10 s; the stream-limit test allows as long


@contextmanager
def running_chat(folder: Path, accounts: list[tuple[str, str]], **env: str) -> Iterator[str]:
    """Serve the chat on 127.0.0.1 with one `--auth` per account and `env` on top of this process's environment;
    yields its base URL. The index is one report's store: the page reads only that (no model is loaded here)."""
    index = folder / "index"
    index.mkdir(parents=True)
    write_store(index / STORE_FILE, [Report("r:1", "Small right pleural effusion.", "Effusion.", "XR")])
    port = free_port()
    command = [sys.executable, "-m", "assistant.cli", "chat", "--port", str(port), "--index", str(index)]
    command += [arg for user, password in accounts for arg in ("--auth", f"{user}:{password}")]
    full_env = os.environ | {"RADSEARCH_HOME": str(folder / "home"), "PYTHONPATH": str(REPO)} | env
    log = folder / "chat.out"
    with log.open("w") as sink:
        server = subprocess.Popen(command, env=full_env, stdout=sink, stderr=sink)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_serving(server, base, log)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=60)


def wait_until_serving(server: subprocess.Popen, base: str, log: Path) -> None:
    """Poll the chat's page until it answers (the chat prints its start-up lines before it listens); fail with its
    output if it exits, or after START_S."""
    deadline = time.monotonic() + START_S
    while not _answers(base):
        assert server.poll() is None, f"chat exited: {log.read_text()}"
        assert time.monotonic() < deadline, f"chat did not start within {START_S:.0f} s"
        time.sleep(0.5)


def _answers(base: str) -> bool:
    try:
        return httpx.get(f"{base}/", timeout=5).status_code == 200
    except httpx.TransportError:
        return False
