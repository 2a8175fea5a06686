"""Where the warm server listens, and the key that says whether it answers as this process would.

The socket is not in the data folder (issue 51): a data folder may be shared by several users, and a folder made
owner-only there broke every other user's `ask`; `run` there may be a symlink, whose target a server must not chmod;
and a data folder path over ~100 bytes does not fit a Unix socket address (108 bytes). It lives in a private folder
of this user, `$XDG_RUNTIME_DIR/radsearch-UID` (else `/tmp/radsearch-UID`), named by a digest of the resolved data
folder, so each user has their own server per data folder and the path is short. A folder there that is not this
user's own, private, real folder (another user may create `/tmp/radsearch-UID` first) is never used: `ask` then
answers itself, and `serve` says what to do.

The key is a digest of every setting with every path in it resolved against the working folder it was read in:
`RADSEARCH_INDEX=idx` names another index in another folder (issue 51: the server answered from its own).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import fields, is_dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assistant.settings import Settings
    from models.paths import DataPaths

#: The longest path a Unix socket address holds on Linux (sun_path is 108 bytes with its terminating zero).
MAX_SOCKET_PATH = 107
#: Where the private folder goes when XDG_RUNTIME_DIR is unset or too long for a socket path.
FALLBACK_RUNTIME = Path("/tmp")


class UnsafeSocketFolder(ValueError):
    """The folder the socket would go in is not this user's own private folder; the message says what to do."""


def socket_path(paths: DataPaths, env: Mapping[str, str]) -> Path:
    """The socket of the server for the data folder `paths.home` (resolved): `RUNTIME/radsearch-UID/DIGEST.sock`,
    RUNTIME being `env`'s XDG_RUNTIME_DIR when the path fits a socket address, else /tmp."""
    digest = hashlib.sha256(str(paths.home.expanduser().resolve()).encode()).hexdigest()[:16]
    name = Path(f"radsearch-{os.getuid()}") / f"{digest}.sock"
    runtime = env.get("XDG_RUNTIME_DIR") or ""
    if runtime and Path(runtime).is_absolute() and len(os.fsencode(Path(runtime) / name)) <= MAX_SOCKET_PATH:
        return Path(runtime) / name
    return FALLBACK_RUNTIME / name


def private_folder_problem(folder: Path) -> str | None:
    """Why `folder` must not hold this user's socket (a symlink, not a folder, another user's, open to others), or
    None when it is this user's own private folder (or absent)."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{folder} cannot be read ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder (a symlink or a file)"
    if info.st_uid != os.getuid():
        return f"{folder} belongs to another user (uid {info.st_uid})"
    if info.st_mode & 0o077:
        return f"{folder} is open to other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def make_private_folder(folder: Path) -> None:
    """Create `folder` owner-only (mode 0700), or check that it is; UnsafeSocketFolder otherwise. Nothing is ever
    chmodded: a folder that exists with a wider mode is reported, not changed."""
    try:
        folder.mkdir(mode=0o700, parents=False)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UnsafeSocketFolder(f"cannot create {folder} for the warm server's socket: {exc.strerror}") from exc
    if problem := private_folder_problem(folder):
        raise UnsafeSocketFolder(
            f"the warm server's socket goes in {folder}, but {problem}: remove it (or set XDG_RUNTIME_DIR to a "
            "private folder of yours) and start `assistant serve` again"
        )


def resolved(settings: Settings, cwd: Path) -> Settings:
    """`settings` with every path they hold read from `cwd`, as the process that read them would: the data folder,
    the default index, the abbreviation table, and a model file or re-ranker folder named by a relative path."""
    return _resolve_fields(settings, cwd)


def _resolve_fields(value: Any, cwd: Path) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _resolve_fields(getattr(value, f.name), cwd) for f in fields(value) if f.init}
        return replace(value, **changes)
    if isinstance(value, Path):
        return (cwd / value.expanduser()).resolve()
    if isinstance(value, str):
        return resolved_path_text(value, cwd)
    return value


def resolved_path_text(value: str, cwd: Path, *, existing: bool = True) -> str:
    """A setting or option that names a file or folder (`./model.gguf`, `../rerankers/x@0.5`, `~/enc`, `dir/x`, or,
    when `existing`, any name that exists in `cwd`) as its resolved path; other text (a model name, a URL) as it
    is."""
    head, marker, weight = value.rpartition("@")
    weighted = bool(marker and head and _number(weight))
    name = head if weighted else value
    looks_like_path = name.startswith(("/", "~")) or "/" in name
    if not name.strip() or "://" in name or not (looks_like_path or (existing and _exists(cwd / name))):
        return value
    path = str((cwd / Path(name).expanduser()).resolve())
    return f"{path}@{weight}" if weighted else path


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # a name too long for a path, or not a path at all
        return False


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def settings_key(settings: Settings, cwd: Path) -> str:
    """A digest of every setting (model, threads, timeouts, search...), paths resolved against `cwd`: a server
    started under other settings would answer differently, so `ask` answers itself instead."""
    return hashlib.sha256(repr(resolved(settings, cwd)).encode()).hexdigest()[:16]


def differing(mine: Settings, theirs: Settings) -> list[str]:
    """The names of the settings parts that differ (`llm.n_threads`), for the server's log: never their values
    (an API key is a setting)."""
    names = []
    for part in fields(mine):
        a, b = getattr(mine, part.name), getattr(theirs, part.name)
        inner = fields(a) if is_dataclass(a) else ()
        names += [f"{part.name}.{f.name}" for f in inner if getattr(a, f.name) != getattr(b, f.name)]
        if not inner and a != b:
            names.append(part.name)
    return names
