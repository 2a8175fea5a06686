"""Negated-hit rate: how often search returns a report that rules out the very finding the query asserts.

    python -m eval.negation.negated_hits                                  # minilm + mpnet, label and findings queries
    python -m eval.negation.negated_hits --encoders minilm,mpnet,radsearch-minilm-labelneg-2ep-256-avg2 --kinds label

For a query that asserts a finding, negated-hit rate@k = share of the top-k hits whose text mentions the finding
only negated (eval.negation.finding_mentions: a hit that does not mention it, or affirms it anywhere, is not negated).
For a resident that is the most dangerous hit there is: a report saying the opposite of the question. Queries:
- label: each NegBio (Open-i) and CT-RATE label in words ("pleural effusion", "lung nodule") over the whole shared
  corpus; its source is the label set's;
- findings: the findings of each shared test-split Open-i / CT-RATE report, once per labelled finding its findings
  affirm; the report itself is left out of its hits; its source is the report's.
Search runs through the product's own `ReportIndex` (cached under the data home by
eval.diagnosis.conditions.load_or_build_index) with every method of retriever.search.methods, and the default method
once more with the product's second stage (`hybrid-weighted+rerank=support`, the default as searched), matched on one
field (default: the product's default, impression) and judged on that field's text. BM25 is the same whichever encoder's
index hosts it, so it is run once. Negation is judged by each detector of eval.negation.detection asked for (default:
`either`, best on Open-i reports there, then the project's `rules` for comparison). Encoders that are not available (a
fine-tuned model not trained on this machine yet) are skipped with a note. Writes eval/results/negated_hits.{json,md}.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from statistics import mean
from typing import Any

from eval.common.shared_data import RESULTS, SHARED_DATA, add_out_option, eval_home, load_shared, write_results
from eval.diagnosis.conditions import load_or_build_index
from eval.negation.detection import DETECTORS, load_detector
from eval.negation.finding_mentions import Detector, Status, mention_status
from eval.negation.results import HitRate, MethodRates, NegatedHitExample, NegatedHits, QueryInfo, SparseHits
from eval.retrieval.findings_impression import RERANK_SUFFIX, reranker_for
from retriever.negation.pairs import mentions
from retriever.reports.findings import FINDINGS_BY_SOURCE, Finding
from retriever.reports.record import FIELDS, Field, Report
from retriever.reports.splits import split_of
from retriever.search.methods import DEFAULT_METHOD, DEFAULT_SECOND_STAGE, METHODS, Method

K_VALUES = (5, 10)
KINDS = ("label", "findings")
#: The acceptance bar of issue 17 for the default method at @5: at most this rate, and at most this share of BM25's.
TARGET_RATE, TARGET_SHARE_OF_BM25 = 0.02, 1 / 3
POOLED = "all"


@dataclass(frozen=True)
class Query:
    """A query text that asserts `finding`; `exclude` is a report id kept out of its hits (the query's own)."""

    kind: str
    source: str
    text: str
    finding: Finding
    exclude: str = ""


def label_queries() -> list[Query]:
    """One query per dataset label, in words."""
    return [Query("label", source, f.query, f) for source, findings in FINDINGS_BY_SOURCE.items() for f in findings]


def findings_queries(reports: Sequence[Report], detector: Detector) -> list[Query]:
    """Test-split findings that affirm one of their report's labels, once per such label."""
    return [
        Query("findings", r.source, r.findings, f, exclude=r.id)
        for r in reports
        if r.source in FINDINGS_BY_SOURCE and r.findings.strip() and split_of(r.id) == "test"
        for f in FINDINGS_BY_SOURCE[r.source]
        if f.label in r.labels and mention_status(r.findings, f, detector) == Status.AFFIRMED
    ]


def negated_hit_rate(statuses: Sequence[Status], k: int) -> float:
    """Share of the first k hits (of those returned) that mention the finding only negated."""
    top = statuses[:k]
    return sum(s == Status.NEGATED for s in top) / len(top) if top else 0.0


Search = Callable[[str, Method, int], list[Report]]  # (query text, method, k) -> hit reports, best first


def judge(
    queries: Sequence[Query], search: Search, method: Method, field: Field, detectors: dict[str, Detector]
) -> list[dict[str, Any]]:
    """Per query (by its position in `queries`): the number of hits and, per detector, the negated-hit rate at each k
    and the negated hits as [rank, report id]."""
    depth = max(K_VALUES)
    rows = []
    for number, q in enumerate(queries):
        hits = [r for r in search(q.text, method, depth + 1) if r.id != q.exclude][:depth]
        row: dict[str, Any] = {
            "query": number,
            "kind": q.kind,
            "source": q.source,
            "finding": q.finding.label,
            "hits": len(hits),
            "rates": {},
            "negated": {},
        }
        for name, detector in detectors.items():
            statuses = [_status(r.text_of(field), q.finding, detector) for r in hits]
            row["rates"][name] = {f"@{k}": negated_hit_rate(statuses, k) for k in K_VALUES}
            row["negated"][name] = [
                [rank, r.id] for rank, (r, s) in enumerate(zip(hits, statuses, strict=True), 1) if s == Status.NEGATED
            ]
        rows.append(row)
    return rows


@cache
def _status(text: str, finding: Finding, detector: Detector) -> Status:
    """mention_status, memoized: the same impressions come back for many queries and methods."""
    return mention_status(text, finding, detector)


def summarize(rows: Sequence[dict[str, Any]], detector: str) -> dict[str, HitRate]:
    """Mean rate per (kind, source), and pooled over the sources of a kind."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        for source in (row["source"], POOLED):
            groups.setdefault(f"{row['kind']}/{source}", []).append(row)
    return {
        key: HitRate(
            len(group), {f"@{k}": round(mean(r["rates"][detector][f"@{k}"] for r in group), 4) for k in K_VALUES}
        )
        for key, group in sorted(groups.items())
    }


def sparse(rows: Sequence[dict[str, Any]], detector_names: Sequence[str]) -> SparseHits:
    """What the summary does not hold, compactly (for paired tests between runs): per detector the negated hits of
    each query that has any, and the queries that got fewer hits than the deepest k. Keys are query numbers."""
    return SparseHits(
        negated={
            name: {str(r["query"]): r["negated"][name] for r in rows if r["negated"][name]} for name in detector_names
        },
        short={str(r["query"]): r["hits"] for r in rows if r["hits"] < max(K_VALUES)},
    )


def index_search(index: Any, field: Field) -> Search:
    """The product's search, reduced to the hit reports."""
    return lambda text, method, k: [h.report for h in index.search(text, field=field, k=k, method=method)]


def run(
    encoders: Sequence[str], kinds: Sequence[str], field: Field, detector_names: Sequence[str], data: Path
) -> NegatedHits:
    """Every (method, encoder) over the queries of `kinds`; skipped encoders noted, not fatal."""
    from models.resolve import ModelNotAvailable

    detectors = {name: load_detector(name) for name in detector_names}
    reports = load_shared(data).reports
    queries = [
        q
        for kind in kinds
        for q in (label_queries() if kind == "label" else findings_queries(reports, detectors[detector_names[0]]))
    ]
    results: list[MethodRates] = []
    skipped: dict[str, str] = {}
    timings: dict[str, float] = {}
    for encoder in encoders:
        started = time.monotonic()
        try:
            index = load_or_build_index(reports, encoder, (field,), eval_home() / "indexes")
        except ModelNotAvailable as exc:
            skipped[encoder] = str(exc)
            print(f"skipped {encoder}: {exc}", file=sys.stderr)
            continue
        timings[f"index {encoder}"] = round(time.monotonic() - started, 1)
        methods = [m for m in METHODS if m != "bm25" or not any(r.method == "bm25" for r in results)]
        # the product's default method twice when it has a second stage: as searched (the default) and without it
        stages = [(method, None) for method in methods] + (
            [(DEFAULT_METHOD, DEFAULT_SECOND_STAGE)] if DEFAULT_SECOND_STAGE else []
        )
        for method, stage in stages:
            label = f"{method}{RERANK_SUFFIX}{stage}" if stage else method
            staged = index.with_search(second_stage=reranker_for(stage) if stage else None)
            started = time.monotonic()
            rows = judge(queries, index_search(staged, field), method, field, detectors)
            timings[f"{label} {encoder}"] = round(time.monotonic() - started, 1)
            results.append(
                MethodRates(
                    method=label,
                    encoder="" if method == "bm25" else encoder,
                    default=method == DEFAULT_METHOD and stage == DEFAULT_SECOND_STAGE,
                    summary={name: summarize(rows, name) for name in detector_names},
                    per_query=sparse(rows, detector_names),
                )
            )
            print(f"{label} {encoder}: {results[-1].summary[detector_names[0]]}", file=sys.stderr)
    return NegatedHits(
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        machine=f"{platform.machine()}, python {platform.python_version()}",
        command=f"python -m eval.negation.negated_hits --encoders {','.join(encoders)} --kinds {','.join(kinds)} "
        f"--field {field} --detectors {','.join(detector_names)}",
        field=field,
        corpus_reports=len(reports),
        queries={kind: sum(q.kind == kind for q in queries) for kind in kinds},
        query_list=[QueryInfo(q.kind, q.source, q.finding.label, q.text[:80], q.exclude) for q in queries],
        detectors=list(detector_names),
        default_method=DEFAULT_METHOD,
        second_stage=DEFAULT_SECOND_STAGE,
        skipped_encoders=skipped,
        seconds=timings,
        results=results,
        examples=_examples(results, queries, reports, field, detector_names[0]),
    )


def _examples(
    results: Sequence[MethodRates],
    queries: Sequence[Query],
    reports: Sequence[Report],
    field: Field,
    detector: str,
    limit: int = 6,
) -> list[NegatedHitExample]:
    """Negated hits of the default method, with the sentence that rules the finding out."""
    by_id = {r.id: r for r in reports}
    examples = []
    for result in results:
        if not result.default:
            continue
        for number, negated in result.per_query.negated[detector].items():
            query, hit_id = queries[int(number)], str(negated[0][1])
            said = " | ".join(text for text, _ in mentions(by_id[hit_id].text_of(field), query.finding.terms))
            examples.append(NegatedHitExample(result.encoder, query.text[:80], query.finding.label, hit_id, said[:200]))
            if len(examples) >= limit:
                return examples
    return examples


def render(payload: NegatedHits) -> str:
    """Markdown: one table per detector and query kind, the default method marked, the acceptance check."""
    lines = [
        "# Negated-hit rate: share of top-k hits that mention the query's finding only negated",
        "",
        f"Command: `{payload.command}` ({payload.created}). Corpus: {payload.corpus_reports} shared "
        f"reports, field `{payload.field}` searched and judged. Queries: "
        + ", ".join(f"{n} {kind}" for kind, n in payload.queries.items())
        + f". Default as searched: `{payload.default_method}`"
        + (f" with the `{payload.second_stage}` second stage" if payload.second_stage else "")
        + " (**bold**).",
        "",
    ]
    bm25 = next((r for r in payload.results if r.method == "bm25"), None)
    for detector in payload.detectors:
        for kind in payload.queries:
            keys = sorted(
                {key for r in payload.results for key in r.summary[detector] if key.startswith(kind)},
                key=lambda key: (key.endswith(POOLED), key),
            )
            if not keys:
                continue
            lines += [
                f"## {kind} queries, negation by `{detector}`",
                "",
                "| method | encoder | "
                + " | ".join(f"{key.split('/')[1]} @{k}" for key in keys for k in K_VALUES)
                + " |",
                "|---|---|" + "---:|" * (len(keys) * len(K_VALUES)),
            ]
            for r in payload.results:
                summary = r.summary[detector]
                cells = [f"{summary[key].at[f'@{k}']:.1%}" if key in summary else "—" for key in keys for k in K_VALUES]
                name = f"**{r.method}**" if r.default else r.method
                lines.append(f"| {name} | {r.encoder or '—'} | " + " | ".join(cells) + " |")
            queries = {
                key: max(r.summary[detector][key].queries if key in r.summary[detector] else 0 for r in payload.results)
                for key in keys
            }
            lines += ["", "Queries: " + ", ".join(f"{key.split('/')[1]} {n}" for key, n in queries.items()), ""]
            if bm25 is not None:
                lines += _acceptance(payload.results, bm25, detector, f"{kind}/{POOLED}")
    if payload.skipped_encoders:
        lines += [
            "Skipped encoders: " + "; ".join(f"`{e}`: {why}" for e, why in payload.skipped_encoders.items()),
            "",
        ]
    if payload.examples:
        lines += [f"Negated hits of the default method (judged by `{payload.detectors[0]}`):", ""]
        lines += [f'- `{e.encoder}` query "{e.query}" ({e.finding}) -> {e.hit}: {e.says}' for e in payload.examples]
        lines.append("")
    return "\n".join(lines)


def _acceptance(results: Sequence[MethodRates], bm25: MethodRates, detector: str, key: str) -> list[str]:
    """Issue 17's bar for the default method at @5, per encoder: <= 2 % and <= 1/3 of BM25's rate."""
    if key not in bm25.summary[detector]:
        return []
    base = bm25.summary[detector][key].at["@5"]
    lines = []
    for r in results:
        if r.default and key in r.summary[detector]:
            rate = r.summary[detector][key].at["@5"]
            ok = rate <= TARGET_RATE and rate <= base * TARGET_SHARE_OF_BM25
            lines.append(
                f"- target ({key}, @5): `{r.method}` + {r.encoder} {rate:.1%} vs BM25 {base:.1%} "
                f"(bar: ≤ {TARGET_RATE:.0%} and ≤ {base * TARGET_SHARE_OF_BM25:.1%}): "
                f"{'met' if ok else 'not met'}"
            )
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoders", default="minilm,mpnet", help="comma-separated encoder references")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}")
    parser.add_argument("--field", default="impression", choices=FIELDS)
    parser.add_argument(
        "--detectors",
        default="either,rules",
        help=f"comma-separated, of {', '.join(DETECTORS)}; "
        "the first one selects the findings queries and heads the report",
    )
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    add_out_option(parser, RESULTS / "negated_hits")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"skipped: shared data folder {args.data} is absent")
        return 0
    split = [s.strip() for s in args.encoders.split(",") if s.strip()]
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip() in KINDS]
    detectors = [d.strip() for d in args.detectors.split(",") if d.strip()]
    payload = run(split, kinds, args.field, detectors, args.data)
    print(write_results(args.out, payload, render))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
