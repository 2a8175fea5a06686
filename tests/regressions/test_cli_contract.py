"""Issue 51, low items of the command line's contract: `search/show/ask --json` print a JSON object on stdout for
every exit, errors included; `ask --index '~/...'` expands `~`; a data folder that cannot be one (XDG_DATA_HOME a
file, RADSEARCH_HOME a symlink to nothing) is refused before anything is read, by name, without a disk-space hint.
Real CLI processes; each attack in two forms.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
QUERY = "Blunting of the right costophrenic angle."
CORPUS = "id,findings,impression\nr1,Blunting of the right costophrenic angle.,Small right pleural effusion.\n"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RADSEARCH_", "XDG_"))}
    return (
        env
        | {
            "PYTHONPATH": str(REPO),
            "RADSEARCH_HOME": str(tmp_path / "home"),
            "XDG_RUNTIME_DIR": str(tmp_path),
            "COLUMNS": "200",
        }
        | extra
    )


def _run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assistant", *args],
        cwd=tmp_path,
        env=_env(tmp_path, **env),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _error_object(run: subprocess.CompletedProcess[str], code: int) -> str:
    """The JSON object on stdout of a run that ended with `code`; its message."""
    assert run.returncode == code, run.stderr
    assert run.stdout.strip(), f"nothing on stdout; stderr: {run.stderr}"
    printed = json.loads(run.stdout)
    assert isinstance(printed, dict) and printed["exit_code"] == code, printed
    return printed["error"]


# --------------------------------------------------------------------------- --json always prints a JSON object
@pytest.mark.parametrize(
    "command",
    [["search", QUERY], ["show", "r1"], ["ask", QUERY, "--no-server"]],
    ids=["search", "show", "ask"],
)
def test_json_output_of_a_missing_index_is_a_json_error(tmp_path: Path, command: list[str]) -> None:
    run = _run(tmp_path, *command, "--json", "--index", str(tmp_path / "missing"))
    assert "no index" in _error_object(run, 2)


@pytest.mark.parametrize(
    "command",
    [["search", QUERY, "-k", "0"], ["show"], ["ask", "   ", "--prompt", "evidence"]],
    ids=["search-usage", "show-usage", "ask-empty-query"],
)
def test_json_output_of_a_usage_error_is_a_json_error(tmp_path: Path, command: list[str]) -> None:
    """Second form: errors the command line itself reports (a value out of range, a missing argument, an empty
    question), before any index is read."""
    assert _error_object(_run(tmp_path, *command, "--json"), 2)


def test_json_output_when_the_warm_server_stops_mid_answer_is_a_json_error(tmp_path: Path) -> None:
    """Exit 1: fault injection, a warm server that takes the question and hangs up."""
    from assistant.warm.address import make_private_folder, socket_path
    from models.paths import DataPaths

    path = socket_path(DataPaths(home=tmp_path / "home"), {"XDG_RUNTIME_DIR": str(tmp_path)})
    make_private_folder(path.parent)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def hang_up() -> None:
        connection, _ = listener.accept()
        connection.makefile("r").readline()
        connection.sendall(json.dumps({"kind": "accepted", "output": "json", "query": QUERY}).encode() + b"\n")
        connection.close()

    threading.Thread(target=hang_up, daemon=True).start()
    try:
        run = _run(tmp_path, "ask", QUERY, "--json")
    finally:
        listener.close()
    assert "before its answer was complete" in _error_object(run, 1)


# ------------------------------------------------------------------------------ ask --index '~/...' expands ~
def test_ask_expands_a_quoted_tilde_in_its_index(tmp_path: Path) -> None:
    run = _run(tmp_path, "ask", QUERY, "--no-server", "--index", "~/idx", HOME=str(tmp_path / "user"))
    assert run.returncode == 2
    assert str(tmp_path / "user" / "idx") in run.stderr and "/~/" not in run.stderr, run.stderr


def test_the_warm_server_reads_a_tilde_index_as_the_cli_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Second form: the same arguments read by the warm server (in its own folder, for a client in another)."""
    from assistant.commands.ask_cmd import ask_call, parse_arguments

    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    call = ask_call(parse_arguments([QUERY, "--index=~/idx"]), tmp_path / "elsewhere")
    assert call.options.index == str(tmp_path / "user" / "idx")


# ------------------------------------------------------ a data folder that cannot be one, refused before reading
def _index_command(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    corpus = tmp_path / "reports.csv"
    corpus.write_text(CORPUS, encoding="utf-8")
    command = ["index", str(corpus), "--encoder", "minilm", "--out", str(tmp_path / "idx")]
    return _run(tmp_path, *command, **env)


def test_xdg_data_home_that_is_a_file_is_refused_first(tmp_path: Path) -> None:
    blocker = tmp_path / "data-file"
    blocker.write_text("not a folder\n")
    env = {k: v for k, v in _env(tmp_path).items() if k != "RADSEARCH_HOME"} | {"XDG_DATA_HOME": str(blocker)}
    run = subprocess.run(
        [sys.executable, "-m", "assistant", "index", "demo", "--out", str(tmp_path / "idx")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert run.returncode == 2 and "XDG_DATA_HOME" in run.stderr and "is a file" in run.stderr, run.stderr
    assert "space" not in run.stderr and "records read" not in run.stderr


def test_radsearch_home_that_is_a_dangling_symlink_is_refused_first(tmp_path: Path) -> None:
    link = tmp_path / "home-link"
    link.symlink_to(tmp_path / "gone")
    run = _index_command(tmp_path, RADSEARCH_HOME=str(link))
    said = " ".join(run.stderr.split())  # as one line, however the terminal wrapped it
    # The wording of every path a folder cannot be made at (models.paths.unusable_folder), as for --out and --rejects
    # (test_output_under_dangling_link.py).
    assert run.returncode == 2 and "RADSEARCH_HOME" in said, run.stderr
    assert re.search(r"home-link is a symbolic link to .*gone, which does not exist", said), run.stderr
    assert "space" not in run.stderr and "records read" not in run.stderr
