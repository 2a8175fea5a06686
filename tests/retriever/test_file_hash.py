"""The weight-hash cache behind encoder fingerprints: reused only while a file is unchanged, harmless when broken."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from models.file_hash import HASH_CACHE, cached_sha256, sha256_file


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RADSEARCH_HOME", str(tmp_path / "home"))
    return tmp_path / "home" / "models" / HASH_CACHE


def test_cached_hash_equals_the_file_hash_and_is_stored(tmp_path: Path, home: Path) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights v1")
    assert cached_sha256(weights) == sha256_file(weights)
    stored = json.loads(home.read_text())[str(weights.resolve())]
    assert stored["sha256"] == sha256_file(weights)


def test_a_cached_entry_is_used_while_size_and_mtime_are_unchanged(tmp_path: Path, home: Path) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights v1")
    cached_sha256(weights)
    cache = json.loads(home.read_text())
    cache[str(weights.resolve())]["sha256"] = "from-the-cache"
    home.write_text(json.dumps(cache))
    assert cached_sha256(weights) == "from-the-cache"


def test_rewritten_weights_are_hashed_again(tmp_path: Path, home: Path) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights v1")
    first = cached_sha256(weights)
    weights.write_bytes(b"weights v2")  # same size: only the modification time tells
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert cached_sha256(weights) == sha256_file(weights) != first


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"x": "not an entry"}'])
def test_a_corrupt_cache_only_costs_a_rehash(tmp_path: Path, home: Path, content: str) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights v1")
    home.parent.mkdir(parents=True)
    home.write_text(content)
    assert cached_sha256(weights) == sha256_file(weights)
    assert json.loads(home.read_text())[str(weights.resolve())]["sha256"] == sha256_file(weights)
