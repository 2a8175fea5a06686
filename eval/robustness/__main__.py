"""Run the robustness benchmarks (issue 20) over the rankers asked; results merge into the previous run's file.

    python -m eval.robustness                                    # every part, the default rankers
    python -m eval.robustness --rankers mpnet --parts icd        # add one ranker to one part
    python -m eval.robustness --write-sample                     # rewrite the ICD rephrasing sample for checking
    python -m eval.robustness --parts queries --rankers $D,$D+expand,$D+expand-shared
        # with D=hybrid-weighted:radsearch-minilm-labelneg-2ep-256-avg2: query expansion off / built-in / shared table

A ranker may end with `+EXPANDER` (eval/robustness/search.py, EXPANDERS): the query-side abbreviation expansion it
searches with; a bare ranker searches the query as typed. The expansion rules were chosen on the dev split
(python -m eval.robustness.expansion_dev).

Parts: `icd` (ICD-10-CM rephrasing retrieval), `queries` (abbreviated / typo'd / British findings queries) and
`errors` (4-way error discrimination); see eval/robustness/__init__.py. Writes <name>.json and <name>.md to
eval/results/ unless --out. The ICD descriptions ship with `simple-icd-10-cm`; the other two parts read the shared
data's held-out test split and are skipped when it is absent. To compare candidates (an encoder recipe, a rule),
run them on the dev split into a file of their own and keep test for the one chosen (eval/training/encoder_choice.py):

    python -m eval.robustness --split dev --name robustness_dev --parts queries,errors --rankers $D+expand,...
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from eval.common.shared_data import DATASETS, RESULTS, SHARED_DATA, add_out_option, split_reports, write_results
from eval.retrieval.benchmark import DEFAULT_MODEL
from eval.robustness import errors, icd, queries
from eval.robustness.corrupt import ERROR_TYPES
from eval.robustness.report import render
from eval.robustness.results import (
    ErrorScores,
    ErrorSet,
    ErrorsPart,
    IcdPart,
    IcdScores,
    QueriesPart,
    QueryScores,
    QuerySet,
    RobustnessResults,
)
from eval.robustness.search import RankerSpec
from eval.robustness.variants import VARIANTS

PARTS = ("icd", "queries", "errors")
DEFAULT_RANKERS = f"bm25,minilm,mpnet,{DEFAULT_MODEL},hybrid-weighted:{DEFAULT_MODEL}"
SAMPLE_FILE = DATASETS / "icd_rephrasings_sample.jsonl"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rankers", default=DEFAULT_RANKERS, help="comma-separated: bm25, encoders, hybrid-weighted:X")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--data", type=Path, default=SHARED_DATA, help="shared data folder")
    parser.add_argument("--name", default="robustness")
    parser.add_argument(
        "--split",
        default="test",
        choices=("dev", "test"),
        help="codes of the icd part, reports of the queries and errors parts: dev to compare candidates on "
        "(e.g. --name robustness_dev), test to report once",
    )
    parser.add_argument("--write-sample", action="store_true", help=f"write the ICD sample to {SAMPLE_FILE.name}")
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    path = args.out / f"{args.name}.json"
    previous = RobustnessResults.read(path) if path.is_file() else None
    if previous and previous.split != args.split:
        parser.error(f"{args.name}.json holds {previous.split}-split results: pass another --name")
    specs = [RankerSpec.parse(r.strip()) for r in args.rankers.split(",") if r.strip()]
    corpus = icd.descriptions()
    icd_queries = icd.query_set(corpus, args.data, args.split)
    if args.write_sample:
        icd.write_sample(icd.sample(icd_queries, corpus), SAMPLE_FILE)
        print(f"wrote {SAMPLE_FILE}")
        return 0
    results = RobustnessResults(
        name=args.name,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        command=" ".join(["python -m eval.robustness", *(argv if argv is not None else sys.argv[1:])]),
        load="{:.1f} {:.1f} {:.1f}".format(*os.getloadavg()),
        split=args.split,
        icd=previous.icd if previous else None,
        queries=previous.queries if previous else None,
        errors=previous.errors if previous else None,
    )
    shared = args.data.is_dir()
    if not shared and parts != ["icd"]:
        print(f"shared data folder {args.data} is absent: only the icd part runs")
        parts = [p for p in parts if p == "icd"]
    reports = split_reports(args.data, args.split) if shared else []
    run = {"command": results.command, "load": results.load}
    if "icd" in parts:
        kept = results.icd.rankers if results.icd else {}
        results.icd = IcdPart(kept, icd.describe_set(icd_queries, corpus), **run)
    if "queries" in parts:
        variants = queries.query_variants(reports, args.data)
        changed = {v: sum(q[v] != q["clean"] for q in variants) for v in VARIANTS}
        kept_queries = results.queries.rankers if results.queries else {}
        results.queries = QueriesPart(kept_queries, QuerySet(len(reports), changed), **run)
    if "errors" in parts:
        items = errors.build_items(reports)
        counts = {t: sum(i.error_type == t for i in items) for t in ERROR_TYPES}
        kept_errors = results.errors.rankers if results.errors else {}
        results.errors = ErrorsPart(kept_errors, ErrorSet(len(reports), counts), **run)
    for part in parts:
        section = getattr(results, part)  # the part set above
        for spec in specs:
            print(f"{part}: {spec.ref}", flush=True)
            if part == "icd":
                section.rankers[spec.ref] = IcdScores.from_json(icd.evaluate(spec, icd_queries, corpus))
            elif part == "queries":
                section.rankers[spec.ref] = QueryScores.from_json(queries.evaluate(spec, reports, variants))
            else:
                section.rankers[spec.ref] = ErrorScores.from_json(errors.evaluate(spec, items))
            write_results(args.out / args.name, results, render)
    print(f"wrote {args.out / args.name}.json and .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
