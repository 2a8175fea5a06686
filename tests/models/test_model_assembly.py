"""Split-package encoders (mpnet ships as zip parts) are assembled, verified and moved into place in one step."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from models.resolve import ModelNotAvailable, _assemble_zip

WEIGHTS = b"not really safetensors, but bytes with a known hash"


def _parts(tmp_path: Path, pieces: int = 3) -> list[Path]:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("all-mpnet-base-v2/modules.json", "[]")
        archive.writestr("all-mpnet-base-v2/model.safetensors", WEIGHTS)
        archive.writestr("all-mpnet-base-v2/desktop.ini", "junk")
    data = buffer.getvalue()
    size = len(data) // pieces + 1
    parts = []
    for i in range(pieces):
        part = tmp_path / f"model.zip.{i + 1:03d}"
        part.write_bytes(data[i * size : (i + 1) * size])
        parts.append(part)
    return parts


def test_parts_become_one_verified_model_folder(tmp_path: Path) -> None:
    target = tmp_path / "models" / "all-mpnet-base-v2"
    _assemble_zip(_parts(tmp_path), target, hashlib.sha256(WEIGHTS).hexdigest())
    assert (target / "modules.json").is_file() and (target / "model.safetensors").read_bytes() == WEIGHTS
    assert not (target / "desktop.ini").exists()
    assert [p.name for p in target.parent.iterdir()] == ["all-mpnet-base-v2"]  # no temporary left beside it


def test_a_weights_hash_mismatch_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "models" / "all-mpnet-base-v2"
    with pytest.raises(ModelNotAvailable, match="SHA-256"):
        _assemble_zip(_parts(tmp_path), target, "0" * 64)
    assert not target.exists() and list(target.parent.iterdir()) == []
