"""The shipped encoder (issue 42): in the repository, checked by its SHA-256 sums, within its size budget, its float16
weights loaded as float32, with a card naming its data and their terms; packaging a trained model gives that form."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from models.preset import PRESET
from models.registry import ENCODERS
from models.resolve import CHECKSUMS, ModelNotAvailable, resolve_encoder, shipped_folder, verify_checksums

ENTRY = ENCODERS[PRESET.encoder]
FOLDER = shipped_folder(ENTRY)
BUDGET_BYTES = 80 * 1024 * 1024
SENTENCES = [
    "Small left pleural effusion.",
    "No acute cardiopulmonary abnormality.",
    "Complex joint effusion of the knee after a twisting injury.",
]


def test_the_shipped_folder_matches_its_checksums_and_budget() -> None:
    verify_checksums(FOLDER)
    listed = (FOLDER / CHECKSUMS).read_text(encoding="utf-8").splitlines()
    assert any(line.endswith("model/model.safetensors") for line in listed)
    size = sum(p.stat().st_size for p in FOLDER.rglob("*") if p.is_file())
    assert size <= BUDGET_BYTES, f"{FOLDER} holds {size / 2**20:.1f} MB, over the 80 MB budget"


def test_a_changed_file_is_refused_with_what_to_do(tmp_path: Path) -> None:
    copy = tmp_path / "radsearch"
    shutil.copytree(FOLDER, copy)
    config = copy / "model" / "config.json"
    config.write_text(config.read_text(encoding="utf-8") + " ", encoding="utf-8")
    with pytest.raises(ModelNotAvailable, match="does not match SHA256SUMS.*git checkout"):
        verify_checksums(copy)
    (copy / CHECKSUMS).unlink()
    with pytest.raises(ModelNotAvailable, match="incomplete"):
        verify_checksums(copy)


def test_the_card_names_every_source_its_licence_and_the_recipe() -> None:
    card = json.loads((FOLDER / "card.json").read_text(encoding="utf-8"))
    assert set(card["sources"]) == {"openi", "ctrate", "mtsamples", "medpix"}
    assert all(source["licence"] for source in card["sources"].values())
    assert "CC BY-NC-SA 4.0" in card["terms"] and card["recipe"] == PRESET.recipe
    assert set(card["files"]) == {
        line.split("  ", 1)[1] for line in (FOLDER / CHECKSUMS).read_text(encoding="utf-8").splitlines()
    }
    readme = (FOLDER / "README.md").read_text(encoding="utf-8")
    assert "CC0" in readme and "make encoder" in readme


def test_the_float16_weights_load_as_float32_and_agree_with_the_int8_export() -> None:
    from retriever.encoders.encoder import load_encoder

    torch_encoder = load_encoder(PRESET.encoder, backend="torch")
    assert str(next(torch_encoder.model.parameters()).dtype) == "torch.float32"
    int8 = load_encoder(PRESET.encoder, backend="onnx-int8")
    cosines = np.sum(torch_encoder.encode(SENTENCES) * int8.encode(SENTENCES), axis=1)
    assert cosines.min() > 0.98, cosines


def test_packaging_a_trained_model_gives_the_shipped_form(tmp_path: Path, minilm) -> None:
    from retriever.encoders.encoder import load_encoder
    from retriever.encoders.shipped import checksums, package_encoder

    out = tmp_path / "packaged"
    sums = package_encoder(Path(resolve_encoder("minilm")[0]), out, {"name": "packaged"}, "# packaged\n")
    assert set(sums) >= {"model/model.safetensors", "model/tokenizer.json", "model/modules.json"}
    assert "model/README.md" not in sums  # sentence-transformers' card may quote training data: not shipped
    assert checksums(out) == sums and json.loads((out / "card.json").read_text())["files"] == sums
    verify_checksums(out)
    packaged = load_encoder(str(out / "model"), backend="torch")
    assert str(next(packaged.model.parameters()).dtype) == "torch.float32"
    cosines = np.sum(packaged.encode(SENTENCES) * minilm.encode(SENTENCES), axis=1)
    assert cosines.min() > 0.999, cosines  # float16 storage costs next to nothing
    package_encoder(Path(resolve_encoder("minilm")[0]), out, {"name": "again"}, "# again\n")  # replaced whole
    assert json.loads((out / "card.json").read_text())["name"] == "again"
