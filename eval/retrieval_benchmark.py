"""Retrieval benchmark: every retrieval metric for BM25 and any encoders, on the shared data or your reports.

    python -m eval.retrieval_benchmark                                   # shared data, held-out test split
    python -m eval.retrieval_benchmark --rankers bm25,minilm,mpnet,radsearch-minilm
    python -m eval.retrieval_benchmark --corpus my_reports.csv --split all --beir my_queries/ --name my_site

Metrics (see eval.retrieval, eval.label_metrics, eval.beir):
- findings -> impression match@1/5/10 and MRR@10, per source and pooled, also without the 20 most frequent
  impressions;
- label mAP@100 and P@10 with findings as query against full reports: modality and source over the pooled
  reports, finding labels within each source that has them;
- free-text query P@10 / nDCG@10 / MRR@10 from a BEIR folder (default: the project's label queries over the
  shared data's held-out Open-i and CT-RATE reports).
Writes <name>.json, <name>.md and <name>_match_at_k.png to eval/results/.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval import beir
from eval.label_metrics import label_retrieval
from eval.plots import match_curves
from eval.retrieval import Ranker, findings_to_impression, make_ranker
from eval.shared_data import CORPORA, RESULTS, SHARED_DATA
from retriever.report import Report
from retriever.splits import split_of

#: Findings -> impression subsets reported, with their table titles.
SUBSETS = {
    "all": "all reports",
    "without_top20_impressions": "without the 20 most frequent impressions",
    "abnormal": "abnormal reports (eval.retrieval.is_abnormal: a non-normal label, else a non-normal impression)",
}
#: The issue's bar for the product's default retriever: beat these on every source.
RIVALS = ("bm25", "mpnet")
#: Sources whose finding labels the default must also retrieve better (label P@10).
LABEL_TARGET_SOURCES = ("openi", "ctrate")
#: The fine-tuned model the training benchmark builds with the product's default recipe (eval.train_benchmark).
DEFAULT_MODEL = "radsearch-minilm-hardneg-2ep"
DEFAULT_RANKERS = ",".join(
    [
        "bm25",
        "minilm",
        "mpnet",
        "radsearch-minilm",
        DEFAULT_MODEL,
        f"hybrid:{DEFAULT_MODEL}",
        f"hybrid-weighted:{DEFAULT_MODEL}",
    ]
)
LABEL_QUERIES = Path(__file__).resolve().parent / "datasets" / "shared_label_queries"


def evaluate(reports: list[Report], ranker: Ranker, queries: beir.BeirSet | None) -> dict[str, Any]:
    """All metrics for one ranker."""
    by_source: dict[str, list[Report]] = {}
    for r in reports:
        by_source.setdefault(r.source or "reports", []).append(r)
    f2i = {s: findings_to_impression(rs, ranker) for s, rs in sorted(by_source.items())}
    if len(by_source) > 1:
        f2i["overall"] = findings_to_impression(reports, ranker)
    labels: dict[str, Any] = {"pooled": label_retrieval(reports, ranker, ("modality", "source"))}
    for source, subset in sorted(by_source.items()):
        found = label_retrieval(subset, ranker, ("finding_label",))
        if found:
            labels[source] = found
    result = {"findings_to_impression": f2i, "labels": labels}
    if queries is not None:
        result["free_text"] = beir.evaluate(queries, ranker)
    return result


def render(results: dict[str, Any]) -> str:
    """Markdown tables: one per metric family, one row per ranker."""
    rankers = results["rankers"]
    lines = [
        f"# Retrieval benchmark: {results['name']}",
        "",
        f"Written {results['created']} by `{results['command']}`. Reports: {json.dumps(results['reports'])} "
        f"({results['split']} split of `retriever.splits`; encoders were fine-tuned on the train split only).",
        "",
        "## Findings -> impression (query = findings, corpus = the unique impressions of the set)",
    ]
    keys = list(next(iter(rankers.values()))["findings_to_impression"])
    for subset, label in SUBSETS.items():
        lines += [
            "",
            f"### {label}",
            "| ranker | set | n | match@1 | match@5 | match@10 | MRR@10 |",
            "|---|---|---|---|---|---|---|",
        ]
        for key in keys:
            for name, r in rankers.items():
                s = r["findings_to_impression"][key][subset]
                lines.append(
                    f"| {name} | {key} | {s['n']} | {s['match@1']:.3f} | {s['match@5']:.3f} | "
                    f"{s['match@10']:.3f} | {s['mrr@10']:.3f} |"
                )
    lines += [
        "",
        "## Labels (query = findings, corpus = the other reports' full text; relevant = shares the label)",
        "| ranker | set | label | queries | mAP@100 | P@10 |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in rankers.items():
        for subset, kinds in r["labels"].items():
            for kind, s in kinds.items():
                lines.append(f"| {name} | {subset} | {kind} | {s['queries']} | {s['map@100']:.3f} | {s['p@10']:.3f} |")
    if any("free_text" in r for r in rankers.values()):
        lines += [
            "",
            f"## Free-text queries ({results.get('queries_folder', '')})",
            "| ranker | queries | P@10 | nDCG@10 | MRR@10 |",
            "|---|---|---|---|---|",
        ]
        for name, r in rankers.items():
            s = r.get("free_text")
            if s:
                lines.append(f"| {name} | {s['queries']} | {s['p@10']:.3f} | {s['ndcg@10']:.3f} | {s['mrr@10']:.3f} |")
    if results.get("targets"):
        lines += _render_targets(results["targets"])
    if results.get("missing"):
        lines += ["", "Not evaluated (model not available): " + ", ".join(results["missing"])]
    lines += ["", f"![match@k]({results['plot']})", ""]
    return "\n".join(lines)


def product_default() -> str:
    """The ranker the product uses by default: its default search method over the default-recipe model."""
    from retriever.methods import DEFAULT_METHOD

    return DEFAULT_MODEL if DEFAULT_METHOD == "dense" else f"{DEFAULT_METHOD}:{DEFAULT_MODEL}"


def check_targets(rankers: dict[str, Any], default: str) -> dict[str, Any]:
    """Every comparison the issue asks of the default retriever: findings -> impression match@5 (all and abnormal)
    per source and pooled, and finding-label P@10 on Open-i and CT-RATE, each against BM25 and mpnet (strictly
    better to pass)."""
    rows = []
    mine = rankers[default]
    for rival in (r for r in RIVALS if r in rankers):
        theirs = rankers[rival]
        for source, scores in mine["findings_to_impression"].items():
            for subset in ("all", "abnormal"):
                a = scores[subset]["match@5"]
                b = theirs["findings_to_impression"][source][subset]["match@5"]
                rows.append(
                    {
                        "metric": f"match@5 ({subset})",
                        "set": source,
                        "rival": rival,
                        "default": a,
                        "rival_score": b,
                        "n": scores[subset]["n"],
                        "pass": a > b,
                    }
                )
        for source in LABEL_TARGET_SOURCES:
            label = mine["labels"].get(source, {}).get("finding_label")
            other = theirs["labels"].get(source, {}).get("finding_label")
            if label and other:
                rows.append(
                    {
                        "metric": "label P@10",
                        "set": source,
                        "rival": rival,
                        "default": label["p@10"],
                        "rival_score": other["p@10"],
                        "n": label["queries"],
                        "pass": label["p@10"] > other["p@10"],
                    }
                )
    return {"default": default, "rows": rows, "all_pass": bool(rows) and all(r["pass"] for r in rows)}


def _render_targets(targets: dict[str, Any]) -> list[str]:
    verdict = "every target met" if targets["all_pass"] else "NOT every target met (see the rows marked no)"
    lines = [
        "",
        f"## Targets for the default retriever `{targets['default']}`: {verdict}",
        "| metric | set | n | default | rival | rival's score | beats it |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['metric']} | {r['set']} | {r['n']} | {r['default']:.3f} | {r['rival']} | {r['rival_score']:.3f} "
        f"| {'yes' if r['pass'] else '**no**'} |"
        for r in targets["rows"]
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", default=[], help="report corpus (repeatable; default shared)")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--split", default="test", choices=("train", "dev", "test", "all"))
    parser.add_argument("--rankers", default=DEFAULT_RANKERS, help="comma-separated: bm25 and encoder references")
    parser.add_argument("--beir", type=Path, default=None, help="BEIR folder (default: shared label queries)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name", default="retrieval")
    parser.add_argument("--default", default=None, help="ranker checked against the targets (default: the product's)")
    args = parser.parse_args(argv)
    from models.resolve import ModelNotAvailable
    from retriever.ingest import ingest

    shared = not args.corpus
    if shared and not args.data.is_dir():
        print(f"skipped: shared data folder {args.data} is absent and no --corpus given")
        return 0
    ingested = ingest([str(args.data / c) for c in CORPORA] if shared else args.corpus)
    reports = [r for r in ingested.reports if args.split == "all" or split_of(r.id) == args.split]
    queries = None
    folder = args.beir or (LABEL_QUERIES if shared else None)
    if folder is not None:
        corpus = None
        if not (folder / "corpus.jsonl").is_file():  # ids refer to the reports being evaluated
            ids_file = folder / "corpus_ids.txt"
            wanted = set(ids_file.read_text().split()) if ids_file.is_file() else None
            corpus = {r.id: r.text_of("report") for r in ingested.reports if wanted is None or r.id in wanted}
        queries = beir.load(folder, corpus)
    results: dict[str, Any] = {
        "name": args.name,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(["python -m eval.retrieval_benchmark", *(argv if argv is not None else sys.argv[1:])]),
        "split": args.split,
        "reports": {s: sum(r.source == s for r in reports) for s in sorted({r.source for r in reports})},
        "queries_folder": str(folder.relative_to(Path.cwd()))
        if folder and folder.is_relative_to(Path.cwd())
        else str(folder or ""),
        "rankers": {},
        "missing": [],
    }
    for ref in [r.strip() for r in args.rankers.split(",") if r.strip()]:
        try:
            ranker = make_ranker(ref)
        except ModelNotAvailable as exc:
            print(f"skipping {ref}: {exc}")
            results["missing"].append(ref)
            continue
        print(f"evaluating {ref}", flush=True)
        results["rankers"][ref] = evaluate(reports, ranker, queries)
    if not results["rankers"]:
        print("no ranker could be evaluated")
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    key = "overall" if len(results["reports"]) > 1 else next(iter(results["reports"]))
    curves = {
        n: {
            int(m.split("@")[1]): v
            for m, v in r["findings_to_impression"][key]["all"].items()
            if m.startswith("match@")
        }
        for n, r in results["rankers"].items()
    }
    default = args.default or product_default()
    if default in results["rankers"]:
        results["targets"] = check_targets(results["rankers"], default)
    results["plot"] = match_curves(
        curves, f"findings -> impression ({key})", args.out / f"{args.name}_match_at_k.png"
    ).name
    (args.out / f"{args.name}.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (args.out / f"{args.name}.md").write_text(render(results), encoding="utf-8")
    print(f"wrote {args.out / args.name}.json, .md and _match_at_k.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
