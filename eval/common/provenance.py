"""Where a results file came from: the commit, the command and the product configuration it measured.

Why: a figure in eval/results is only worth re-measuring if one can tell which code produced it. Every benchmark's
JSON carries a `provenance` object (written by `stamp`): the git commit and whether the checkout had uncommitted
changes, the command line, the time, and the hash of the shipped defaults (models/preset.json: encoder, search and
answer configuration) in the same form as the answers' `configuration_hash` (assistant/rag/configuration.py).
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assistant.rag.configuration import configuration_hash
from models.preset import PRESET

#: Version of the provenance object itself; readers ignore provenance they do not know.
PROVENANCE_VERSION = 1
REPO = Path(__file__).resolve().parents[2]


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def command_line(argv: list[str] | None = None) -> str:
    """The command as it was typed from the checkout: `python -m eval.x.y ARGS`, not the module's file path."""
    args = sys.argv if argv is None else argv
    main = sys.modules.get("__main__")
    module = getattr(getattr(main, "__spec__", None), "name", None)
    head = f"python -m {module.removesuffix('.__main__')}" if module else "python " + (args[0] if args else "")
    return " ".join([head, *args[1:]]).strip()


def provenance(configuration: dict[str, Any] | None = None) -> dict[str, Any]:
    """The provenance object: commit (None outside a git checkout), dirty flag, command, time, preset hash, and
    the hash of `configuration` when the benchmark measured one other than the preset's."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    out: dict[str, Any] = {
        "version": PROVENANCE_VERSION,
        "commit": _git("rev-parse", "HEAD"),
        "dirty": bool(status) if status is not None else None,
        "command": command_line(),
        "written": datetime.now(UTC).isoformat(timespec="seconds"),
        "preset_hash": configuration_hash(PRESET.to_json()),
    }
    if configuration is not None:
        out["configuration_hash"] = configuration_hash(configuration)
    return out


def stamp(payload: dict[str, Any], configuration: dict[str, Any] | None = None) -> dict[str, Any]:
    """`payload` with its provenance added (a new dict; the payload's own keys are kept as they are)."""
    return {**payload, "provenance": provenance(configuration)}
