"""The facts in a GGUF file's header that decide whether a packaged chat model is what it claims.

Used to verify PyPI weight packages (`python -m models.gguf inspect FILE`, eval/diagnosis/llm_survey.py): magic and
version, architecture and name, parameter count, quantization, context length, and whether a chat template
is embedded (a base model usually has none). Only the header and tensor table are read, with the standard
library, so a 4 GB file costs milliseconds and a truncated file (the first parts of an incomplete split model)
still reports what it would be and how many bytes are missing; `gguf`'s own GGUFReader maps every tensor and
fails on such a file. The `gguf` package supplies the quantization tables; it is imported only when a file is
read, because it pulls in numpy and models/gguf.py is imported on every `assistant ask`.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
# GGUF value types -> struct format of a scalar (8 = string and 9 = array are handled apart).
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
# Arrays longer than this (token lists, merges) are summarised by their length instead of being kept.
_KEEP_ARRAY_ITEMS = 64


class NotGGUF(ValueError):
    """The file is not a GGUF model the reader understands (wrong magic, version 1, cut inside the header)."""


@dataclass(frozen=True)
class GGUFHeader:
    """What a GGUF file says about itself, plus how its size compares with what its tensor table needs."""

    path: Path
    file_size: int
    version: int
    metadata: dict[str, Any]
    parameters: int
    tensor_types: dict[str, int]  # quantization type name -> number of tensors
    expected_size: int  # data offset + end of the last tensor

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", ""))

    @property
    def name(self) -> str:
        return str(self.metadata.get("general.name", ""))

    @property
    def file_type(self) -> str:
        """`Q4_K_M` etc. from general.file_type, or empty when the converter did not record it."""
        from gguf import LlamaFileType

        value = self.metadata.get("general.file_type")
        if value is None:
            return ""
        try:
            return LlamaFileType(value).name.removeprefix("MOSTLY_")
        except ValueError:
            return f"unknown ({value})"

    @property
    def context_length(self) -> int | None:
        value = self.metadata.get(f"{self.architecture}.context_length")
        return int(value) if value is not None else None

    @property
    def chat_template(self) -> str:
        return str(self.metadata.get("tokenizer.chat_template", ""))

    @property
    def complete(self) -> bool:
        return self.file_size >= self.expected_size

    def summary(self) -> dict[str, Any]:
        """The verification facts as plain JSON values (what `inspect` prints and the survey records)."""
        return {
            "file": str(self.path),
            "file_size": self.file_size,
            "gguf_version": self.version,
            "architecture": self.architecture,
            "name": self.name,
            "size_label": self.metadata.get("general.size_label", ""),
            "finetune": self.metadata.get("general.finetune", ""),
            "parameters": self.parameters,
            "file_type": self.file_type,
            "tensor_types": self.tensor_types,
            "context_length": self.context_length,
            "has_chat_template": bool(self.chat_template),
            "expected_size": self.expected_size,
            "complete": self.complete,
        }


class _Reader:
    """Little-endian reads from a file, raising NotGGUF when the file ends early."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh

    def take(self, fmt: str) -> Any:
        size = struct.calcsize("<" + fmt)
        data = self.fh.read(size)
        if len(data) != size:
            raise NotGGUF("the file ends inside the GGUF header")
        return struct.unpack("<" + fmt, data)[0]

    def string(self) -> str:
        length = self.take("Q")
        data = self.fh.read(length)
        if len(data) != length:
            raise NotGGUF("the file ends inside the GGUF header")
        return data.decode("utf-8", errors="replace")

    def value(self, vtype: int) -> Any:
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            item_type, count = self.take("I"), self.take("Q")
            if count > _KEEP_ARRAY_ITEMS:
                self.skip_items(item_type, count)
                return f"<array of {count}>"
            return [self.value(item_type) for _ in range(count)]
        if vtype not in _SCALARS:
            raise NotGGUF(f"unknown GGUF value type {vtype}")
        return self.take(_SCALARS[vtype])

    def skip_items(self, item_type: int, count: int) -> None:
        if item_type in _SCALARS:
            self.fh.seek(struct.calcsize("<" + _SCALARS[item_type]) * count, 1)
            return
        for _ in range(count):
            self.value(item_type)


def read_header(path: Path) -> GGUFHeader:
    """Parse header, metadata and tensor table of `path` (GGUF version 2 or 3)."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    path = Path(path)
    with path.open("rb") as fh:
        reader = _Reader(fh)
        if fh.read(4) != MAGIC:
            raise NotGGUF(f"{path} is not a GGUF file (no GGUF magic)")
        version = reader.take("I")
        if version not in (2, 3):
            raise NotGGUF(f"{path}: GGUF version {version} is not supported (2 or 3)")
        tensor_count, kv_count = reader.take("Q"), reader.take("Q")
        metadata = {}
        for _ in range(kv_count):
            key = reader.string()
            metadata[key] = reader.value(reader.take("I"))
        parameters, data_end = 0, 0
        types: Counter[str] = Counter()
        for _ in range(tensor_count):
            reader.string()  # tensor name
            dims = [reader.take("Q") for _ in range(reader.take("I"))]
            qtype, offset = reader.take("I"), reader.take("Q")
            elements = 1
            for dim in dims:
                elements *= dim
            parameters += elements
            quant = GGMLQuantizationType(qtype)
            types[quant.name] += 1
            block, type_size = GGML_QUANT_SIZES[quant]
            data_end = max(data_end, offset + elements // block * type_size)
        alignment = int(metadata.get("general.alignment", DEFAULT_ALIGNMENT))
        data_offset = -(-fh.tell() // alignment) * alignment
    return GGUFHeader(
        path=path,
        file_size=path.stat().st_size,
        version=version,
        metadata=metadata,
        parameters=parameters,
        tensor_types=dict(types.most_common()),
        expected_size=data_offset + data_end,
    )
