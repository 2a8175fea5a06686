"""The index manifest: what built the index and checksums of every file, checked before anything is loaded."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

FORMAT_VERSION = 1
MANIFEST = "manifest.json"


@dataclass
class EncoderInfo:
    name: str
    location: str
    fingerprint: str
    dims: int
    max_seq_length: int
    backend: str = "torch"  # who ran the forward pass (retriever.encoder.BACKENDS); absent in older manifests
    backend_version: int = 0  # ONNX export recipe (retriever.onnx_encoder.EXPORT_VERSION); 0 = torch or older manifests


@dataclass
class FileInfo:
    bytes: int
    sha256: str


@dataclass
class Manifest:
    encoder: EncoderInfo
    fields: dict[str, int]  # field -> number of vectors
    reports: int
    corpus_sha256: str
    created: str
    index_type: str
    files: dict[str, FileInfo] = field(default_factory=dict)
    version: int = FORMAT_VERSION

    def write(self, folder: Path) -> None:
        (folder / MANIFEST).write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        """Parse manifest.json; raises ValueError with the reason if it is missing, malformed or too new."""
        path = folder / MANIFEST
        if not path.is_file():
            raise ValueError(f"{path} is missing")
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if raw.get("version") != FORMAT_VERSION:
                raise ValueError(f"index format version {raw.get('version')} (this program reads {FORMAT_VERSION})")
            raw["encoder"] = EncoderInfo(**raw["encoder"])
            raw["files"] = {name: FileInfo(**info) for name, info in raw["files"].items()}
            return cls(**raw)
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"{path} is not a valid manifest ({exc})") from exc


def is_current(folder: Path, encoder_name: str) -> bool:
    """Whether `folder` holds an index built by the encoder `encoder_name` that this release queries as is: for a
    fast backend, made by today's export recipe (an older one is refused at load). Why: `make demo-index` skips the
    rebuild only then."""
    from retriever.onnx_encoder import EXPORT_VERSION

    try:
        built = Manifest.read(folder).encoder
    except ValueError:
        return False
    return built.name == encoder_name and (built.backend == "torch" or built.backend_version == EXPORT_VERSION)


def main(argv: list[str]) -> int:
    """`python -m retriever.manifest ENCODER [INDEX_FOLDER]`: exit 0 if is_current (folder: the default index), else 1.
    For the Makefile, which rebuilds the demo index only when needed."""
    if len(argv) not in (1, 2):
        print("usage: python -m retriever.manifest ENCODER_NAME [INDEX_FOLDER]", file=sys.stderr)
        return 2
    from models.paths import default_index_dir

    folder = Path(argv[1]) if len(argv) == 2 else default_index_dir()
    return 0 if is_current(folder, argv[0]) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
