"""Patient data stays local: `assistant index`, `search`, `ask` and the chat make no connection beyond loopback and
leave no telemetry behind.

Why strace and not a Python socket audit hook: ONNX Runtime's telemetry uploader is C++ (libcurl), invisible to
Python's audit events. strace records every connect/sendto/sendmsg system call of the command and all its threads and
child processes, native or not, so a DNS lookup of an external host (a UDP packet to the resolver) is caught as
surely as an HTTPS upload. Before models/offline.py forced `ORT_DISABLE_TELEMETRY=1`, every command that loaded the
ONNX encoder looked up an external events host within seconds and wrote a device id under ~/.cache.

Needs strace (`.ci/run` installs it; elsewhere the test skips and says how to get it).
"""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from chat_fixtures import FIRST_INDEX, free_port
from llm_fixtures import require_embedded_smollm2

from models.paths import data_home

ASSISTANT = Path(sys.executable).with_name("assistant")
STRACE = shutil.which("strace")
#: Every address a traced call named: `sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.0.0.1")`,
#: `sa_family=AF_INET6, ... inet_pton(AF_INET6, "::1", ...)`, `sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"`.
_ADDRESS = re.compile(
    r"sa_family=(?P<family>AF_\w+)(?:, sin6?_port=htons\((?P<port>\d+)\))?"
    r'(?:[^}]*?(?:inet_addr\("(?P<ip4>[^"]+)"\)|inet_pton\(AF_INET6, "(?P<ip6>[^"]+)"|sun_path="(?P<path>[^"]*)"))?'
)
#: Local name-service daemons: reaching one may be a DNS lookup by proxy. Only a connection that succeeded counts
#: (user-name lookups try nscd too, and where no daemon runs they fail with ENOENT and nothing is sent).
_RESOLVER_SOCKETS = ("nscd", "resolve")
#: Where ONNX Runtime's 1DS telemetry keeps its device id and event database.
ORT_TELEMETRY_DIR = Path(".cache") / "Microsoft"

QUERY = "Blunting of the right costophrenic angle with a meniscus sign"
CORPUS = """id,findings,impression
r1,"Blunting of the right costophrenic angle with a meniscus sign.","Small right pleural effusion."
r2,"Air space opacity in the right lower lobe with air bronchograms.","Right lower lobe pneumonia."
r3,"Enlarged cardiac silhouette, cardiothoracic ratio 0.6.","Cardiomegaly."
r4,"Visceral pleural line at the left apex, no lung markings beyond it.","Left apical pneumothorax."
"""


def outbound(trace: str) -> list[str]:
    """Lines of an strace log that reach beyond this machine: an internet address other than loopback, or a local
    name-service socket (a DNS lookup by proxy)."""
    found = []
    for line in trace.splitlines():
        if any(_leaves_machine(match) for match in _ADDRESS.finditer(line)):
            found.append(line.strip())
    return found


def _leaves_machine(match: re.Match[str]) -> bool:
    family, ip, path = match["family"], match["ip4"] or match["ip6"], match["path"] or ""
    if family in ("AF_INET", "AF_INET6"):
        return ip is not None and not _is_local(ip)
    connected = match.string.rstrip().endswith("= 0")
    return family == "AF_UNIX" and connected and any(name in path for name in _RESOLVER_SOCKETS)


def _is_local(ip: str) -> bool:
    address = ipaddress.ip_address(ip)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified


def test_outbound_flags_dns_and_uploads_but_not_loopback() -> None:
    trace = "\n".join(
        [
            '3670  connect(8, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.255.255.53")}, 16) = 0',
            '3669  connect(7, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = 0',
            '3669  connect(7, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such file)',
            "12 connect(5, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), "
            'inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH',
            '12 connect(5, {sa_family=AF_INET, sin_port=htons(7860), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
            "12 connect(5, {sa_family=AF_INET6, sin6_port=htons(8000), sin6_flowinfo=htonl(0), "
            'inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0',
            "12 connect(5, {sa_family=AF_INET6, sin6_port=htons(80), sin6_flowinfo=htonl(0), "
            'inet_pton(AF_INET6, "::ffff:127.0.0.1", &sin6_addr), sin6_scope_id=0}, 28) = 0',
            '12 connect(6, {sa_family=AF_UNIX, sun_path="/tmp/pymp-x/listener"}, 110) = 0',
            '12 sendto(3, "x", 1, 0, {sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}, 12) = 1',
            '12 connect(5, {sa_family=AF_UNSPEC, sa_data="\\0\\0"}, 16) = 0',
        ]
    )
    flagged = outbound(trace)
    assert len(flagged) == 3
    assert "10.255.255.53" in flagged[0] and "nscd" in flagged[1] and "2001:db8::1" in flagged[2]


# ------------------------------------------------------------------------------------------------ the real commands
@pytest.fixture(scope="module")
def sandbox(plain_sandbox: dict[str, str]) -> dict[str, str]:
    """`plain_sandbox` with the tiny LLM for `ask`."""
    require_embedded_smollm2()
    return plain_sandbox


@pytest.fixture(scope="module")
def plain_sandbox(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A home folder of its own (where telemetry would land), the user's models, and settings for the tiny LLM."""
    if STRACE is None:
        pytest.skip("strace is not installed (apt-get install strace; .ci/run installs it)")
    if not ASSISTANT.is_file():
        pytest.skip(f"{ASSISTANT} is missing: install the project (make venv)")
    home = tmp_path_factory.mktemp("home")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("RADSEARCH_", "HF_", "ORT_", "DO_NOT_TRACK", "GRADIO_", "TRANSFORMERS_"))
    }
    env |= {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "RADSEARCH_HOME": str(data_home()),  # assembled models and ONNX exports, not re-made for this test
        "RADSEARCH_LLM_GGUF": "smollm2",
        "RADSEARCH_LLM_CONTEXT": "2048",
        "RADSEARCH_LLM_TIMEOUT": "300",
        "RADSEARCH_LLM_THREADS": "1",  # two llama.cpp threads crawl when the other core is busy (CI runs other work)
        "XDG_RUNTIME_DIR": str(home),  # the warm server's socket folder
        "COLUMNS": "1000",
    }
    env.pop("XDG_DATA_HOME", None)
    return env


def _traced(log: Path, args: list[str]) -> list[str]:
    return [str(STRACE), "-f", "-qq", "--seccomp-bpf", "-e", "trace=connect,sendto,sendmsg", "-o", str(log), *args]


def _run(env: dict[str, str], log: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _traced(log, [str(ASSISTANT), *args]), env=env, capture_output=True, text=True, timeout=900, check=False
    )


def _assert_silent(env: dict[str, str], log: Path) -> None:
    assert log.is_file(), f"strace wrote no log at {log}"
    flagged = outbound(log.read_text(encoding="utf-8", errors="replace"))
    assert not flagged, "connections beyond loopback:\n" + "\n".join(flagged[:10])
    telemetry = Path(env["HOME"]) / ORT_TELEMETRY_DIR
    assert not telemetry.exists(), f"telemetry files written: {sorted(p.name for p in telemetry.rglob('*'))}"


@pytest.fixture(scope="module")
def built_index(plain_sandbox: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("no-outbound")
    corpus = folder / "reports.csv"
    corpus.write_text(CORPUS, encoding="utf-8")
    log = folder / "index.strace"
    done = _run(plain_sandbox, log, "index", str(corpus), "--encoder", "minilm", "--out", str(folder / "index"))
    assert done.returncode == 0, done.stderr
    _assert_silent(plain_sandbox, log)
    return folder / "index"


def test_index_makes_no_outbound_connection(built_index: Path) -> None:
    assert (built_index / "manifest.json").is_file()


def test_search_makes_no_outbound_connection(sandbox: dict[str, str], built_index: Path, tmp_path: Path) -> None:
    done = _run(sandbox, tmp_path / "search.strace", "search", QUERY, "--index", str(built_index))
    assert done.returncode == 0, done.stderr
    assert "site:r1" in done.stdout
    _assert_silent(sandbox, tmp_path / "search.strace")


def test_ask_makes_no_outbound_connection(sandbox: dict[str, str], built_index: Path, tmp_path: Path) -> None:
    done = _run(sandbox, tmp_path / "ask.strace", "ask", QUERY, "--index", str(built_index))
    assert done.returncode in (0, 5), done.stderr  # 5: SmolLM2 may answer unparseably; the call still happened
    assert "site:r1" in done.stdout
    _assert_silent(sandbox, tmp_path / "ask.strace")


@contextmanager
def _chat(env: dict[str, str], log: Path, index: Path) -> Iterator[str]:
    port = free_port()
    args = ["chat", "--port", str(port), "--index", str(index), "--concurrency", "1"]
    output = log.with_suffix(".out")
    with output.open("w") as sink:  # a pipe nobody reads would fill and stall the server
        server = subprocess.Popen(
            _traced(log, [str(ASSISTANT), *args]), env=env, stdout=sink, stderr=sink, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None, f"chat exited: {output.read_text()}"
            try:
                with urllib.request.urlopen(url, timeout=5):
                    break
            except OSError:
                assert time.monotonic() < deadline, "chat did not start within 300 s"
                time.sleep(1)
        yield url
    finally:
        _stop(server)


def _stop(server: subprocess.Popen) -> None:
    """Stop the chat, then strace. strace detaches from (and so leaves running) what it traces when it is itself
    signalled, so the chat, its child, is stopped first and strace ends with it; the process group is the backstop."""
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children")
    for pid in children.read_text().split() if children.exists() else []:
        os.kill(int(pid), signal.SIGTERM)
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def test_chat_makes_no_outbound_connection(sandbox: dict[str, str], built_index: Path, tmp_path: Path) -> None:
    from gradio_client import Client

    from assistant.chat.service import MODE_ANSWER, MODE_SEARCH

    log = tmp_path / "chat.strace"
    with _chat(sandbox, log, built_index) as url:
        client = Client(url, verbose=False)
        for mode in (MODE_SEARCH, MODE_ANSWER):
            conversation, cards, _notice, _box = client.predict(
                QUERY,
                [],
                mode,
                "findings",
                1,
                True,
                FIRST_INDEX,
                "dense",
                "Any",
                "Any",
                "",
                "",
                api_name="/ask",
            )
            assert 'data-report-id="site:r1"' in cards, cards
        time.sleep(10)  # ONNX Runtime's uploader looked up its host within seconds of the first search
    _assert_silent(sandbox, log)


# ------------------------------------------- issue 51: `index --ray local`, `serve` and `update`, listening sockets too
def listening_beyond_loopback(root: int) -> list[str]:
    """The TCP and UDP sockets that process `root` or one of its descendants listens on at an address other than
    loopback (`ss`): a server reachable from the network."""
    import psutil

    try:
        tree = {root} | {child.pid for child in psutil.Process(root).children(recursive=True)}
    except psutil.NoSuchProcess:
        return []
    table = subprocess.run(["ss", "-Hltunp"], capture_output=True, text=True, check=False).stdout
    found = []
    for line in table.splitlines():
        fields = line.split()
        if len(fields) < 6 or not any(f"pid={pid}," in line for pid in tree):
            continue
        host = fields[4].rpartition(":")[0].strip("[]").removeprefix("::ffff:")
        if host in ("*", "0.0.0.0", "::") or not (host == "localhost" or _is_local(host.partition("%")[0])):
            found.append(line)
    return found


def test_listening_beyond_loopback_reads_ss() -> None:
    with socket.socket() as exposed, socket.socket() as private:
        exposed.bind(("0.0.0.0", 0))
        exposed.listen()
        private.bind(("127.0.0.1", 0))
        private.listen()
        found = listening_beyond_loopback(os.getpid())
        port = exposed.getsockname()[1]
    assert len(found) == 1 and f":{port}" in found[0], found


def _watched(env: dict[str, str], log: Path, args: list[str], until: str | None = None) -> tuple[str, list[str]]:
    """Run `assistant ARGS` under strace, checking its listening sockets every half second; its output and those
    sockets. With `until`, it is stopped (SIGTERM) once its output holds that text."""
    output = log.with_suffix(".out")
    with output.open("w") as sink:
        process = subprocess.Popen(
            _traced(log, [str(ASSISTANT), *args]), env=env, stdout=sink, stderr=sink, start_new_session=True
        )
    exposed: list[str] = []
    deadline = time.monotonic() + 900
    try:
        while process.poll() is None and time.monotonic() < deadline:
            exposed += listening_beyond_loopback(process.pid)
            if until and until in output.read_text(errors="replace"):
                exposed += listening_beyond_loopback(process.pid)
                break
            time.sleep(0.5)
    finally:
        _stop(process)
    return output.read_text(errors="replace"), exposed


@pytest.mark.slow
def test_index_on_a_local_ray_cluster_stays_on_loopback(plain_sandbox: dict[str, str], tmp_path: Path) -> None:
    """`index --ray local`: Ray's servers listen on loopback only, and nothing looks up a public DNS server or the
    cloud metadata address (they did: *:PORT listeners, 8.8.8.8, 169.254.169.254)."""
    pytest.importorskip("ray", reason="Ray is not installed: pip install '.[ray]'")
    corpus = tmp_path / "reports.csv"
    corpus.write_text(CORPUS, encoding="utf-8")
    args = ["index", str(corpus), "--encoder", "minilm", "--ray", "local", "--out", str(tmp_path / "idx")]
    log = tmp_path / "ray.strace"
    printed, exposed = _watched(plain_sandbox, log, args)
    assert (tmp_path / "idx" / "manifest.json").is_file(), printed
    assert not exposed, "listening beyond loopback:\n" + "\n".join(sorted(set(exposed)))
    _assert_silent(plain_sandbox, log)


def test_serve_makes_no_outbound_connection_and_listens_on_no_port(
    plain_sandbox: dict[str, str], built_index: Path, tmp_path: Path
) -> None:
    log = tmp_path / "serve.strace"
    printed, exposed = _watched(
        plain_sandbox, log, ["serve", "--prompt", "evidence", "--index", str(built_index)], until="ready:"
    )
    assert "ready:" in printed, printed
    assert not exposed, "listening beyond loopback:\n" + "\n".join(exposed)
    _assert_silent(plain_sandbox, log)


def test_update_makes_no_outbound_connection(plain_sandbox: dict[str, str], built_index: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    shutil.copytree(built_index, index)
    added = tmp_path / "more.csv"
    added.write_text('id,findings,impression\nr9,"Small left apical pneumothorax.","Pneumothorax."\n', encoding="utf-8")
    log = tmp_path / "update.strace"
    done = _run(plain_sandbox, log, "update", str(added), "--index", str(index))
    assert done.returncode == 0, done.stderr
    _assert_silent(plain_sandbox, log)
