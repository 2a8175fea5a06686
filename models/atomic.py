"""Replace a file (or a folder) all at once: written under a temporary name beside it, then renamed over it.

Why: a crash, a kill or a full disk part-way through a write must leave the old file whole, never half of a new one;
and a symlink at the path is replaced rather than written through. The rename is atomic because the temporary name
is in the same folder. Every write of a finished product file goes through `write_atomic`.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

#: Regular expression of the temporary names write_atomic uses for a file named NAME (a killed write leaves one):
#: `TEMPORARY_NAME.format(name=re.escape(NAME))`.
TEMPORARY_NAME = r"\.{name}\.tmp-\d+-[0-9a-f]{{8}}"


def write_atomic(path: Path, content: str | bytes | Callable[[Path], None]) -> None:
    """Make `path` hold `content`: text (UTF-8), bytes, or a callback that writes the file or folder at the temporary
    path it is given (which does not exist yet). On any failure the temporary is removed and `path` is unchanged.
    A folder can only replace a missing path or an empty folder: a callback that replaces a folder removes the old
    one itself, last."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")  # TEMPORARY_NAME matches it
    try:
        if isinstance(content, str):
            tmp.write_text(content, encoding="utf-8")
        elif isinstance(content, bytes):
            tmp.write_bytes(content)
        else:
            content(tmp)
        os.replace(tmp, path)
    except BaseException:
        if tmp.is_dir() and not tmp.is_symlink():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        raise
