"""SHA-256 of model files, remembered between runs by file identity.

Why: an index records its encoder's weight fingerprint and every `assistant search`/`ask` recomputes it to refuse a
different encoder; hashing the weights each time costs ~0.2 s for MiniLM and ~1 s for mpnet per command. The hash of
a file is stored with its identity in HASH_CACHE under the models directory and reused while it is unchanged.

The identity is the file's size, modification time, status-change time (ctime), inode and device. Size and
modification time alone were not enough (issue 51): both can be put back after the content is changed (`touch -d`,
`os.utime`), and a changed file was then trusted with its old digest. The ctime cannot be set by any user: every write,
`touch` or replacement moves it, so a changed file is always hashed again. A missing, unreadable or corrupt cache
only costs a re-hash.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path

from models.atomic import write_atomic
from models.paths import models_dir

HASH_CACHE = ".file-hashes.json"


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    """Hex SHA-256 of a file, read in chunks (model files are hundreds of MB)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def cached_sha256(path: Path) -> str:
    """`sha256_file(path)`, from the cache when the file's identity (see the module docstring) is the one it was hashed
    at."""
    path = path.resolve()
    stat = path.stat()
    identity = [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev]
    cache_file = models_dir() / HASH_CACHE
    cache = _read(cache_file)
    entry = cache.get(str(path))
    if isinstance(entry, dict) and entry.get("identity") == identity and isinstance(entry.get("sha256"), str):
        return entry["sha256"]
    digest = sha256_file(path)
    cache[str(path)] = {"identity": identity, "sha256": digest}
    _write(cache_file, cache)
    return digest


def _read(cache_file: Path) -> dict[str, object]:
    try:
        data = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(cache_file: Path, cache: dict[str, object]) -> None:
    """Atomic replace, so two commands writing at once leave one complete cache; failure to write is harmless."""
    with contextlib.suppress(OSError):
        write_atomic(cache_file, json.dumps(cache, indent=1))
