"""The hit: one retrieved report as every part of the project passes it on (search, the LangChain retriever, the
answer, the chat and the CLI)."""

from __future__ import annotations

from dataclasses import dataclass

from retriever.reports.record import Field, Report
from retriever.search.methods import Method


@dataclass(frozen=True)
class Hit:
    """One retrieved report: 1-based rank, score and the field matched.

    The score's scale depends on `method`: cosine (dense), BM25 score (bm25), fused score (hybrid*).
    """

    rank: int
    score: float
    field: Field
    report: Report
    method: Method = "dense"
    #: The hit's text rules out what the query asserts, or the reverse (retriever/search/contradiction.py): ranked after
    #: every hit that does not, and shown marked.
    contradicts: bool = False
    #: Not a contradiction overall, but somewhere the hit rules out a phrase the query asserts, or asserts one it
    #: rules out (a mixed report; retriever.search.contradiction.rules_out_in_part): ranked as usual, shown marked.
    partly_contradicts: bool = False
