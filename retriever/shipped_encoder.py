"""Package a trained encoder in the form the repository ships it (models/radsearch/): what `assistant index` uses
with no `--encoder`, and what `assistant train --base radsearch` fine-tunes further.

Why this form: MiniLM's float32 weights are 91 MB, over the repository's 80 MB budget for the one shipped model.
The runtime form indexes are built with is the int8 ONNX export (`onnx-v<N>/`, ~23 MB), made here from the float32
weights, so it is exactly the graph the benchmarks measure; the weights themselves are kept in float16 (`model/`,
~45 MB) for training further and for the torch backend, which loads them back into float32. SHA256SUMS lists every
file of both, and models/resolve.py refuses a folder that differs from it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from models.file_hash import sha256_file
from models.resolve import CHECKSUMS
from retriever.atomic import write_atomic
from retriever.onnx_encoder import EXPORT_VERSION
from retriever.onnx_export import MODEL_FILES, export, quantize
from retriever.onnx_spec import RunnerSpec

#: Files of a trained model folder that are not part of the model (training cards, sentence-transformers' own card).
_NOT_MODEL = {"README.md", "radsearch_card.json", "model.safetensors"}
WEIGHTS = "model.safetensors"
CARD = "card.json"


def package_encoder(trained: str, out: Path, card: dict[str, Any], card_markdown: str) -> dict[str, str]:
    """Write `trained` (a name or folder of a float32 sentence-transformers encoder) to `out` in the shipped form,
    with `card` (card.json) and `card_markdown` (README.md) beside it; returns the SHA-256 of every model file."""
    from retriever.encoder import load_encoder

    encoder = load_encoder(trained)  # torch backend: the float32 model the export is traced from
    source = Path(encoder.location)

    def write(tmp: Path) -> None:
        export_dir = tmp / f"onnx-v{EXPORT_VERSION}"
        export(encoder.model, export_dir)
        spec = RunnerSpec.read(export_dir, encoder.max_seq_length)
        if spec is None:
            raise RuntimeError(f"the export in {export_dir} has no runner spec")
        quantize(spec, export_dir)
        (export_dir / MODEL_FILES["onnx"]).unlink()  # the float32 graph: rebuilt from the weights when asked for
        model_dir = tmp / "model"
        shutil.copytree(source, model_dir, ignore=lambda _dir, names: [n for n in names if n in _NOT_MODEL])
        _save_float16(source / WEIGHTS, model_dir / WEIGHTS)
        sums = {p.relative_to(tmp).as_posix(): sha256_file(p) for p in sorted(tmp.rglob("*")) if p.is_file()}
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
