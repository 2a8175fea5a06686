"""Where the project keeps user data: assembled models, trained encoders and indexes.

Everything lives under one folder so a site can put it on an encrypted disk and back it up as a whole.
Patient data never goes into the repository, so the default is outside it.

`DataPaths` is the paths section of the product's settings (assistant/settings.py): the commands read it once from
the environment and pass it down. The functions below are the same paths for library code that is called without
settings (model resolution, training's default output, the benchmarks): they read this process's environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


def _xdg_home(env: Mapping[str, str]) -> Path:
    xdg = env.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "radsearch"


def unusable_folder(path: Path) -> str | None:
    """Why no folder can be made at `path`: `path` or an ancestor is a file, or a symbolic link that leads nowhere
    (nothing can be created under either; a build that found out only when it made its folder ended in a traceback,
    issue 51). None when there is no such part (a folder that cannot be entered is reported by whatever then fails
    to enter it). The data folders (`DataPaths.from_env`) and every output path (retriever/index/output_paths.py)
    are checked with it."""
    for part in (path, *path.parents):
        try:
            if part.is_symlink() and not part.exists():
                return f"{part} is a symbolic link to {os.readlink(part)}, which does not exist"
            if part.exists():
                return None if part.is_dir() else f"{part} is a file, not a folder"
        except OSError:
            return None
    return None


@dataclass(frozen=True)
class DataPaths:
    """The data folders. `index`: the index used when a command gets no `--index` (None: `indexes/demo`)."""

    home: Path = field(default_factory=lambda: _xdg_home({}))
    index: Path | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DataPaths:
        """`$RADSEARCH_HOME`, else `$XDG_DATA_HOME/radsearch`, else `~/.local/share/radsearch`; `$RADSEARCH_INDEX`.
        ValueError naming the variable when no folder can be made where it points (a file on the way, a symlink to
        nothing): checked here, before a command reads anything (issue 51: a build read and encoded every report
        first, then failed writing its models cache and suggested freeing disk space)."""
        explicit = env.get("RADSEARCH_HOME")
        index = env.get("RADSEARCH_INDEX")
        home = Path(explicit).expanduser() if explicit else _xdg_home(env)
        variable = "RADSEARCH_HOME" if explicit else "XDG_DATA_HOME" if env.get("XDG_DATA_HOME") else ""
        if variable and (problem := unusable_folder(home)) is not None:
            raise ValueError(f"{variable}={env[variable]}: {problem}; point it at a folder")
        return cls(home=home, index=Path(index).expanduser() if index else None)

    @property
    def models(self) -> Path:
        """Assembled offline models and fine-tuned encoders (one sub-folder each)."""
        return self.home / "models"

    @property
    def indexes(self) -> Path:
        """Report indexes built by `assistant index`."""
        return self.home / "indexes"

    @property
    def llm_state(self) -> Path:
        """The embedded model's evaluated system prompts (assistant/llm/llamacpp_prefix.py): prompt text, no
        findings."""
        return self.home / "llm_state"

    @property
    def default_index(self) -> Path:
        """The index `assistant search`/`ask`/`chat` use when no `--index` is given (built by `make demo`)."""
        return self.index or self.indexes / "demo"


def data_home() -> Path:
    """Root of all user data (see `DataPaths.from_env`)."""
    return DataPaths.from_env(os.environ).home


def models_dir() -> Path:
    """Assembled offline models and fine-tuned encoders (one sub-folder each)."""
    return DataPaths.from_env(os.environ).models


def default_index_dir() -> Path:
    """The index used when no `--index` is given."""
    return DataPaths.from_env(os.environ).default_index
