"""Search methods and the default one, in a module without heavy imports (the CLI reads them to build --help).

dense = the index's encoder; bm25 = lexical; hybrid = reciprocal rank fusion of both; hybrid-weighted = a
normalized-score mix. DEFAULT_METHOD is what search, ask, chat and the LangChain retriever use unless told
otherwise: the method eval/results/retrieval_dev.md shows best for the default encoder (`python -m
eval.retrieval.benchmark`), as the preset records it (models/preset.py).
"""

from __future__ import annotations

from typing import Literal, cast, get_args

from models.preset import PRESET

#: A search method; METHODS in the order the CLI lists them.
Method = Literal["dense", "bm25", "hybrid", "hybrid-weighted"]
METHODS: tuple[Method, ...] = get_args(Method)
#: Methods that fuse BM25 with a dense encoder; benchmark specs name them as a prefix ("hybrid:radsearch-minilm").
FUSED_METHODS: tuple[Method, ...] = ("hybrid", "hybrid-weighted")


def checked_method(name: str) -> Method:
    """`name` as a Method; ValueError naming the methods otherwise (a method given as text: a flag, the preset)."""
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; choose one of {', '.join(METHODS)}")
    return cast(Method, name)


DEFAULT_METHOD = checked_method(PRESET.default_search.method)
#: The second stage search, ask and chat re-score the top hits with unless told otherwise (`--reranker`,
#: RADSEARCH_RERANKER; `off` for none): the model-free support check (retriever/search/support.py; it re-scores
#: impression searches only), adopted by the rule of `python -m eval.robustness.rerank_benchmark --reranker support`
#: on the dev split (eval/results/support_fusion_dev.md), written to the preset (models/preset.json) and kept equal to
#: it by tests/retriever/test_support.py.
DEFAULT_SECOND_STAGE: str | None = PRESET.default_search.second_stage


def split_fused_spec(spec: str) -> tuple[Method, str]:
    """`hybrid:ENCODER` -> ("hybrid", "ENCODER"); anything else is an encoder reference -> ("dense", spec)."""
    method, _, encoder = spec.partition(":")
    return (checked_method(method), encoder) if encoder and method in FUSED_METHODS else ("dense", spec)
