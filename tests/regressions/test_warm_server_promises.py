"""Issue 51 (items 6, 7, low "one idle client blocks the server") and issue 49 (the hand-over forwards only RADSEARCH_*
variables, a refused hand-over is logged): `assistant serve` answers as `ask --no-server` would, or not at all.

One real `assistant serve` process (the evidence answer, no model) in a folder X whose settings name a relative
`RADSEARCH_INDEX=idx`; the tests hand it questions through the client `ask` uses (assistant/warm/client.py `offer`)
and read its log. Each attack comes in two forms.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from llm_fixtures import build_index

from assistant.rag.answer import Answer
from assistant.warm.client import offer
from models.paths import DataPaths
from retriever.reports.record import Report

REPO = Path(__file__).resolve().parents[2]
QUERY = "Blunting of the right costophrenic angle."
ARGS = [QUERY, "--prompt", "evidence", "--json"]
#: Another corpus whose reports answer QUERY differently: an answer from it is told apart by its ids.
OTHER = [
    Report(id="other-1", findings="Blunting of the right costophrenic angle.", impression="Pleural thickening."),
    Report(id="other-2", findings="Blunting of both costophrenic angles.", impression="Chronic pleural scarring."),
    Report(id="other-3", findings="Hyperinflated lungs with flattened diaphragms.", impression="Emphysema."),
]
#: How long a question may take once the server is up (a busy 2-core machine; an idle one answers in a second).
ANSWER_S = 90.0


@dataclass
class Server:
    path: Path
    log: Path
    base: Path
    env: dict[str, str]

    def client_env(self, **extra: str) -> dict[str, str]:
        return {k: v for k, v in self.env.items() if k.startswith("RADSEARCH_")} | extra

    def logged(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def _index(folder: Path, reports: list[Report], encoder) -> Path:
    from retriever.index.report_index import ReportIndex

    ReportIndex.build(reports, encoder=encoder).save(folder)
    return folder


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, minilm) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("warm")
    home = base / "home"
    home.mkdir()
    (home / "models").symlink_to(DataPaths.from_env(os.environ).models)
    build_index(base / "A", minilm)
    _index(base / "B", OTHER, minilm)
    for name in ("x", "y"):
        (base / name).mkdir()
    (base / "x" / "idx").symlink_to(base / "A")  # the server's relative RADSEARCH_INDEX: corpus A
    (base / "y" / "idx").symlink_to(base / "B")  # the same words read in folder y: corpus B
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RADSEARCH_", "XDG_"))}
    env |= {
        "RADSEARCH_HOME": str(home),
        "RADSEARCH_INDEX": "idx",
        "RADSEARCH_LLM_GGUF": "smollm2",
        "XDG_RUNTIME_DIR": str(base / "rt"),
        "PYTHONPATH": str(REPO),
        "COLUMNS": "1000",  # the ready line on one line, path and all
    }
    (base / "rt").mkdir(mode=0o700)
    log = base / "serve.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "assistant.cli", "serve", "--prompt", "evidence"],
            cwd=base / "x",
            env=env,
            stdout=sink,
            stderr=sink,
        )
    try:
        deadline = time.monotonic() + 600
        while not (found := re.search(r"ready: .*?\((/[^)]+)\); Ctrl-C", log.read_text(), re.DOTALL)):
            assert process.poll() is None, f"serve exited {process.returncode}: {log.read_text()}"
            assert time.monotonic() < deadline, "serve never became ready"
            time.sleep(0.3)
        yield Server(Path(found[1]), log, base, env)
    finally:
        process.terminate()
        process.wait(timeout=60)


def _ask(server: Server, args: list[str], cwd: Path, env: dict[str, str] | None = None) -> Answer | None:
    """The server's answer, or None when it refused (the client then answers itself)."""
    offered = offer(server.path, args, str(cwd), server.client_env() if env is None else env)
    if offered is None:
        return None
    *_, answer = list(offered[1])
    assert isinstance(answer, Answer)
    return answer


def _ids(answer: Answer) -> list[str]:
    return [hit.report.id for hit in answer.retrieved]


def _within(seconds: float, work) -> object:
    """`work()` run in a thread; the test fails if it has not returned within `seconds`."""
    box: list[object] = []
    thread = threading.Thread(target=lambda: box.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert box, f"no answer within {seconds:.0f} s: the server is held by another client"
    return box[0]


# ------------------------------------------------------------------------------ item 7: the wrong folder's index
def test_a_relative_index_setting_is_read_in_the_clients_folder(server: Server) -> None:
    """`RADSEARCH_INDEX=idx` in folder y names y/idx (corpus B): the server, started in x, must not answer from
    x/idx (corpus A)."""
    here = _ask(server, ARGS, server.base / "x")
    assert here is not None and _ids(here)[0].startswith("cxr-")  # the server's own folder: it answers
    there = _ask(server, ARGS, server.base / "y")
    assert there is None or all(i.startswith("other-") for i in _ids(there)), _ids(there)  # type: ignore[arg-type]


def test_a_relative_index_setting_that_now_leads_elsewhere_is_not_answered_from_the_old_one(server: Server) -> None:
    """Second form: the same words in the same folder, but `idx` now leads to corpus B (a symlink re-pointed)."""
    link = server.base / "x" / "idx"
    try:
        link.unlink()
        link.symlink_to(server.base / "B")
        answer = _ask(server, ARGS, server.base / "x")
        assert answer is None or all(i.startswith("other-") for i in _ids(answer)), _ids(answer)
    finally:
        link.unlink()
        link.symlink_to(server.base / "A")


# --------------------------------------------------------------------------- item 6: answers from a replaced index
def test_a_report_removed_by_update_is_not_cited_by_the_server(server: Server, minilm) -> None:
    from retriever.index.update import update_index

    folder = build_index(server.base / "C", minilm)
    first = _ask(server, [*ARGS, "--index", str(folder)], server.base / "x")
    assert first is not None
    top = _ids(first)[0]
    update_index(folder, [], removals=[top], encoder=minilm)
    after = _ask(server, [*ARGS, "--index", str(folder)], server.base / "x")
    assert after is not None and top not in _ids(after) and top not in after.cited_report_ids


def test_an_index_rebuilt_in_place_is_the_one_the_server_answers_from(server: Server, minilm) -> None:
    """Second form: the folder replaced as a whole (a rebuild from another corpus, swapped in as builds do)."""
    from retriever.index.swap import replacing

    folder = build_index(server.base / "D", minilm)
    first = _ask(server, [*ARGS, "--index", str(folder)], server.base / "x")
    assert first is not None and _ids(first)[0].startswith("cxr-")
    rebuilt = _index(server.base / "D-rebuilt", OTHER, minilm)
    with replacing(folder) as staged:
        shutil.copytree(rebuilt, staged, dirs_exist_ok=True)
    after = _ask(server, [*ARGS, "--index", str(folder)], server.base / "x")
    assert after is not None and all(i.startswith("other-") for i in _ids(after)), _ids(after)


# ------------------------------------------------------------------- low: one idle client blocks everyone else
def test_a_client_that_sends_nothing_does_not_hold_the_server(server: Server) -> None:
    idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    idle.connect(str(server.path))
    try:
        answer = _within(ANSWER_S, lambda: _ask(server, ARGS, server.base / "x"))
        assert isinstance(answer, Answer)
    finally:
        idle.close()


def test_a_client_that_trickles_its_request_does_not_hold_the_server(server: Server) -> None:
    """Second form: a byte every 0.3 s and never a line's end (each read alone is quick; the request never ends)."""
    trickler = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    trickler.connect(str(server.path))
    stop = threading.Event()

    def trickle() -> None:
        trickler.sendall(b"{")
        while not stop.wait(0.3):
            try:
                trickler.sendall(b" ")
            except OSError:  # the server closed it: what should happen
                return

    threading.Thread(target=trickle, daemon=True).start()
    try:
        answer = _within(ANSWER_S, lambda: _ask(server, ARGS, server.base / "x"))
        assert isinstance(answer, Answer)
    finally:
        stop.set()
        trickler.close()


# ------------------------------------------------- issue 49: only RADSEARCH_* variables, a refusal is logged
def test_the_client_hands_over_only_radsearch_variables(tmp_path: Path) -> None:
    """Fault injection: the test plays the server and reads what a client sends."""
    path = tmp_path / "fake.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    received: list[dict] = []

    def take() -> None:
        connection, _ = listener.accept()
        received.append(json.loads(connection.makefile("r").readline()))
        connection.sendall(b'{"kind": "refused"}\n')
        connection.close()

    threading.Thread(target=take, daemon=True).start()
    env = {"RADSEARCH_LLM_GGUF": "smollm2", "AWS_SECRET_ACCESS_KEY": "s3cr3t", "HOME": "/home/x", "PATH": "/bin"}
    assert offer(path, ARGS, str(tmp_path), env) is None
    listener.close()
    sent = received[0]["env"]
    assert sent and all(key.startswith("RADSEARCH_") for key in sent), sorted(sent)
    assert "s3cr3t" not in json.dumps(received[0])


def test_a_refused_hand_over_is_logged_without_the_question(server: Server) -> None:
    """Two refusals: `--no-server`, and another setting (with the setting's name, never its value or the question)."""
    assert _ask(server, [*ARGS, "--no-server"], server.base / "x") is None
    other = server.client_env(RADSEARCH_LLM_API_KEY="k-51-secret")
    assert _ask(server, ARGS, server.base / "x", other) is None
    log = server.logged()
    assert log.count("refused") >= 2 and "--no-server" in log and "api_key" in log
    assert "k-51-secret" not in log and QUERY not in log
