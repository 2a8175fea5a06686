"""Package a trained encoder in the form the repository ships it (models/radsearch/): what `assistant index` uses
with no `--encoder`, and what `assistant train --base radsearch` fine-tunes further.

Why this form: MiniLM's float32 weights are 91 MB and its int8 ONNX export 59 MB (the word-embedding table stays
float32), so neither fits the repository's 80 MB budget for the one shipped model beside the other. The weights are
stored in float16 (45 MB) and loaded back into float32 (retriever/encoders/torch_backend.py); the int8 export
indexes run is made from them on first use and cached like any model's (retriever/encoders/onnx/encoder.py), so the
benchmarks, which load the same `radsearch`, measure exactly what users run. SHA256SUMS lists every model file,
and models/resolve.py refuses a folder that differs from it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from models.atomic import write_atomic
from models.file_hash import sha256_file
from models.resolve import CHECKSUMS

#: Files of a trained model folder that are not part of the model (training cards, sentence-transformers' own card).
_NOT_MODEL = {"README.md", "radsearch_card.json", "model.safetensors"}
WEIGHTS = "model.safetensors"
CARD = "card.json"


def package_encoder(trained: Path, out: Path, card: dict[str, Any], card_markdown: str) -> dict[str, str]:
    """Write the float32 sentence-transformers folder `trained` to `out` in the shipped form (`model/` with float16
    weights, SHA256SUMS), with `card` (card.json) and `card_markdown` (README.md) beside it; returns the SHA-256 of
    every model file."""

    def write(tmp: Path) -> None:
        model_dir = tmp / "model"
        shutil.copytree(trained, model_dir, ignore=lambda _dir, names: [n for n in names if n in _NOT_MODEL])
        _save_float16(trained / WEIGHTS, model_dir / WEIGHTS)
        sums = {p.relative_to(tmp).as_posix(): sha256_file(p) for p in sorted(model_dir.rglob("*")) if p.is_file()}
        (tmp / CHECKSUMS).write_text("".join(f"{digest}  {name}\n" for name, digest in sums.items()), encoding="utf-8")
        (tmp / CARD).write_text(json.dumps(card | {"files": sums}, indent=2) + "\n", encoding="utf-8")
        (tmp / "README.md").write_text(card_markdown, encoding="utf-8")
        if out.exists():  # write_atomic renames over an empty path only: the previous package goes last
            shutil.rmtree(out)

    write_atomic(out, write)
    return checksums(out)


def checksums(folder: Path) -> dict[str, str]:
    """Relative path -> SHA-256, as the folder's SHA256SUMS lists them."""
    lines = (folder / CHECKSUMS).read_text(encoding="utf-8").splitlines()
    return {name: digest for digest, _, name in (line.partition("  ") for line in lines)}


def _save_float16(source: Path, target: Path) -> None:
    """The float32 safetensors at `source` with every floating tensor stored as float16 (integer buffers as is)."""
    import torch
    from safetensors.torch import load_file, save_file

    tensors = load_file(str(source))
    halved = {k: (v.to(torch.float16) if v.is_floating_point() else v).contiguous() for k, v in tensors.items()}
    save_file(halved, str(target), metadata={"format": "pt"})
