"""Where a results file came from: the commit, the command and the product configuration it measured.

Why: a figure in eval/results is only worth re-measuring if one can tell which code produced it. Every benchmark's
JSON carries a `provenance` object (written by `stamp`): the git commit and whether the checkout had uncommitted
changes, the command line, the time, and the configuration hash of the settings the run was made under (the preset,
the RADSEARCH_* environment; assistant/settings.py): the same hash `ask --json` and the warm server give for the same
settings, computed by the one function that computes it. A benchmark that measured another configuration adds that
configuration's hash as `measured_configuration_hash`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assistant.settings import Settings, configuration_hash

#: Version of the provenance object itself; readers ignore provenance they do not know. 2: `configuration_hash` is the
#: settings' hash (was `preset_hash`, the preset file's), a measured configuration's is `measured_configuration_hash`.
PROVENANCE_VERSION = 2
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


def provenance(configuration: dict[str, Any] | None = None, settings: Settings | None = None) -> dict[str, Any]:
    """The provenance object: commit (None outside a git checkout), dirty flag, command, time, the configuration
    hash of `settings` (None: this process's environment over its preset), and the hash of `configuration` when the
    benchmark measured one other than the settings'."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    out: dict[str, Any] = {
        "version": PROVENANCE_VERSION,
        "commit": _git("rev-parse", "HEAD"),
        "dirty": bool(status) if status is not None else None,
        "command": command_line(),
        "written": datetime.now(UTC).isoformat(timespec="seconds"),
        "configuration_hash": (settings or Settings.from_env(os.environ)).configuration_hash,
    }
    if configuration is not None:
        out["measured_configuration_hash"] = configuration_hash(configuration)
    return out


def stamp(payload: dict[str, Any], configuration: dict[str, Any] | None = None) -> dict[str, Any]:
    """`payload` with its provenance added (a new dict; the payload's own keys are kept as they are)."""
    return {**payload, "provenance": provenance(configuration)}
