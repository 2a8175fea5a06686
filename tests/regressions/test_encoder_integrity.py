"""Issue 51 item 9: the exported encoder is checked. Builds and searches run the int8 ONNX export in the data folder;
changing its weight tensors (or its tokenizer) at the same size and modification time silently changed rankings, and
the checksum cache of the shipped encoder's files, keyed on size and modification time, trusted a changed file.

A real MiniLM export made in a data folder of this test's own, tampered with as an attacker with write access to it
would (content changed, size kept, modification time put back), then loaded as `assistant search` loads it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from models.file_hash import cached_sha256, sha256_file

pytestmark = pytest.mark.models  # a real encoder, exported and quantized

REPO = Path(__file__).resolve().parents[2]
TEXTS = ["Small right pleural effusion.", "Left lower lobe consolidation.", "No acute cardiopulmonary abnormality."]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data folder of this module's own (its export cache), for the whole module."""
    home = tmp_path_factory.mktemp("integrity")
    before = os.environ.get("RADSEARCH_HOME")
    os.environ["RADSEARCH_HOME"] = str(home)
    try:
        yield home
    finally:
        if before is None:
            os.environ.pop("RADSEARCH_HOME")
        else:
            os.environ["RADSEARCH_HOME"] = before


def _vectors() -> np.ndarray:
    """MiniLM's onnx-int8 vectors of TEXTS, the encoder loaded as a search loads it (its cached export first)."""
    from retriever.encoders.encoder import load_encoder

    return load_encoder("minilm", backend="onnx-int8").encode(TEXTS)


def _export(home: Path) -> Path:
    found = sorted((home / "models" / ".onnx").glob("*/model.int8.onnx"))
    assert len(found) == 1, found
    return found[0].parent


def _keep_size_and_mtime(path: Path, data: bytes) -> None:
    """Write `data` (as long as the file) to `path` and put its modification time back."""
    before = path.stat()
    assert len(data) == before.st_size
    path.write_bytes(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_changed_int8_weight_tensors_are_not_run(home: Path) -> None:
    import onnx

    reference = _vectors()
    graph = _export(home) / "model.int8.onnx"
    cached_sha256(graph)  # the checksum cache knows the untouched file
    model = onnx.load(str(graph))
    int8 = (onnx.TensorProto.INT8, onnx.TensorProto.UINT8)
    tensors = sorted((t for t in model.graph.initializer if t.data_type in int8 and t.raw_data), key=lambda t: t.name)
    data = bytearray(graph.read_bytes())
    for tensor in tensors[:11]:  # eleven weight tensors, each reversed in place
        at = data.find(tensor.raw_data)
        data[at : at + len(tensor.raw_data)] = tensor.raw_data[::-1]
    _keep_size_and_mtime(graph, bytes(data))
    np.testing.assert_allclose(_vectors(), reference, atol=1e-6)  # made again from the weights, not run as found


def test_a_changed_tokenizer_in_the_export_is_not_run(home: Path) -> None:
    """Second form: the export's tokenizer with two words' ids swapped (`left` reads as `right`), same size."""
    reference = _vectors()
    tokenizer = _export(home) / "tokenizer.json"
    text = tokenizer.read_text(encoding="utf-8")
    left, right = (re.search(rf'"{word}": ?(\d+)', text) for word in ("left", "right"))
    assert left and right and len(left[1]) == len(right[1])
    swapped = text.replace(left[0], "\0").replace(right[0], left[0].replace(left[1], right[1]))
    swapped = swapped.replace("\0", right[0].replace(right[1], left[1]))
    _keep_size_and_mtime(tokenizer, swapped.encode("utf-8"))
    np.testing.assert_allclose(_vectors(), reference, atol=1e-6)


def test_the_checksum_cache_does_not_trust_a_changed_shipped_file(tmp_path: Path, home: Path) -> None:
    """The shipped encoder's files are checked against SHA256SUMS through the checksum cache: a file changed at the
    same size and modification time must be hashed again and refused."""
    from models.resolve import ModelNotAvailable, verify_checksums

    shipped = tmp_path / "radsearch"
    shutil.copytree(REPO / "models" / "radsearch", shipped)
    verify_checksums(shipped)  # as shipped: accepted, and its hashes cached
    config = shipped / "model" / "config.json"
    text = config.read_text(encoding="utf-8")
    _keep_size_and_mtime(config, text.replace('"gelu"', '"relu"').encode("utf-8"))
    with pytest.raises(ModelNotAvailable, match="does not match"):
        verify_checksums(shipped)


def test_the_checksum_cache_rehashes_a_file_replaced_with_its_old_size_and_mtime(tmp_path: Path, home: Path) -> None:
    """Second form: the file replaced by a copy (`cp -p`: another file, old size and modification time)."""
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights v1")
    first = cached_sha256(weights)
    forged = tmp_path / "forged"
    forged.write_bytes(b"weights v2")
    shutil.copystat(weights, forged)
    os.replace(forged, weights)
    assert cached_sha256(weights) == sha256_file(weights) != first
    assert json.loads((home / "models" / ".file-hashes.json").read_text())  # the cache is in use
