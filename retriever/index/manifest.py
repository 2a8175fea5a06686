"""The index manifest: what built the index and checksums of every file, checked before anything is loaded.

The manifest is read as untrusted input: every value must have the type its dataclass declares, and every file an
index reads must be listed, so that no byte reaches FAISS, SQLite or BM25 without its size and SHA-256 checked.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from types import NoneType, UnionType
from typing import Any, get_args, get_origin, get_type_hints

from models.file_hash import sha256_file
from models.preset import SearchCard
from retriever.reports.record import FIELDS

FORMAT_VERSION = 2  # 2: BM25 terms under a negation are their own terms (retriever/negation/scope.py)
MANIFEST = "manifest.json"


@dataclass
class EncoderInfo:
    name: str
    location: str
    fingerprint: str
    dims: int
    max_seq_length: int
    backend: str = "torch"  # who ran the forward pass (retriever.encoders.backends.BACKENDS); absent in older manifests
    #: ONNX export recipe (retriever.encoders.onnx.encoder.EXPORT_VERSION); 0 = torch or older manifests
    backend_version: int = 0


@dataclass
class FileInfo:
    bytes: int
    sha256: str

    @classmethod
    def of(cls, path: Path) -> FileInfo:
        return cls(path.stat().st_size, sha256_file(path))


@dataclass
class Manifest:
    encoder: EncoderInfo
    fields: dict[str, int]  # field -> number of vectors
    reports: int
    corpus_sha256: str
    created: str
    index_type: str
    updated: str = ""  # when `assistant update` last changed the index ("" for never)
    #: IVF-PQ fields: mean residual of the build's vectors to their centroids (retriever/index/drift.py)
    quantizer_fit: dict[str, float] = field(default_factory=dict)
    files: dict[str, FileInfo] = field(default_factory=dict)
    version: int = FORMAT_VERSION
    #: How the BM25 side was tokenized (retriever.negation.tokens.TOKENIZER_FINGERPRINT); "" = before it was recorded
    lexical_rules: str = ""
    #: The `--map` the index was built with (field -> column): `assistant update` reads the next export with it
    column_map: dict[str, str] = field(default_factory=dict)
    #: The site whose studies the index holds (`assistant index --source`): a table's reports are `SITE:ACCESSION`
    #: whatever its file is called, and `assistant update` reads the next export as that site's; "" = an index built
    #: before sites (its reports named after their files)
    site: str = ""
    #: The search values the index was built with, measured for its encoder (models/preset.py SearchCard): how it is
    #: searched unless the user's settings say otherwise. None: an index built before cards (issue 49), searched
    #: with the preset's values for its encoder, as it always was.
    search: SearchCard | None = None
    #: The vocabulary and linker that linked the store's concepts (retriever.concepts.fingerprint.concept_rules): an
    #: index linked by others answers by linking at answer time until `assistant update` links it anew; "" = an index
    #: built before stored concepts.
    concept_rules: str = ""

    def write(self, folder: Path) -> None:
        (folder / MANIFEST).write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    @property
    def current_lexical_rules(self) -> bool:
        """Whether BM25 was tokenized under this program's negation rules (else search says so, and an update
        tokenizes it anew)."""
        from retriever.negation.tokens import TOKENIZER_FINGERPRINT

        return self.lexical_rules == TOKENIZER_FINGERPRINT

    @property
    def current_concepts(self) -> bool:
        """Whether the store's concepts were linked by this program's vocabulary and linker (else answers link the
        conclusions themselves, `assistant info` says so, and an update links every report anew)."""
        from retriever.concepts.fingerprint import concept_rules

        return self.concept_rules == concept_rules()

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        """Parse manifest.json; raises ValueError with the reason if it is missing, malformed or too new."""
        path = folder / MANIFEST
        if not path.is_file():
            raise ValueError(f"{path} is missing")
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(raw, dict) and raw.get("version") != FORMAT_VERSION:
                raise ValueError(f"index format version {raw.get('version')} (this program reads {FORMAT_VERSION})")
            manifest = _typed(cls, raw, "manifest")
            manifest._check_values()
            return manifest
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path} is not a valid manifest ({exc})") from exc

    def _check_values(self) -> None:
        """Values a well-typed manifest may still get wrong; a file name must not lead out of the folder."""
        if not self.fields or not set(self.fields) <= set(FIELDS):
            raise ValueError(f"fields {sorted(self.fields)} are not a non-empty subset of {list(FIELDS)}")
        for name in self.files:
            parts = PurePosixPath(name).parts
            if not parts or PurePosixPath(name).is_absolute() or ".." in parts:
                raise ValueError(f"file name {name!r} is not a path inside the index folder")
        if self.search is not None:
            from retriever.search.methods import checked_method

            checked_method(self.search.method)
            for name in ("dense_weight", "second_stage_weight"):
                if not 0.0 <= getattr(self.search, name) <= 1.0:
                    raise ValueError(f"search.{name} {getattr(self.search, name)} is not between 0 and 1")

    def verify(self, folder: Path, expected: Iterable[str]) -> None:
        """Raise ValueError unless every `expected` file is listed and every listed file has its recorded size and
        SHA-256. Why both: an omitted file would be read unchecked (`"files": {}` used to switch checks off)."""
        if unlisted := sorted(set(expected) - self.files.keys()):
            more = f" and {len(unlisted) - 3} more files" if len(unlisted) > 3 else ""
            raise ValueError(
                f"{folder / MANIFEST} does not list {', '.join(unlisted[:3])}{more}, so it cannot check them"
            )
        for name, info in self.files.items():
            path = folder / name
            if not path.is_file():
                raise ValueError(f"index file {path} is missing")
            size = path.stat().st_size
            if size != info.bytes:
                raise ValueError(
                    f"index file {path} is {size} bytes, manifest says {info.bytes} (truncated or replaced)"
                )
            if sha256_file(path) != info.sha256:
                raise ValueError(f"index file {path} fails its SHA-256 check (corrupt)")


def listed_files(folder: Path, files: Iterable[str], subfolders: Iterable[str]) -> list[str]:
    """`files` plus every file inside `subfolders` of `folder`, as manifest names (relative, `/`-separated)."""
    inside = (p for sub in subfolders for p in sorted((folder / sub).rglob("*")) if p.is_file())
    return [*files, *(p.relative_to(folder).as_posix() for p in inside)]


def _typed(cls: type, raw: object, where: str) -> Any:
    """`cls(**raw)` after checking each value against its declared type (int, str, dict[str, T] or a dataclass).

    Why not just `cls(**raw)`: dataclasses do not check types, and a manifest of the wrong shape would otherwise fail
    later, deep inside FAISS or SQLite, as a traceback instead of a refusal."""
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be a JSON object, not {type(raw).__name__}")
    declared = {f.name: f for f in dataclasses.fields(cls)}
    if unknown := sorted(raw.keys() - declared.keys()):
        raise ValueError(f"{where} has unknown keys {unknown}")
    hints = get_type_hints(cls)
    values = {}
    for name, spec in declared.items():
        if name in raw:
            values[name] = _value(raw[name], hints[name], f"{where}.{name}")
        elif spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
            raise ValueError(f"{where}.{name} is missing")
    return cls(**values)


def _value(raw: object, hint: Any, where: str) -> Any:
    if isinstance(hint, UnionType) and NoneType in get_args(hint):  # `T | None`: JSON null, else a T
        (inner,) = (arg for arg in get_args(hint) if arg is not NoneType)
        return None if raw is None else _value(raw, inner, where)
    if dataclasses.is_dataclass(hint):
        return _typed(hint, raw, where)
    if get_origin(hint) is tuple:  # `tuple[T, ...]`: a JSON array
        if not isinstance(raw, list):
            raise ValueError(f"{where} must be a JSON array, not {type(raw).__name__}")
        return tuple(_value(item, get_args(hint)[0], f"{where}[{n}]") for n, item in enumerate(raw))
    if hint is float and type(raw) is int:  # JSON writes 1.0 as 1.0, but a hand-written 1 is the same weight
        return float(raw)
    if get_origin(hint) is dict:
        if not isinstance(raw, dict):
            raise ValueError(f"{where} must be a JSON object, not {type(raw).__name__}")
        item = get_args(hint)[1]
        return {key: _value(value, item, f"{where}[{key!r}]") for key, value in raw.items()}
    if type(raw) is not hint:  # exact: a JSON true is a Python bool, which isinstance would accept as an int
        raise ValueError(f"{where} must be {hint.__name__}, not {type(raw).__name__}")
    return raw


def written_by_radsearch(folder: Path) -> bool:
    """Whether `folder` holds an index of any format version (a JSON manifest with an integer version): such a
    folder is replaced by a rebuild without --overwrite, also after an upgrade that no longer reads it."""
    try:
        raw = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(raw, dict) and isinstance(raw.get("version"), int) and "encoder" in raw


def is_current(folder: Path, encoder_name: str) -> bool:
    """Whether `folder` holds an index built by the encoder `encoder_name` that this release queries as is: for a
    fast backend, made by today's export recipe (an older one is refused at load), with BM25 tokenized under
    today's negation rules and its concepts linked by today's vocabulary. Why: `make demo-index` skips the rebuild
    only then."""
    from retriever.encoders.onnx.encoder import EXPORT_VERSION

    try:
        manifest = Manifest.read(folder)
    except ValueError:
        return False
    built = manifest.encoder
    return (
        built.name == encoder_name
        and (built.backend == "torch" or built.backend_version == EXPORT_VERSION)
        and manifest.current_lexical_rules
        and manifest.current_concepts
    )


def main(argv: list[str]) -> int:
    """`python -m retriever.index.manifest ENCODER [INDEX_FOLDER]`: exit 0 if is_current (folder: the default index),
    else 1. For the Makefile, which rebuilds the demo index only when needed."""
    if len(argv) not in (1, 2):
        print("usage: python -m retriever.index.manifest ENCODER_NAME [INDEX_FOLDER]", file=sys.stderr)
        return 2
    from models.paths import default_index_dir

    folder = Path(argv[1]) if len(argv) == 2 else default_index_dir()
    return 0 if is_current(folder, argv[0]) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
