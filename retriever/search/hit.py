"""The hit: one retrieved report as search returns it and every later part passes it on (the LangChain retriever,
the answer, the chat, the CLI and the benchmarks).

A LangChain `Document` carries a hit as its metadata (`Hit.to_metadata`: flat JSON values) and gives it back
(`Hit.from_metadata`). Why one form, written and read here: the fields used to be copied by hand from the hit to the
Document and from the Document to the answer's own report type, and a flag missed on the way was lost. A Document of
another LangChain retriever carries less; its hit leaves unknown what it cannot take from the Document itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from retriever.reports.record import FIELDS, Field, Report
from retriever.search.methods import METHODS, Method


@dataclass(frozen=True)
class IdenticalReport:
    """Another report of a hit's text (retriever/index/identical.py): which study, when, and its report status."""

    id: str
    date: str = ""
    status: str = ""


@dataclass(frozen=True)
class Hit:
    """One retrieved report: 1-based rank, score and the field matched.

    The score's scale depends on `method`: cosine (dense), BM25 score (bm25), fused score (hybrid*).
    """

    rank: int
    score: float
    #: None: not known (a Document of another retriever).
    field: Field | None
    report: Report
    #: None: not known (a Document of another retriever).
    method: Method | None = "dense"
    #: The hit's text rules out what the query asserts, or the reverse (retriever/search/contradiction.py): ranked after
    #: every hit that does not, and shown marked.
    contradicts: bool = False
    #: Not a contradiction overall, but somewhere the hit rules out a phrase the query asserts, or asserts one it
    #: rules out (a mixed report; retriever.search.contradiction.rules_out_in_part): ranked as usual, shown marked.
    partly_contradicts: bool = False
    #: The other reports whose whole text is this one's, that the search's filters let through: shown as this one hit
    #: ("and 26 identical reports"); how many votes they give a diagnosis is the evidence differential's rule.
    identical: tuple[IdenticalReport, ...] = ()
    #: The diagnoses its conclusion affirms as its index stored them, (concept id, certainty) in order
    #: (retriever/concepts/conclusion.py); None: not stored, or linked by another vocabulary (the answer links them).
    concepts: tuple[tuple[str, float], ...] | None = None

    def to_metadata(self) -> dict[str, Any]:
        """The hit as flat JSON values: its own fields and its report's, under their names (the report's id as
        `report_id`)."""
        report = self.report
        return {
            "report_id": report.id,
            "rank": self.rank,
            "score": float(self.score),
            "field": self.field,
            "method": self.method,
            "impression": report.impression,
            "findings": report.findings,
            "modality": report.modality,
            "source": report.source,
            "contradicts": self.contradicts,
            "partly_contradicts": self.partly_contradicts,
            "full_text": report.full_text,
            "labels": list(report.labels),
            "meta": dict(report.meta),
            "status": report.status,
            "exam": report.exam,
            "body_part": report.body_part,
            "addendum": report.addendum,
            "identical": [[other.id, other.date, other.status] for other in self.identical],
            "concepts": None
            if self.concepts is None
            else [[concept, certainty] for concept, certainty in self.concepts],
        }

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any], *, rank: int, report_id: str, text: str) -> Hit:
        """The hit `to_metadata` wrote, also from less (another retriever's metadata, or ours from before it carried
        the whole report): the id is `report_id` and the rank `rank` when missing, the whole text `text` (what the
        caller holds of the report: a Document's page content), the score 0, a field or method that is not ours
        None, a flag False, the other report fields empty. A report without an impression keeps none: answers show
        it by its text (`Report.shown_impression`), and it affirms nothing."""
        field, method = metadata.get("field"), metadata.get("method")
        labels, meta = metadata.get("labels"), metadata.get("meta")
        report = Report(
            id=str(metadata.get("report_id") or report_id),
            findings=str(metadata.get("findings", "")),
            impression=str(metadata.get("impression", "")),
            full_text=str(metadata.get("full_text", text)),
            modality=str(metadata.get("modality", "")),
            labels=tuple(str(label) for label in labels) if isinstance(labels, list | tuple) else (),
            source=str(metadata.get("source", "")),
            meta={str(k): str(v) for k, v in meta.items()} if isinstance(meta, Mapping) else {},
            **{name: str(metadata.get(name, "")) for name in ("status", "exam", "body_part", "addendum")},
        )
        identical = metadata.get("identical")
        return cls(
            rank=int(metadata.get("rank", rank)),
            score=float(metadata.get("score", 0.0)),
            field=field if field in FIELDS else None,
            report=report,
            method=method if method in METHODS else None,
            contradicts=bool(metadata.get("contradicts", False)),
            partly_contradicts=bool(metadata.get("partly_contradicts", False)),
            identical=tuple(
                IdenticalReport(*(str(part) for part in other[:3]))
                for other in (identical if isinstance(identical, list | tuple) else ())
                if isinstance(other, list | tuple) and other
            ),
            concepts=_concepts(metadata.get("concepts")),
        )


def _concepts(value: object) -> tuple[tuple[str, float], ...] | None:
    """The stored concepts `to_metadata` wrote, or None for anything else (the answer then links the text)."""
    if not isinstance(value, list | tuple):
        return None
    pairs = [pair for pair in value if isinstance(pair, list | tuple) and len(pair) == 2]
    if len(pairs) != len(value) or not all(isinstance(c, str) and isinstance(w, int | float) for c, w in pairs):
        return None
    return tuple((concept, float(certainty)) for concept, certainty in pairs)
