"""ICD-10-CM rephrasing retrieval: each rephrasing as query, top-1 among every billable code's description.

Published exact@1 on the paper's own rephrasings (medRxiv 2025, "Evaluating embedding models for ICD-10-CM
retrieval"), given beside ours; the query sets differ (theirs are not public), so the comparison is of difficulty
in kind, not a replication on the same queries.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from eval.robustness.metrics import cer, code_scores
from eval.robustness.rephrase import PER_CODE, Rephrasing, billable_codes, rephrasings, split_codes
from eval.robustness.results import IcdSet
from eval.robustness.search import RankerSpec, cached_index, encoder_for, search, text_reports
from retriever.index.report_index import ReportIndex

PUBLISHED_EXACT_AT_1 = {
    "jina-embeddings-v2-base": 0.840,
    "e5-small-v2": 0.826,
    "S-PubMedBERT": 0.781,
    "all-MiniLM-L6-v2": 0.762,
    "ClinicalBERT": 0.644,
}
SAMPLE_SIZE = 30


def descriptions() -> dict[str, str]:
    """Code -> description for every billable ICD-10-CM code."""
    import simple_icd_10_cm as icd

    return {code: icd.get_description(code) for code in billable_codes()}


def query_set(corpus: dict[str, str], data: Path, split: str = "test") -> list[Rephrasing]:
    """The benchmark's 100 x 10 rephrasings of a split's codes (deterministic: `rephrase.split_codes`)."""
    return [r for code in split_codes(list(corpus), split) for r in rephrasings(code, corpus[code], data)]


def sample(queries: list[Rephrasing], corpus: dict[str, str], size: int = SAMPLE_SIZE, seed: int = 0) -> list[dict]:
    """A seeded sample of rephrasings with their descriptions, for checking by hand."""
    chosen = sorted(random.Random(seed).sample(range(len(queries)), size))
    return [
        {
            "code": queries[n].code,
            "description": corpus[queries[n].code],
            "rephrasing": queries[n].text,
            "rules": queries[n].rules,
        }
        for n in chosen
    ]


def write_sample(rows: list[dict], path: Path) -> None:
    """JSON lines, one rephrasing each (the hand check's verdicts are added to the committed file by hand)."""
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def icd_index(corpus: dict[str, str], encoder_ref: str) -> ReportIndex:
    """The cached index of every description (report id = code) for one encoder."""
    codes = list(corpus)
    return cached_index("icd10cm", text_reports([corpus[c] for c in codes], ids=codes), encoder_for(encoder_ref))


def evaluate(spec: RankerSpec, queries: list[Rephrasing], corpus: dict[str, str]) -> dict[str, object]:
    """`score` on the full description index of the spec's encoder."""
    return score(spec, icd_index(corpus, spec.encoder), queries, corpus)


def score(spec: RankerSpec, index: ReportIndex, queries: list[Rephrasing], corpus: dict[str, str]) -> dict[str, object]:
    """Exact code, category and CER at rank 1 for one ranker, over all queries and over those made by rules alone
    (no template around them)."""
    retrieved: list[str | None] = []
    for query in queries:
        hits = search(index, spec, query.text, k=1)
        retrieved.append(hits[0].report.id if hits else None)
    gold = [q.code for q in queries]
    errors = [cer(corpus.get(r or "", ""), corpus[g]) for r, g in zip(retrieved, gold, strict=True)]
    rules_only = [n for n, q in enumerate(queries) if "template" not in q.rules]
    result: dict[str, object] = {"ranker": spec.ref, "queries": len(queries), **code_scores(retrieved, gold, errors)}
    result["rules_only"] = code_scores(
        [retrieved[n] for n in rules_only], [gold[n] for n in rules_only], [errors[n] for n in rules_only]
    )
    return result


def describe_set(queries: list[Rephrasing], corpus: dict[str, str]) -> IcdSet:
    """What the query set is, for the results file."""
    return IcdSet(
        codes=len({q.code for q in queries}),
        per_code=PER_CODE,
        queries=len(queries),
        rules_only=sum("template" not in q.rules for q in queries),
        corpus=len(corpus),
        published_exact_at_1=PUBLISHED_EXACT_AT_1,
    )
