"""Choose the dense weight of `hybrid-weighted` search on the DEV split, never on the test split.

    python -m eval.retrieval.fusion_sweep                                   # default-recipe model, shared data
    python -m eval.retrieval.fusion_sweep --encoder my-site-minilm --corpus my_reports.csv
    python -m eval.retrieval.fusion_sweep --reranker off --name fusion_sweep_off   # first stage only
    python -m eval.retrieval.fusion_sweep --stage-on-every-field --name fusion_sweep_all_fields

For each dense weight of the BM25 + dense score mix (and, for reference, dense alone, BM25 alone and RRF), scores
the quantities the retrieval targets check (eval.retrieval.benchmark): findings -> impression match@5 per source
and finding-label P@10 on the sources that have labels. The weight with the best mean of those numbers (every
source counts the same, as the targets ask for every source) is the one to put into
retriever.search.fusion.DENSE_WEIGHT. Every setting ranks through a ReportIndex as the retrieval benchmark does
(eval.retrieval.findings_impression.IndexRanker), the weighted ones with the index's dense weight set to theirs, and
each with the second stage search uses by default (retriever.search.methods.DEFAULT_SECOND_STAGE, `--reranker off` for
none): the stage re-scores the fused hits, so the weight that is best without it need not be best with it, and users
search with it (label P@10 searches whole reports, which the support check leaves alone; `--stage-on-every-field` lets
it re-score them too, which is how its field scope was measured, retriever/search/support.py). Writes
eval/results/NAME.json and .md (`--name`, default fusion_sweep). Skips cleanly when the shared data is absent.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval.common.records import Record, ResultsFile, optional
from eval.common.shared_data import (
    CORPORA,
    RESULTS,
    SHARED_DATA,
    add_encoder_backend_option,
    add_out_option,
    write_results,
)
from eval.retrieval.benchmark import DEFAULT_MODEL, LABEL_TARGET_SOURCES
from eval.retrieval.findings_impression import IndexRanker, Ranker, cached_encoder, findings_to_impression, reranker_for
from eval.retrieval.label_metrics import label_retrieval
from models.preset import adopt_search
from retriever.reports.splits import split_of
from retriever.search.methods import DEFAULT_SECOND_STAGE

WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass
class SettingScores(Record):
    """One fusion setting: each target quantity (`match@5 SOURCE`, `label P@10 SOURCE`) and their unweighted mean."""

    metrics: dict[str, float]
    mean: float


@dataclass
class FusionSweep(ResultsFile):
    """A sweep of the dense weight (eval/results/fusion_sweep*.json), read by its report."""

    KIND = "fusion sweep results"

    created: str
    command: str
    encoder: str
    encoder_backend: str
    reranker: str
    split: str
    reports: dict[str, int]
    rows: dict[str, SettingScores]
    best_dense_weight: float
    #: Which fields the second stage re-scored (sweeps before the option lack it: every field).
    stage_fields: str | None = optional()


def score(by_source: dict[str, list[Any]], ranker: Ranker) -> SettingScores:
    """match@5 per source and label P@10 where labels exist, and their unweighted mean (the selection score)."""
    metrics: dict[str, float] = {}
    for source, reports in sorted(by_source.items()):
        metrics[f"match@5 {source}"] = findings_to_impression(reports, ranker)["all"]["match@5"]
        if source in LABEL_TARGET_SOURCES:
            found = label_retrieval(reports, ranker, ("finding_label",)).get("finding_label")
            if found:
                metrics[f"label P@10 {source}"] = found["p@10"]
    return SettingScores(metrics, round(sum(metrics.values()) / len(metrics), 4))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", default=DEFAULT_MODEL)
    parser.add_argument(
        "--adopt", action="store_true", help="write the chosen weight into the preset for --encoder (dev split only)"
    )
    parser.add_argument("--corpus", action="append", default=[], help="report corpus (repeatable; default shared)")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--split", default="dev", choices=("train", "dev", "all"))
    add_out_option(parser, RESULTS)
    parser.add_argument("--name", default="fusion_sweep", help="results file stem (default: %(default)s)")
    parser.add_argument(
        "--reranker",
        default=DEFAULT_SECOND_STAGE or "off",
        help="second stage every setting re-scores with, as search does (default: the product's, "
        "%(default)s; `off` for none)",
    )
    parser.add_argument(
        "--stage-on-every-field",
        action="store_true",
        help="the second stage re-scores every searched field, whole reports too (as before its scope "
        "was set): the measurement behind retriever/search/support.py's FIELDS",
    )
    add_encoder_backend_option(parser)
    args = parser.parse_args(argv)
    from retriever.encoders.encoder import load_encoder
    from retriever.reports.ingest import ingest

    if not args.corpus and not args.data.is_dir():
        print(f"skipped: shared data folder {args.data} is absent and no --corpus given")
        return 0
    ingested = ingest(args.corpus or [str(args.data / c) for c in CORPORA])
    by_source: dict[str, list[Any]] = {}
    for report in ingested.reports:
        if args.split == "all" or split_of(report.id) == args.split:
            by_source.setdefault(report.source or "reports", []).append(report)
    encoder = cached_encoder(load_encoder(args.encoder, backend=args.encoder_backend))  # one encoding for all
    stage = None if args.reranker == "off" else reranker_for(args.reranker)
    if stage is not None and args.stage_on_every_field:
        stage = copy.copy(stage)
        stage.fields = None
    rankers: dict[str, Ranker] = {
        "dense": IndexRanker("dense", encoder=encoder, reranker=stage),
        "bm25": IndexRanker("bm25", method="bm25", reranker=stage),
        "hybrid (RRF)": IndexRanker("rrf", method="hybrid", encoder=encoder, reranker=stage),
    }
    for weight in WEIGHTS:
        rankers[f"weighted {weight}"] = IndexRanker(
            f"w{weight}", "hybrid-weighted", encoder, dense_weight=weight, reranker=stage
        )
    rows = {}
    for name, ranker in rankers.items():
        print(f"scoring {name}", flush=True)
        rows[name] = score(by_source, ranker)
    best = max(WEIGHTS, key=lambda w: (rows[f"weighted {w}"].mean, -abs(w - 0.5)))
    results = FusionSweep(
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        command=" ".join(["python -m eval.retrieval.fusion_sweep", *(argv if argv is not None else sys.argv[1:])]),
        encoder=args.encoder,
        encoder_backend=args.encoder_backend,
        reranker=args.reranker,
        stage_fields="all" if args.stage_on_every_field else "the stage's own",
        split=args.split,
        reports={source: len(reports) for source, reports in by_source.items()},
        rows=rows,
        best_dense_weight=best,
    )
    write_results(args.out / args.name, results, render)
    print(f"best dense weight on the {args.split} split: {best}; wrote {args.out / args.name}.md")
    if args.adopt:
        adopt_search(args.encoder, f"eval/results/{args.name}.json", dense_weight=best)
        print(f"wrote dense weight {best} for {args.encoder} into the preset (models/preset.json)")
    return 0


def render(results: FusionSweep) -> str:
    """One row per fusion setting, one column per target quantity, the mean last."""
    columns = list(next(iter(results.rows.values())).metrics)
    lines = [
        f"# Fusion weight sweep ({results.split} split)",
        "",
        f"Written {results.created} by `{results.command}`. Encoder `{results.encoder}` "
        f"({results.encoder_backend}), second stage `{results.reranker}` "
        f"(fields: {results.stage_fields or 'all'}); reports "
        f"{json.dumps(results.reports)}. Each column is a quantity the retrieval targets check; the mean "
        "weighs every source the same. The best weighted mix sets `retriever.search.fusion.DENSE_WEIGHT`.",
        "",
        "| setting | " + " | ".join(columns) + " | mean |",
        "|---" * (len(columns) + 2) + "|",
    ]
    for name, row in results.rows.items():
        cells = " | ".join(f"{row.metrics.get(c, float('nan')):.3f}" for c in columns)
        marker = "**" if name == f"weighted {results.best_dense_weight}" else ""
        lines.append(f"| {marker}{name}{marker} | {cells} | {row.mean:.3f} |")
    lines += ["", f"Best dense weight: **{results.best_dense_weight}** (ties go to the one nearest 0.5)."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
