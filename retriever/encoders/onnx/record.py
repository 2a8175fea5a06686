"""What an export folder holds, recorded when it is made and checked before it is run (issue 51).

Why: the int8 ONNX export in the data folder is what every build and search runs, but only the weights it was made
from were fingerprinted (the index's encoder fingerprint); changing weight tensors inside the export at the same size
and modification time silently changed rankings. Now the folder records the SHA-256 of each file in it
(RECORD_FILE) with the full weight fingerprint it was made from, so the export is tied to the fingerprint an index
records; a file that differs from the record, a file the record does not list, or a record of other weights, and the
export is not run (retriever/encoders/onnx/encoder.py exports it again from the checked weights). The hashes come
from models/file_hash.py, whose cache re-hashes any file that was written since (its ctime moved).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from models.atomic import write_atomic
from models.file_hash import cached_sha256

RECORD_FILE = "export.json"


def write_record(folder: Path, fingerprint: str) -> None:
    """Record every file of `folder` (but the record) with the weight `fingerprint` the export was made from."""
    files = {p.name: cached_sha256(p) for p in sorted(folder.iterdir()) if p.is_file() and p.name != RECORD_FILE}
    record = {"weights_fingerprint": fingerprint, "files": files}
    write_atomic(folder / RECORD_FILE, json.dumps(record, indent=2) + "\n")


def record_problem(folder: Path, fingerprint: str, names: Iterable[str]) -> str | None:
    """Why the files `names` of the export folder must not be run (None when each is as recorded for the weights
    `fingerprint`); a name that is absent is no problem (it is made when needed, then recorded)."""
    try:
        record = json.loads((folder / RECORD_FILE).read_text(encoding="utf-8"))
        recorded, made_from = dict(record["files"]), record["weights_fingerprint"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"the ONNX export in {folder} has no readable record of its files ({RECORD_FILE})"
    if made_from != fingerprint:
        return f"the ONNX export in {folder} was made from other weights than the encoder's"
    for name in names:
        path = folder / name
        if path.is_file() and recorded.get(name) != cached_sha256(path):
            return f"{path} is not the file the export recorded (changed since it was made)"
    return None
