"""Where the project keeps user data: assembled models, trained encoders and indexes.

Everything lives under one folder so a site can put it on an encrypted disk and back it up as a whole.
Patient data never goes into the repository, so the default is outside it.
"""

from __future__ import annotations

import os
from pathlib import Path


def data_home() -> Path:
    """Root of all user data: `$RADSEARCH_HOME`, else `$XDG_DATA_HOME/radsearch`, else `~/.local/share/radsearch`."""
    explicit = os.environ.get("RADSEARCH_HOME")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "radsearch"


def models_dir() -> Path:
    """Assembled offline models and fine-tuned encoders (one sub-folder each)."""
    return data_home() / "models"


def indexes_dir() -> Path:
    """Report indexes built by `assistant index`."""
    return data_home() / "indexes"


def default_index_dir() -> Path:
    """The index `assistant search`/`ask` use when no `--index` is given (built by `make demo`)."""
    return Path(os.environ.get("RADSEARCH_INDEX", indexes_dir() / "demo")).expanduser()
