"""The project's report index as a LangChain `BaseRetriever`, so LangChain users can compose it.

Each hit (retriever.search.hit.Hit) becomes a `Document` whose `page_content` is the text the LLM should see (findings
+ impression) and whose metadata is the hit itself (`Hit.to_metadata`): report, rank, score, matched field and
method, and the marks of a report that contradicts the query. `documents_to_hits` gives the hits back, also for
Documents of other retrievers that carry less. Retrieval itself stays in `retriever/`; this is only an adapter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from assistant.rag import answer_defaults
from assistant.rag.configuration import retrieval_configuration
from retriever.reports.record import Field
from retriever.search.hit import Hit
from retriever.search.methods import DEFAULT_METHOD, Method


def hit_to_document(hit: Hit) -> Document:
    """A hit -> Document (page_content for the prompt, the hit as metadata)."""
    return Document(id=hit.report.id, page_content=hit.report.labelled_text(), metadata=hit.to_metadata())


def documents_to_hits(documents: Sequence[Document]) -> list[Hit]:
    """The hits of retrieved Documents, ours or another retriever's (a missing id is the Document's, else
    `doc<rank>`; a missing rank the position, from 1)."""
    return [
        Hit.from_metadata(doc.metadata, rank=rank, report_id=doc.id or f"doc{rank}", text=doc.page_content)
        for rank, doc in enumerate(documents, start=1)
    ]


class ReportRetriever(BaseRetriever):
    """Top-`k` reports from a `retriever.index.report_index.ReportIndex` matched on one `field` (findings, impression,
    report), with optional `SearchFilters` and a search `method` (dense, bm25, hybrid...)."""

    index: Any
    field: Field = answer_defaults.FIELD
    k: int = answer_defaults.K
    filters: Any = None
    method: Method = DEFAULT_METHOD

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        hits = self.index.search(query, field=self.field, k=self.k, filters=self.filters, method=self.method)
        return [hit_to_document(hit) for hit in hits]

    def configuration(self) -> dict[str, Any]:
        """Which index was searched and how (assistant/rag/configuration.py)."""
        return retrieval_configuration(self.index, field=self.field, k=self.k, method=self.method, filters=self.filters)

    def query_notice(self, query: str) -> str:
        """Why the encoder will not read the whole query (empty when it does), for the answer's notes."""
        if self.method == "bm25":  # every other method encodes the query
            return ""
        return self.index.prepare(query).notice()
