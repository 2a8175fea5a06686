"""Query robustness: findings -> impression match@k of the shared test split, each query clean and in every variant.

The task is `eval.retrieval.findings_impression.findings_to_impression`'s (query = a report's findings, corpus = the
split's unique impressions, a hit when the report's own impression comes back), searched through the product's index.
For each variant: match@1/5/10 and MRR@10, its drop from the clean query, how many queries the variant changed, and
McNemar's p for hit@5 clean vs variant on the same queries. Abbreviated-query match@1 stands beside LLM2VEC4CXR's
acronym top-1 (0.611), a different corpus and task: a reference point, not a replication.
"""

from __future__ import annotations

from pathlib import Path

from eval.common.stats import mcnemar
from eval.retrieval.findings_impression import rank_of, summarize
from eval.robustness.search import RankerSpec, cached_index, encoder_for, search, text_reports
from eval.robustness.variants import VARIANTS, variants
from retriever.reports.record import Report

K = 10
PUBLISHED_ACRONYM_TOP1 = 0.611


def query_variants(reports: list[Report], data: Path) -> list[dict[str, str]]:
    """Every variant of every report's findings, seeded by the report id."""
    return [variants(r.findings, r.id, data) for r in reports]


def evaluate(spec: RankerSpec, reports: list[Report], queries: list[dict[str, str]]) -> dict[str, object]:
    """Scores per variant for one ranker; a variant identical to the clean query reuses its rank."""
    golds = [r.impression.strip() for r in reports]
    corpus = list(dict.fromkeys(golds))
    position = {text: n for n, text in enumerate(corpus)}
    index = cached_index("impressions", text_reports(corpus), encoder_for(spec.encoder))

    def rank(query: str, gold: str) -> int | None:
        return rank_of(position[gold], [int(hit.report.id) for hit in search(index, spec, query, K)])

    clean = [rank(q["clean"], gold) for q, gold in zip(queries, golds, strict=True)]
    result: dict[str, object] = {"ranker": spec.ref, "corpus_impressions": len(corpus)}
    for name in VARIANTS:
        ranks = [clean[n] if q[name] == q["clean"] else rank(q[name], golds[n]) for n, q in enumerate(queries)]
        scores: dict[str, object] = dict(summarize(ranks))
        scores["changed"] = sum(q[name] != q["clean"] for q in queries)
        scores["drop@5"] = round(float(summarize(clean)["match@5"]) - float(scores["match@5"]), 4)
        hits5 = [r is not None and r <= 5 for r in ranks]
        clean5 = [r is not None and r <= 5 for r in clean]
        scores["p_vs_clean@5"] = round(mcnemar(clean5, hits5).p, 4) if name != "clean" else None
        result[name] = scores
    return result
