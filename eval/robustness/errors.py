"""Error discrimination (LLM2VEC4CXR, 2025): does search put a report's true impression above corrupted copies?

For each held-out report and error type (`corrupt.ERROR_TYPES`) that allows three corruptions of its impression,
an item is the report's findings as query and four candidates: the impression and its three corruptions. All items'
candidates form one index (BM25 statistics of the whole set); each item is searched within its own four
(`SearchFilters(label=item)`), with the product's search, contradiction re-ranking included. Correct when the
original impression is ranked first with a strictly higher score than the second, or the second is marked as
contradicting the query and the original is not; a tie counts as wrong (chance = 0.25).
"""

from __future__ import annotations

from dataclasses import dataclass

from eval.common.stats import share
from eval.robustness.corrupt import ERROR_TYPES, corruptions
from eval.robustness.search import RankerSpec, cached_index, encoder_for, search, text_reports
from retriever.index.report_index import ReportIndex
from retriever.reports.record import Report
from retriever.search.hit import Hit

PUBLISHED_BEST = 0.841
CHANCE = 0.25


@dataclass(frozen=True)
class Item:
    """One discrimination question: the query, the original candidate first, then its corruptions."""

    key: str
    error_type: str
    query: str
    candidates: tuple[str, ...]


def build_items(reports: list[Report]) -> list[Item]:
    """Every (report, error type) pair whose impression allows three corruptions of that type."""
    items = []
    for report in reports:
        original = report.impression.strip()
        for error_type in ERROR_TYPES:
            corrupted = corruptions(original, error_type, seed=report.id)
            if corrupted is not None:
                key = f"{error_type}:{report.id}"
                items.append(Item(key, error_type, report.findings, (original, *corrupted)))
    return items


def original_first(hits: list[Hit], original_id: str) -> bool:
    """The scoring rule of the module docstring."""
    if not hits or hits[0].report.id != original_id:
        return False
    if len(hits) == 1:
        return True
    second = hits[1]
    return hits[0].score > second.score or (second.contradicts and not hits[0].contradicts)


def items_index(items: list[Item], encoder_ref: str) -> ReportIndex:
    """One cached index of every item's candidates, labelled by item (id `KEY#n`, the original is n = 0)."""
    texts, ids, groups = [], [], []
    for item in items:
        for n, text in enumerate(item.candidates):
            texts.append(text)
            ids.append(f"{item.key}#{n}")
            groups.append(item.key)
    return cached_index("errors", text_reports(texts, ids=ids, groups=groups), encoder_for(encoder_ref))


def evaluate(spec: RankerSpec, items: list[Item]) -> dict[str, object]:
    """`score` on the index of the items' candidates built with the spec's encoder."""
    return score(spec, items_index(items, spec.encoder), items)


def score(spec: RankerSpec, index: ReportIndex, items: list[Item]) -> dict[str, object]:
    """4-way accuracy per error type and over all items, with Wilson intervals."""
    correct = {
        item.key: original_first(search(index, spec, item.query, len(item.candidates), group=item.key), f"{item.key}#0")
        for item in items
    }
    result: dict[str, object] = {"ranker": spec.ref, "all": share(list(correct.values()))}
    for error_type in ERROR_TYPES:
        result[error_type] = share([correct[i.key] for i in items if i.error_type == error_type])
    return result
