"""Search methods and the default one, in a module without heavy imports (the CLI reads them to build --help).

dense = the index's encoder; bm25 = lexical; hybrid = reciprocal rank fusion of both; hybrid-weighted = a
normalized-score mix. DEFAULT_METHOD is what search, ask, chat and the LangChain retriever use unless told
otherwise: the method eval/results/retrieval.md shows best (`python -m eval.retrieval_benchmark`).
"""

from __future__ import annotations

METHODS: tuple[str, ...] = ("dense", "bm25", "hybrid", "hybrid-weighted")
DEFAULT_METHOD = "dense"
