"""A real local Ray cluster for the Ray tests and benchmark: `ray start --head` plus worker nodes (`ray start
--address`), one CPU each, on loopback, without dashboard or usage stats, with a token of its own.

    with local_cluster(nodes=2, code=REPO) as cluster:
        subprocess.run([..., "--ray", cluster.address], env=cluster.driver_env())

Each `ray start --block` is the leader of a session of its own: stopping the cluster kills every process of those
sessions (the raylet, its workers, the encoder actors), whatever happened to the driver, and removes its temp folder.
The token is Ray's token authentication, set for the nodes and every driver, so that nothing depends on or is written
to ~/.ray (a local `ray.init()` saves a token there, which `ray start` would then pick up).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from eval.perf.ports import free_port


@dataclass
class LocalCluster:
    """The head's address and the `ray start` processes (head first)."""

    address: str
    temp: Path
    env: dict[str, str]
    nodes: list[subprocess.Popen] = field(default_factory=list)

    def driver_env(self, **extra: str) -> dict[str, str]:
        """This process's environment with the cluster's token: what a driver needs to join."""
        return {**os.environ, **{k: v for k, v in self.env.items() if k.startswith("RAY_AUTH")}, **extra}

    def processes(self, node: int) -> list[int]:
        """Every process of a node: its session."""
        return [pid for pid in _pids() if _sid(pid) == self.nodes[node].pid]

    def actors(self, node: int) -> list[tuple[int, str]]:
        """(pid, process title) of the encoder actors on a node (Ray titles them `ray::EncoderActor[.method]`)."""
        found = [(pid, _cmdline(pid)) for pid in self.processes(node)]
        return [(pid, title) for pid, title in found if title.startswith("ray::EncoderActor")]

    def add_node(self) -> None:
        """Start one more node (one CPU) and wait until the cluster counts it."""
        name = "head" if not self.nodes else f"worker{len(self.nodes)}"
        if self.nodes:
            where = ["--address", self.address]
        else:
            port = self.address.rpartition(":")[2]
            where = ["--head", "--port", port, "--include-dashboard=false", "--temp-dir", str(self.temp)]
        options = ["--block", "--num-cpus", "1", "--num-gpus", "0", "--node-ip-address", "127.0.0.1"]
        options += ["--object-store-memory", str(100 * 2**20), "--disable-usage-stats"]
        with (self.temp / f"{name}.log").open("w") as log:
            self.nodes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "ray.scripts.scripts", "start", *options, *where],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=self.env,
                    start_new_session=True,
                )
            )
        self._wait_for_cpus(len(self.nodes))

    def stop(self) -> None:
        for number, node in enumerate(self.nodes):
            for pid in self.processes(number):
                kill(pid)
            node.wait(timeout=30)
        shutil.rmtree(self.temp, ignore_errors=True)

    def _wait_for_cpus(self, cpus: int, timeout: float = 180) -> None:
        probe = f"import ray; ray.init(address={self.address!r}, logging_level='ERROR'); "
        probe += "print(int(ray.cluster_resources().get('CPU', 0)))"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=self.env)
            if done.returncode == 0 and done.stdout.strip() == str(cpus):
                return
            time.sleep(2)
        raise TimeoutError(f"the Ray cluster at {self.address} did not reach {cpus} CPUs in {timeout} s")


@contextmanager
def local_cluster(nodes: int, code: Path) -> Iterator[LocalCluster]:
    """A cluster of `nodes` node processes running the code in `code` (as an installed package would be on a real
    cluster); stopped however the block ends."""
    temp = Path(tempfile.mkdtemp(prefix="rs-ray-", dir="/tmp"))  # Ray's socket paths must stay short
    env = {
        **os.environ,
        "PYTHONPATH": str(code),
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
    }
    cluster = LocalCluster(f"127.0.0.1:{free_port()}", temp, env)
    try:
        for _ in range(nodes):
            cluster.add_node()
        yield cluster
    finally:
        cluster.stop()


def kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _sid(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""
