"""Where the warm server listens, and the key that says whether it answers as this process would."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assistant.settings import Settings
    from models.paths import DataPaths


def socket_path(paths: DataPaths) -> Path:
    """The server's socket: `run/ask.sock` in the data folder (the folder is made owner-only by the server)."""
    return paths.home / "run" / "ask.sock"


def settings_key(settings: Settings) -> str:
    """The settings' configuration hash (assistant/settings.py: everything that changes an answer, query expansion
    included): a server started under other settings would answer differently, so `ask` answers itself instead."""
    return settings.configuration_hash
