"""Issue 51 item 11 and two low items: where `assistant serve` puts its socket. A data folder shared by several users
must keep working for all of them, `serve` must not chmod what a `run` symlink leads to, and a data folder path longer
than a Unix socket address (~100 bytes) must not be a traceback.

Each `serve` here is given a missing index, so it stops (exit 2, "no index") right after binding its socket: what is
checked is everything before that, in seconds, without loading a model. The other user is `nobody` (uid 65534),
which needs root to become; those tests skip otherwise.
"""

from __future__ import annotations

import importlib
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534
#: What the other user's `ask` and `serve` import, imported before the fork (see `_as_nobody`).
PRELOADED = (
    "assistant.commands.ask_warm",
    "assistant.warm.client",
    "assistant.warm.server",
    "assistant.llm_factory",
    "assistant.rag.lc_retriever",
    "assistant.rag.pipeline",
    "retriever.index.report_index",
    "retriever.search.methods",
)
#: A path component long enough that two of them overflow a socket address (108 bytes) under any temp folder.
LONG = "a-data-folder-name-that-is-long-enough-to-overflow-a-unix-socket-address"


def _env(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RADSEARCH_", "XDG_"))}
    return env | {"PYTHONPATH": str(REPO)} | settings


def _serve(env: dict[str, str], user: int | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "assistant.cli", "serve", "--prompt", "evidence", "--index", "/nonexistent/idx"]
    return subprocess.run(
        command, cwd="/", env=env, capture_output=True, text=True, timeout=300, preexec_fn=_as(user), check=False
    )


def _as(user: int | None):
    if user is None:
        return None

    def become() -> None:
        os.setgroups([])
        os.setgid(user)
        os.setuid(user)

    return become


def _stopped_after_binding(run: subprocess.CompletedProcess[str]) -> None:
    """The server got past its socket and stopped at the missing index, with no traceback."""
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == 2 and "no index at" in run.stderr, run.stderr


# ----------------------------------------------------------------------- serve chmods what `run` resolves to
def test_serve_leaves_the_folder_a_run_symlink_leads_to_alone(tmp_path: Path) -> None:
    home, shared = tmp_path / "home", tmp_path / "shared"
    home.mkdir()
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    (home / "run").symlink_to(shared)
    _stopped_after_binding(_serve(_env(RADSEARCH_HOME=str(home), XDG_RUNTIME_DIR=str(tmp_path))))
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755


def test_serve_leaves_the_file_a_run_symlink_leads_to_alone(tmp_path: Path) -> None:
    """Second form: `run` leads to a file."""
    home, notes = tmp_path / "home", tmp_path / "notes.txt"
    home.mkdir()
    notes.write_text("kept\n")
    notes.chmod(0o644)
    (home / "run").symlink_to(notes)
    _stopped_after_binding(_serve(_env(RADSEARCH_HOME=str(home), XDG_RUNTIME_DIR=str(tmp_path))))
    assert stat.S_IMODE(notes.stat().st_mode) == 0o644 and notes.read_text() == "kept\n"


# --------------------------------------------------------------------- a data folder path over ~100 bytes
def test_serve_in_a_data_folder_with_a_long_path(tmp_path: Path) -> None:
    home = tmp_path / LONG / LONG
    home.mkdir(parents=True)
    assert len(str(home)) > 108
    _stopped_after_binding(_serve(_env(RADSEARCH_HOME=str(home))))


def test_serve_with_a_long_xdg_data_home_and_a_long_runtime_folder(tmp_path: Path) -> None:
    """Second form: the data folder comes from XDG_DATA_HOME, and XDG_RUNTIME_DIR is too long for a socket too."""
    data, runtime = tmp_path / LONG / "data", tmp_path / LONG / LONG
    data.mkdir(parents=True)
    runtime.mkdir(parents=True, mode=0o700)
    _stopped_after_binding(_serve(_env(XDG_DATA_HOME=str(data), XDG_RUNTIME_DIR=str(runtime))))


def test_a_socket_folder_that_is_not_private_is_refused_with_what_to_do(tmp_path: Path) -> None:
    """The socket's folder may be made by someone else first (in /tmp): open to others, `serve` says so and stops,
    and `ask` does not connect to a socket found there (another user could read the questions)."""
    folder = tmp_path / f"radsearch-{os.getuid()}"
    folder.mkdir()
    folder.chmod(0o777)
    run = _serve(_env(RADSEARCH_HOME=str(tmp_path / "home"), XDG_RUNTIME_DIR=str(tmp_path)))
    said = " ".join(run.stderr.split())  # as one line: where the message wraps depends on the temporary path's length
    assert run.returncode == 2 and "open to other users" in said and "Traceback" not in said
    from assistant.warm.address import socket_path
    from assistant.warm.client import answers
    from models.paths import DataPaths

    path = socket_path(DataPaths(home=tmp_path / "home"), {"XDG_RUNTIME_DIR": str(tmp_path)})
    planted = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    planted.bind(str(path))
    planted.listen(1)
    try:
        assert not answers(path)
    finally:
        planted.close()


# ------------------------------------------------- item 11: one user's serve breaks everyone's ask (needs root)
@pytest.fixture
def shared_home() -> Iterator[Path]:
    """A data folder every user may read, where the first user's `serve` made `run/` 0700 with its socket in it (as
    `serve` did before issue 51), and a private runtime folder for `nobody`."""
    if os.getuid() != 0:
        pytest.skip("becoming another user needs root")
    base = Path(tempfile.mkdtemp(prefix="radsearch-shared-"))
    base.chmod(0o755)
    home = base / "home"
    (home / "run").mkdir(parents=True, mode=0o700)
    home.chmod(0o755)
    held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    held.bind(str(home / "run" / "ask.sock"))
    held.listen(1)
    runtime = base / "nobody-runtime"
    runtime.mkdir(mode=0o700)
    os.chown(runtime, NOBODY, NOBODY)
    try:
        yield home
    finally:
        held.close()
        shutil.rmtree(base, ignore_errors=True)


def _as_nobody(work: Callable[[], object], env: dict[str, str]) -> str:
    """`repr(work())` computed by a forked child that became `nobody` with `env` as its environment, or the
    exception it raised as `TypeName: message`. Forked, not started anew: this Python's own files are under /root,
    which `nobody` cannot read, so what the child needs is imported before the fork."""
    for module in PRELOADED:
        importlib.import_module(module)
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.environ.clear()
            os.environ.update(env)
            os.chdir("/")
            result = repr(work())
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            result = f"{type(exc).__name__}: {exc}"
        os.write(writer, result.encode())
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        result = pipe.read().decode()
    os.waitpid(pid, 0)
    return result


def _nobody_env(home: Path) -> dict[str, str]:
    return {"RADSEARCH_HOME": str(home), "XDG_RUNTIME_DIR": str(home.parent / "nobody-runtime"), "HOME": "/nonexistent"}


@pytest.mark.parametrize("args", [["Small effusion."], ["Small effusion.", "--no-server", "--json"]])
def test_another_users_ask_in_a_shared_data_folder(shared_home: Path, args: list[str]) -> None:
    """`ask` (and `ask --no-server`, which offers its arguments first too) by another user: no server of theirs
    answers, so `ask` goes on to answer itself (None), never a PermissionError."""
    from assistant.commands.ask_warm import hand_over

    assert _as_nobody(lambda: hand_over(args), _nobody_env(shared_home)) == "None"


def test_another_users_serve_in_a_shared_data_folder(shared_home: Path) -> None:
    """Second form: the other user starts a server of their own in the same data folder; it gets past its socket
    and stops at the missing index."""
    from assistant.rag.assemble import AskOptions
    from assistant.settings import Settings
    from assistant.warm.server import serve

    def start() -> None:
        warm = AskOptions(prompt="evidence", index="/nonexistent/idx")
        serve(Settings.from_env(os.environ), warm, lambda args, cwd: None)  # type: ignore[arg-type,return-value]

    assert _as_nobody(start, _nobody_env(shared_home)).startswith("IndexLoadError: no index at")
