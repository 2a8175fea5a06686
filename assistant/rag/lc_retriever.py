"""The project's report index as a LangChain `BaseRetriever`, so LangChain users can compose it.

Each hit becomes a `Document` whose `page_content` is the text the LLM should see (findings + impression) and
whose metadata carries what the answer cites: report id, rank, score, matched field, impression, findings,
modality, source, and `contradicts` (the report says the opposite of the query:
`retriever.search.hit.Hit.contradicts`, shown marked by the chat and `assistant ask`). Retrieval itself stays in
`retriever/`; this is only an adapter.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from assistant.rag import answer_defaults
from assistant.rag.answer import RetrievedReport
from assistant.rag.configuration import retrieval_configuration
from retriever.search.methods import DEFAULT_METHOD


def report_text(findings: str, impression: str, full_text: str) -> str:
    """What the LLM reads from a report: labelled sections, or the whole text when they are missing."""
    parts = [
        f"FINDINGS: {findings.strip()}" if findings.strip() else "",
        f"IMPRESSION: {impression.strip()}" if impression.strip() else "",
    ]
    text = "\n".join(p for p in parts if p)
    return text or full_text.strip()


def hit_to_document(hit: Any) -> Document:
    """A `retriever.search.hit.Hit` -> Document (page_content for the prompt, metadata for the answer)."""
    report = hit.report
    return Document(
        id=report.id,
        page_content=report_text(report.findings, report.impression, report.full_text),
        metadata={
            "report_id": report.id,
            "rank": hit.rank,
            "score": float(hit.score),
            "field": hit.field,
            "method": getattr(hit, "method", "dense"),
            "impression": report.impression,
            "findings": report.findings,
            "modality": report.modality,
            "source": report.source,
            "contradicts": hit.contradicts,
            "partly_contradicts": hit.partly_contradicts,
        },
    )


def document_to_report(doc: Document, rank: int) -> RetrievedReport:
    """Back from a Document (ours, or another retriever's with less metadata) to what an Answer shows."""
    meta = doc.metadata
    return RetrievedReport(
        report_id=str(meta.get("report_id") or doc.id or f"doc{rank}"),
        rank=int(meta.get("rank", rank)),
        score=float(meta.get("score", 0.0)),
        field=str(meta.get("field", "")),
        impression=str(meta.get("impression") or doc.page_content),
        findings=str(meta.get("findings", "")),
        modality=str(meta.get("modality", "")),
        source=str(meta.get("source", "")),
        contradicts=bool(meta.get("contradicts", False)),
        partly_contradicts=bool(meta.get("partly_contradicts", False)),
    )


class ReportRetriever(BaseRetriever):
    """Top-`k` reports from a `retriever.index.report_index.ReportIndex` matched on one `field` (findings, impression,
    report), with optional `SearchFilters` and a `method` of `retriever.index.report_index.METHODS` (dense, bm25,
    hybrid...)."""

    index: Any
    field: str = answer_defaults.FIELD
    k: int = answer_defaults.K
    filters: Any = None
    method: str = DEFAULT_METHOD

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
