"""Shared by the issue-51 injection regressions: a retriever over a fixed ranked list of reports, so a test says
exactly which reports a question retrieves (the pipeline, the evidence, the prompt and the model client are real)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from assistant.rag.lc_retriever import hit_to_document
from retriever.reports.record import Report
from retriever.search.hit import Hit


class RankedReports(BaseRetriever):
    """Retrieves `reports` in their order, whatever the question (similarity falling from 0.95 by 0.01 a rank)."""

    reports: Sequence[Report]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return [
            hit_to_document(Hit(rank, 0.95 - rank / 100, "findings", report))
            for rank, report in enumerate(self.reports, start=1)
        ]


def genuine(n: int, text: str = "Right lower lobe pneumonia.") -> list[Report]:
    """`n` ordinary reports of one diagnosis, ids g1..gn."""
    return [
        Report(f"g{i}", findings="Air space opacity in the right lower lobe with air bronchograms.", impression=text)
        for i in range(1, n + 1)
    ]
