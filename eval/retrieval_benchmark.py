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

import numpy as np

from eval import beir
from eval.label_metrics import label_retrieval
from eval.plots import match_curves
from eval.retrieval import BM25Ranker, DenseRanker, Ranker, findings_to_impression
from eval.shared_data import CORPORA, RESULTS, SHARED_DATA
from retriever.report import Report
from retriever.splits import split_of

DEFAULT_RANKERS = "bm25,minilm,mpnet,radsearch-minilm"
LABEL_QUERIES = Path(__file__).resolve().parent / "datasets" / "shared_label_queries"


class MemoEncoder:
    """Wraps an encoder so each text is embedded once per run (the same findings serve several metrics)."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self.memo: dict[str, np.ndarray] = {}

    def encode(self, texts: list[str], batch_size: int = 64, **_: Any) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if new:
            for text, vector in zip(new, self.encoder.encode(new, batch_size=batch_size), strict=True):
                self.memo[text] = vector
        return np.stack([self.memo[t] for t in texts])


def make_ranker(ref: str) -> Ranker:
    """BM25 or a memoized dense ranker for an encoder reference."""
    if ref == "bm25":
        return BM25Ranker()
    from retriever.encoder import load_encoder

    return DenseRanker(name=ref, encoder=MemoEncoder(load_encoder(ref)))


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
    lines = [f"# Retrieval benchmark: {results['name']}", "",
             f"Written {results['created']} by `{results['command']}`. Reports: {json.dumps(results['reports'])} "
             f"({results['split']} split of `retriever.splits`; encoders were fine-tuned on the train split only).",
             "", "## Findings -> impression (query = findings, corpus = the unique impressions of the set)"]
    keys = list(next(iter(rankers.values()))["findings_to_impression"])
    for subset in ("all", "without_top20_impressions"):
        label = "all reports" if subset == "all" else "without the 20 most frequent impressions"
        lines += ["", f"### {label}", "| ranker | set | n | match@1 | match@5 | match@10 | MRR@10 |",
                  "|---|---|---|---|---|---|---|"]
        for key in keys:
            for name, r in rankers.items():
                s = r["findings_to_impression"][key][subset]
                lines.append(f"| {name} | {key} | {s['n']} | {s['match@1']:.3f} | {s['match@5']:.3f} | "
                             f"{s['match@10']:.3f} | {s['mrr@10']:.3f} |")
    lines += ["", "## Labels (query = findings, corpus = the other reports' full text; relevant = shares the label)",
              "| ranker | set | label | queries | mAP@100 | P@10 |", "|---|---|---|---|---|---|"]
    for name, r in rankers.items():
        for subset, kinds in r["labels"].items():
            for kind, s in kinds.items():
                lines.append(f"| {name} | {subset} | {kind} | {s['queries']} | {s['map@100']:.3f} | {s['p@10']:.3f} |")
    if any("free_text" in r for r in rankers.values()):
        lines += ["", f"## Free-text queries ({results.get('queries_folder', '')})",
                  "| ranker | queries | P@10 | nDCG@10 | MRR@10 |", "|---|---|---|---|---|"]
        for name, r in rankers.items():
            s = r.get("free_text")
            if s:
                lines.append(f"| {name} | {s['queries']} | {s['p@10']:.3f} | {s['ndcg@10']:.3f} | {s['mrr@10']:.3f} |")
    if results.get("missing"):
        lines += ["", "Not evaluated (model not available): " + ", ".join(results["missing"])]
    lines += ["", f"![match@k]({results['plot']})", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", default=[], help="report corpus (repeatable; default shared)")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--split", default="test", choices=("train", "dev", "test", "all"))
    parser.add_argument("--rankers", default=DEFAULT_RANKERS, help="comma-separated: bm25 and encoder references")
    parser.add_argument("--beir", type=Path, default=None, help="BEIR folder (default: shared label queries)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name", default="retrieval")
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
        "queries_folder": str(folder.relative_to(Path.cwd())) if folder and folder.is_relative_to(Path.cwd()) else
        str(folder or ""),
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
    curves = {n: {int(m.split("@")[1]): v for m, v in r["findings_to_impression"][key]["all"].items()
                  if m.startswith("match@")} for n, r in results["rankers"].items()}
    results["plot"] = match_curves(curves, f"findings -> impression ({key})",
                                   args.out / f"{args.name}_match_at_k.png").name
    (args.out / f"{args.name}.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (args.out / f"{args.name}.md").write_text(render(results), encoding="utf-8")
    print(f"wrote {args.out / args.name}.json, .md and _match_at_k.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
