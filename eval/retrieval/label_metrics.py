"""Label retrieval metrics: do the reports retrieved for a report's findings share its labels?

The RadSearch paper's examination-type matching, generalized: for a label kind (modality, body part, source,
finding labels) a retrieved report is relevant when it shares the query report's value (for finding labels:
at least one label). Query = a report's findings; corpus = the full texts of the other reports. Metrics:
mAP@100 (average precision over the top 100, normalized by min(relevant, 100)) and P@10, over the queries that
have at least one relevant report in the corpus.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from eval.retrieval.findings_impression import Ranker
from retriever.reports.record import Report

AP_DEPTH = 100
P_DEPTH = 10
#: Label kinds: report -> its set of values (empty: the report has no such label and is not a query).
LabelFn = Callable[[Report], frozenset[str]]
LABEL_KINDS: dict[str, LabelFn] = {
    "modality": lambda r: frozenset({r.modality.upper()} if r.modality else ()),
    "body_part": lambda r: frozenset({r.body_part.lower()} if r.body_part else ()),
    "source": lambda r: frozenset({r.source} if r.source else ()),
    "finding_label": lambda r: frozenset(label.lower() for label in r.labels if label.lower() != "normal"),
}


def average_precision(relevant: Sequence[bool], total_relevant: int, depth: int = AP_DEPTH) -> float:
    """AP over the first `depth` results: mean of precision at each relevant rank, divided by
    min(total_relevant, depth) so a list that could not hold every relevant item is not penalized."""
    denominator = min(total_relevant, depth)
    if denominator == 0:
        return 0.0
    hits, total = 0, 0.0
    for rank, rel in enumerate(relevant[:depth], start=1):
        if rel:
            hits += 1
            total += hits / rank
    return total / denominator


def precision_at(relevant: Sequence[bool], k: int = P_DEPTH) -> float:
    """Share of the top k that is relevant (missing positions count as not relevant)."""
    return sum(1 for rel in relevant[:k] if rel) / k


def label_retrieval(
    reports: Sequence[Report], ranker: Ranker, kinds: Sequence[str] = tuple(LABEL_KINDS), per_query: bool = False
) -> dict:
    """mAP@100 and P@10 per label kind, with findings as the query and the other reports' full texts as corpus.
    A kind is skipped when fewer than two values occur (every report would be relevant). With `per_query`, each
    scored query's report id and P@10 are kept too, for paired tests between rankers."""
    usable = [r for r in reports if r.findings.strip()]
    corpus = [r.text_of("report") for r in usable]
    depth = min(AP_DEPTH, len(usable) - 1)
    if depth < 1:
        return {}
    ranked = ranker.rank([r.findings for r in usable], corpus, depth + 1, "report")
    results: dict[str, dict[str, float]] = {}
    for kind in kinds:
        values = [LABEL_KINDS[kind](r) for r in usable]
        if len(set().union(*values)) < 2:
            continue
        aps, precisions, ids = [], [], []
        for i, row in enumerate(ranked):
            if not values[i]:
                continue
            total = sum(1 for j, v in enumerate(values) if j != i and values[i] & v)
            if total == 0:  # nothing to find: a query no ranker could score on (as in BEIR, left out)
                continue
            others = [j for j in row if j != i][:depth]
            relevant = [bool(values[i] & values[j]) for j in others]
            aps.append(average_precision(relevant, total, depth))
            precisions.append(precision_at(relevant))
            ids.append(usable[i].id)
        results[kind] = {
            "queries": len(aps),
            f"map@{AP_DEPTH}": round(sum(aps) / len(aps), 4) if aps else 0.0,
            f"p@{P_DEPTH}": round(sum(precisions) / len(precisions), 4) if precisions else 0.0,
        }
        if per_query:
            results[kind]["per_query"] = {"id": ids, f"p@{P_DEPTH}": precisions}
    return results
