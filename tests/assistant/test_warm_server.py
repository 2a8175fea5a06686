"""`assistant serve` keeps the index and the model loaded, and `assistant ask` hands its question to it (issue 41: a
new process spent seconds loading them before its first token). Real CLI processes, a real index, the real socket
in a private data folder."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from cli_fixtures import CLI, HEAVY, home_env, private_home
from llm_fixtures import require_embedded_smollm2

from assistant.warm.address import make_private_folder, socket_path
from assistant.warm.client import answers
from models.paths import DataPaths

pytestmark = pytest.mark.models  # real CLI processes and a real encoder

REPO = Path(__file__).resolve().parents[2]
QUERY = "Blunting of the right costophrenic angle."
#: The answer from the evidence alone: deterministic and quick (the model's answers are tested last).
EVIDENCE = ("--prompt", "evidence")
START = {"model_label": "x", "evidence_only": True}


@pytest.fixture
def home(tmp_path: Path, minilm) -> Path:
    """A data folder of its own (its socket is this test's), sharing the assembled encoders instead of copying."""
    return private_home(tmp_path, minilm)


def _env(home: Path, **extra: str) -> dict[str, str]:
    return home_env(home, **{"RADSEARCH_LLM_CONTEXT": "2048", "XDG_RUNTIME_DIR": str(home.parent)} | extra)


def _socket(home: Path) -> Path:
    """Where the server of this data folder listens (a private folder of the user: assistant/warm/address.py)."""
    return socket_path(DataPaths(home=home), _env(home))


@contextmanager
def _server(home: Path, *args: str) -> Iterator[subprocess.Popen[str]]:
    command = [sys.executable, "-m", "assistant.cli", "serve", *args]
    process = subprocess.Popen(command, cwd=REPO, env=_env(home), stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not answers(_socket(home)):
            if process.poll() is not None:
                pytest.fail(f"assistant serve exited {process.returncode}: {process.stderr.read()}")  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "assistant serve never became ready"
            time.sleep(0.2)
        yield process
    finally:
        process.terminate()
        process.wait(timeout=60)


def _ask(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "assistant", "ask", QUERY, *args]  # the console script: the hand-over first
    return subprocess.run(command, cwd=REPO, env=_env(home, **env), capture_output=True, text=True, timeout=600)


def _answer(run: subprocess.CompletedProcess[str]) -> dict:
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    answer.pop("timings")
    return answer


def test_ask_gets_from_a_running_server_the_answer_it_would_give_itself(home: Path) -> None:
    alone = _answer(_ask(home, "--json", *EVIDENCE))
    with _server(home, *EVIDENCE):
        assert _answer(_ask(home, "--json", *EVIDENCE)) == alone
        printed = _ask(home, *EVIDENCE)
    assert printed.returncode == 0 and "similar reports" in printed.stdout and "Most likely diagnosis" in printed.stdout
    assert printed.stdout.index("similar reports") < printed.stdout.index("Most likely diagnosis")


_PROBE = """import contextlib, io, sys
from assistant.__main__ import main
sys.argv = ["assistant", "ask", {query!r}, *{flags!r}]
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main()
print(sorted(m for m in {modules!r} if m in sys.modules))
"""


def test_an_ask_the_server_answers_loads_no_index_encoder_model_or_cli_library(home: Path) -> None:
    probe = [sys.executable, "-c", _PROBE.format(query=QUERY, flags=EVIDENCE, modules=HEAVY + CLI)]
    with _server(home, *EVIDENCE):
        handed = subprocess.run(probe, cwd=REPO, env=_env(home), capture_output=True, text=True, timeout=600)
    alone = subprocess.run(probe, cwd=REPO, env=_env(home), capture_output=True, text=True, timeout=600)
    assert handed.returncode == 0 and handed.stdout.strip() == "[]", handed.stderr
    for module in ("numpy", "faiss", "typer"):  # the probe sees them when ask loads the index itself
        assert module in alone.stdout


def test_the_server_reads_the_arguments_as_the_cli_does(home: Path, tmp_path: Path) -> None:
    """Arguments go over as typed: an index folder relative to the client's working folder, --json, a usage error
    (the CLI reports it, exit 2) and --no-server (answered by ask itself) all come out as without a server."""
    index = os.path.relpath(home / "indexes" / "demo", tmp_path)
    command = [sys.executable, "-m", "assistant", "ask", QUERY, "--index", index, "--json", *EVIDENCE]

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*command, *extra], cwd=tmp_path, env=_env(home), capture_output=True, text=True)

    alone = _answer(run("--no-server"))
    with _server(home, *EVIDENCE) as server:
        handed = _answer(run())
        typo = run("-k", "0")
        server.terminate()
        _, log = server.communicate(timeout=60)
    assert handed == alone and log.count("answered a question in") == 1
    assert typo.returncode == 2 and "-k" in typo.stderr


def test_only_an_ask_under_the_same_settings_is_handed_over_and_the_socket_is_private(home: Path) -> None:
    """The server says on stderr when it answers (the time, never the finding): `ask` hands its question over; with
    --no-server, or under another setting (its answer could differ), it answers itself."""
    with _server(home, *EVIDENCE) as server:
        sock = _socket(home)
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600 and stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
        assert _ask(home, *EVIDENCE).returncode == 0
        assert _ask(home, "--no-server", *EVIDENCE).returncode == 0
        assert _ask(home, *EVIDENCE, RADSEARCH_LLM_THREADS="1").returncode == 0
        again = subprocess.run(
            [sys.executable, "-m", "assistant.cli", "serve"], cwd=REPO, env=_env(home), capture_output=True, text=True
        )
        assert again.returncode == 2 and "already answers" in again.stderr
        server.terminate()
        _, log = server.communicate(timeout=60)
    assert log.count("answered a question in") == 1 and QUERY not in log
    assert not sock.exists()  # removed on the way out


def test_a_socket_left_by_a_killed_server_is_ignored_then_replaced(home: Path) -> None:
    sock = _socket(home)
    make_private_folder(sock.parent)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(sock))
    dead.close()  # the file stays, nobody listens
    assert sock.exists() and not answers(sock)
    assert _ask(home, *EVIDENCE).returncode == 0
    with _server(home, *EVIDENCE):
        assert answers(sock)


def test_a_model_answer_streams_through_the_server(home: Path) -> None:
    require_embedded_smollm2()
    with _server(home, "--prompt", "diagnosis_evidence"):
        run = _ask(home, "--prompt", "diagnosis_evidence")
    assert run.returncode in (0, 5), run.stderr  # 5: SmolLM2 wrote no usable answer (still shown as such)
    assert "is writing" in run.stdout and run.stdout.index("similar reports") < run.stdout.index("is writing")


def _fake_server(home: Path) -> socket.socket:
    """Fault injection: a listening socket where `ask` looks for its warm server; the test plays the server."""
    home.mkdir()
    sock_path = _socket(home)
    make_private_folder(sock_path.parent)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(sock_path))
    listener.listen(1)
    return listener


def test_a_server_that_stops_mid_answer_is_an_error_that_says_what_to_do(tmp_path: Path) -> None:
    """Fault injection: a socket that takes the question, starts an answer and hangs up."""
    import threading

    home = tmp_path / "home"
    listener = _fake_server(home)

    def hang_up() -> None:
        connection, _ = listener.accept()
        connection.makefile("r").readline()
        for event in ({"kind": "accepted", "output": "stream", "query": QUERY}, {"kind": "start", **START}):
            connection.sendall(json.dumps(event).encode() + b"\n")
        connection.close()

    threading.Thread(target=hang_up, daemon=True).start()
    run = _ask(home)
    listener.close()
    assert run.returncode == 1 and "before its answer was complete" in run.stderr and "--no-server" in run.stderr
    assert "Traceback" not in run.stderr


def test_ctrl_c_while_the_server_answers_ends_ask_quietly(tmp_path: Path) -> None:
    """Fault injection: a socket that takes the question and never answers; Ctrl-C ends `ask` with the shell's code
    for it (130), no traceback, and the server sees the connection close (which stops its answer)."""
    import signal
    import threading

    home = tmp_path / "home"
    listener = _fake_server(home)
    taken, closed = threading.Event(), threading.Event()

    def stall() -> None:
        connection, _ = listener.accept()
        connection.makefile("r").readline()
        accepted = {"kind": "accepted", "output": "stream", "query": QUERY}
        connection.sendall(json.dumps(accepted).encode() + b"\n")
        taken.set()
        if connection.recv(1) == b"":  # blocks until the client goes away
            closed.set()
        connection.close()

    threading.Thread(target=stall, daemon=True).start()
    command = [sys.executable, "-m", "assistant", "ask", QUERY]
    process = subprocess.Popen(
        command,
        cwd=REPO,
        env=_env(home),
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        # As from a terminal: a job started in the background (CI) inherits SIGINT ignored, and Ctrl-C never arrives.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert taken.wait(60), "ask never reached the server"
    time.sleep(1.0)  # the client reads `accepted` and waits for the answer's events
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    listener.close()
    assert process.returncode == 130 and b"Traceback" not in stderr
    assert closed.wait(10)
