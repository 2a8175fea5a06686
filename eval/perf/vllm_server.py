"""Start the vLLM CPU server (from `make vllm-venv`) on 127.0.0.1, and stop it by its PID.

One place for the command line, so the benchmarks (eval/perf/answer.py, concurrency.py) and the integration test
(tests/system/test_vllm_integration.py) measure and test the same server. `--no-enable-prefix-caching`: a latency
benchmark sends the same prompt twice (raw backend, then the project), and a cached prefix would make the second
one look free. Threads: vLLM's CPU worker binds its OpenMP threads to the cores in VLLM_CPU_OMP_THREADS_BIND.
RADSEARCH_VLLM_PYTHON points at another vLLM installation than the repo's .vllm-venv.
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from eval.perf.ports import free_port
from models.paths import models_dir

REPO = Path(__file__).resolve().parents[2]
VLLM_PYTHON = Path(os.environ.get("RADSEARCH_VLLM_PYTHON", REPO / ".vllm-venv" / "bin" / "python"))
MODEL_DIR_NAME = "smollm2-135m-hf"
SERVED_NAME = "smollm2-135m"
START_TIMEOUT_S = 300


class ServerUnavailable(Exception):
    """vLLM is not installed here or did not start; the message says why."""


def missing() -> str | None:
    """Why the server cannot be started here (no vLLM venv, no converted model), or None when it can."""
    if not VLLM_PYTHON.is_file():
        return f"no vLLM at {VLLM_PYTHON}: run `make vllm-venv`"
    if not (models_dir() / MODEL_DIR_NAME / "config.json").is_file():
        return f"no converted SmolLM2 at {models_dir() / MODEL_DIR_NAME}: run `make vllm-venv`"
    return None


@contextmanager
def vllm_server(log_path: Path, *, cores: str = "0") -> Iterator[tuple[str, float]]:
    """(base URL, seconds until healthy) of a running server; stopped on exit. `cores`: CPUs its threads use."""
    if reason := missing():
        raise ServerUnavailable(reason)
    model = models_dir() / MODEL_DIR_NAME
    port = free_port()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_CPU_OMP_THREADS_BIND": cores,
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
    }
    command = [
        str(VLLM_PYTHON), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model),
        "--served-model-name", SERVED_NAME, "--host", "127.0.0.1", "--port", str(port),
        "--max-model-len", "2048", "--dtype", "float32", "--enforce-eager", "--no-enable-prefix-caching",
    ]  # fmt: skip
    start = time.monotonic()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        while True:
            if server.poll() is not None:
                raise ServerUnavailable(f"vLLM exited with {server.returncode}; see {log_path}")
            if time.monotonic() - start > START_TIMEOUT_S:
                raise ServerUnavailable(f"vLLM not ready after {START_TIMEOUT_S} s; see {log_path}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(1)
        yield f"http://127.0.0.1:{port}/v1", time.monotonic() - start
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
