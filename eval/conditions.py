"""Benchmark conditions: how (or whether) the LLM is given retrieved reports.

A condition is written as a short spec: `none` (the no-retrieval baseline), `bm25`, an encoder reference
(`minilm`, `mpnet`, a fine-tuned model name such as `radsearch-minilm`, a folder or a hub id), or a fused search
method over an encoder (`hybrid:radsearch-minilm`, `hybrid-weighted:radsearch-minilm`). Retrieval runs
through the product's own path (`ReportIndex` + `ReportRetriever`), over a corpus from which the cases' own
reports have been removed, so no case can be answered by reading its own report.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from retriever.methods import split_fused_spec
from retriever.report import Report

#: The encoder whose index the BM25 condition searches lexically (BM25 is built beside every index).
BM25_HOST_ENCODER = "minilm"


@dataclass(frozen=True)
class Condition:
    """One arm of the benchmark. `field` and `k` follow the pipeline defaults (impression, top-1 as in the
    paper) unless set."""

    spec: str
    field: str = "impression"
    k: int = 1

    @property
    def retrieval(self) -> bool:
        return self.spec != "none"

    @property
    def method(self) -> str:
        return "bm25" if self.spec == "bm25" else split_fused_spec(self.spec)[0]

    @property
    def encoder(self) -> str:
        return BM25_HOST_ENCODER if self.spec == "bm25" else split_fused_spec(self.spec)[1]

    @property
    def name(self) -> str:
        """Label in results and cache keys; field and k only appear when they differ from the defaults."""
        if not self.retrieval:
            return "none"
        extra = "" if (self.field, self.k) == ("impression", 1) else f"[{self.field},k={self.k}]"
        return f"{self.spec}{extra}"


def parse_conditions(text: str, field: str = "impression", k: int = 1) -> list[Condition]:
    """`none,mpnet,radsearch-minilm` -> Conditions, in order, without repeats."""
    specs = list(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
    if not specs:
        raise ValueError("no conditions given (e.g. none,mpnet,bm25)")
    return [Condition(s if s.lower() not in ("none", "bm25") else s.lower(), field, k) for s in specs]


def corpus_key(reports: Sequence[Report]) -> str:
    """Short digest of the corpus ids, so a cached index is only reused for exactly the same reports."""
    digest = hashlib.sha256(json.dumps(sorted(r.id for r in reports)).encode())
    return digest.hexdigest()[:16]


def retrieval_corpus(reports: Sequence[Report], excluded_ids: set[str]) -> list[Report]:
    """The reports the LLM may be shown: everything except the cases' own reports."""
    return [r for r in reports if r.id not in excluded_ids]


def load_or_build_index(reports: list[Report], encoder_ref: str, fields: tuple[str, ...], cache: Path):
    """A `ReportIndex` over `reports` for `encoder_ref`, built once and reused from `cache` afterwards."""
    from retriever.encoder import load_encoder
    from retriever.index import IndexLoadError, ReportIndex

    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in encoder_ref)[-60:]
    folder = cache / f"{safe}-{'-'.join(fields)}-{corpus_key(reports)}"
    encoder = load_encoder(encoder_ref)
    if (folder / "manifest.json").is_file():
        try:
            return ReportIndex.load(folder, encoder)
        except IndexLoadError:
            pass  # a different model under the same name (retrained): rebuild below
    index = ReportIndex.build(reports, encoder, fields, batch_size=32, progress=True)
    index.save(folder)
    return index
