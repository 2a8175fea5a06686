"""The `assistant` command as a user runs it: a real process of this checkout's interpreter, wide output; and a data
folder of a test's own for the commands to run in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from llm_fixtures import build_index

from models.paths import DataPaths

ASSISTANT = [sys.executable, "-m", "assistant.cli"]
#: What a warm server has loaded so that `ask` need not, and the CLI framework that reads the arguments: an `ask` the
#: server answers imports none of them (each costs tenths of a second of `ask`'s start-up, which is all that
#: separates its first token from the chat's).
HEAVY = ("numpy", "faiss", "scipy", "bm25s", "torch", "onnxruntime", "llama_cpp", "langchain_core", "transformers")
CLI = ("typer", "pydantic")


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ASSISTANT, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {}), "COLUMNS": "200"},
    )


def private_home(tmp_path: Path, encoder: Any) -> Path:
    """A data folder of a test's own, `tmp_path/home` (so its warm-server socket and answers are the test's), with a
    default index built with `encoder`; it shares the assembled models by a link instead of copying them."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(DataPaths.from_env(os.environ).models)
    build_index(home / "indexes" / "demo", encoder)
    return home


def home_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment for a command run in the data folder `home`: none of this process's RADSEARCH_
    settings, the small embedded model (smollm2) for answers, then `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RADSEARCH_")}
    return env | {"RADSEARCH_HOME": str(home), "RADSEARCH_LLM_GGUF": "smollm2"} | extra
