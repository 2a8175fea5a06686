"""What running an ONNX export of an encoder needs besides the graph (RunnerSpec), saved beside it.

Why apart from the graph: with the model's tokenizer, pooling, sequence limit and dimensions on disk, a cached export
runs with ONNX Runtime and the `tokenizers` library alone, never importing sentence-transformers, transformers or
torch (retriever/encoders/onnx/encoder.py). Only models made of Transformer -> mean/CLS Pooling (-> Normalize) can be
run this way, which covers every registry encoder and every model `assistant train` writes; others raise
`UnsupportedModel`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.atomic import write_atomic

log = logging.getLogger(__name__)

SPEC_FILE = "runner.json"
TOKENIZER_FILE = "tokenizer.json"
#: The export's input names -> the `tokenizers.Encoding` attribute that feeds them.
ENCODING_FIELDS = {"input_ids": "ids", "attention_mask": "attention_mask", "token_type_ids": "type_ids"}


class UnsupportedModel(Exception):
    """The model's module stack cannot be reproduced outside torch; use the torch backend."""


def supported(st_model: Any) -> bool:
    """Whether `st_model` can run on the fast path (its module stack is reproduced exactly)."""
    try:
        pooling_mode(st_model)
    except UnsupportedModel:
        return False
    return True


def pooling_mode(st_model: Any) -> str:
    """`mean` or `cls` from the model's Pooling module; anything else cannot be exported faithfully."""
    names = [type(m).__name__ for m in st_model]
    if len(names) < 2 or names[0] != "Transformer" or names[1] != "Pooling" or set(names[2:]) - {"Normalize"}:
        raise UnsupportedModel(f"module stack {names} is not Transformer -> Pooling (-> Normalize)")
    pooling = st_model[1]
    config = pooling.get_config_dict()
    mode = config.get("pooling_mode")  # sentence-transformers >= 6; older configs had one flag per mode
    if mode == "mean" or config.get("pooling_mode_mean_tokens"):
        return "mean"
    if mode == "cls" or config.get("pooling_mode_cls_token"):
        return "cls"
    raise UnsupportedModel(f"pooling {config} is neither mean nor CLS")


@dataclass(frozen=True)
class RunnerSpec:
    """What running an export needs besides the graph, saved beside it so no sentence-transformers model is needed.

    The tokenizer is the model's own Rust tokenizer (`tokenizers.Tokenizer`, what transformers' fast tokenizers
    wrap), so token ids are the ones the torch path makes; two configured copies, because truncation is tokenizer
    state and a shared one could be switched by a concurrent `count_tokens` call.
    """

    truncating: Any
    counting: Any
    pooling: str
    max_seq_length: int
    dims: int

    @classmethod
    def build(cls, tokenizer_json: str, pooling: str, max_seq_length: int, dims: int) -> RunnerSpec:
        from tokenizers import Tokenizer

        truncating, counting = Tokenizer.from_str(tokenizer_json), Tokenizer.from_str(tokenizer_json)
        truncating.enable_truncation(max_length=max_seq_length)
        counting.no_truncation()
        for tokenizer in (truncating, counting):
            tokenizer.no_padding()
        return cls(truncating, counting, pooling, max_seq_length, dims)

    @classmethod
    def from_model(cls, st_model: Any) -> RunnerSpec:
        """The spec of a loaded sentence-transformers model (UnsupportedModel if it cannot run outside torch)."""
        pooling = pooling_mode(st_model)
        backend = getattr(st_model.tokenizer, "backend_tokenizer", None)
        if backend is None:
            raise UnsupportedModel(f"tokenizer {type(st_model.tokenizer).__name__} has no fast (Rust) tokenizer")
        dims = int(st_model.get_embedding_dimension())
        return cls.build(backend.to_str(), pooling, int(st_model.max_seq_length), dims)

    @classmethod
    def read(cls, folder: Path, max_seq_length: int | None = None) -> RunnerSpec | None:
        """The spec saved in an export folder (with another sequence limit if given), or None if absent or unreadable
        (the caller then takes the path through the model, which writes it anew)."""
        try:
            fields = json.loads((folder / SPEC_FILE).read_text(encoding="utf-8"))
            tokenizer_json = (folder / TOKENIZER_FILE).read_text(encoding="utf-8")
            limit = max_seq_length or int(fields["max_seq_length"])
            return cls.build(tokenizer_json, fields["pooling"], limit, int(fields["dims"]))
        except FileNotFoundError:  # not exported yet, or exported before specs were saved
            return None
        except Exception as exc:  # unreadable: bad JSON, missing keys, a tokenizer.json `tokenizers` cannot parse
            log.warning("cannot read the runner spec in %s (%s): the model will rewrite it", folder, exc)
            return None

    def save(self, folder: Path) -> None:
        """Write the spec into `folder` (each file atomically: a crash leaves none half-written)."""
        fields = {"pooling": self.pooling, "max_seq_length": self.max_seq_length, "dims": self.dims}
        write_atomic(folder / TOKENIZER_FILE, self.counting.to_str())
        write_atomic(folder / SPEC_FILE, json.dumps(fields, indent=2) + "\n")

    def feeds(self, texts: list[str]) -> list[dict[str, list[int]]]:
        """One unpadded input per text, truncated to max_seq_length: input name -> token values."""
        return [
            {name: getattr(encoding, attribute) for name, attribute in ENCODING_FIELDS.items()}
            for encoding in self.truncating.encode_batch(texts)
        ]

    def count_tokens(self, text: str) -> int:
        """Tokens the model makes of `text` before truncation (special tokens included)."""
        return len(self.counting.encode(text).ids)
