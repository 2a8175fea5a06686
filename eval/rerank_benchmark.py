"""Re-ranker benchmark (issue 20): does a cross-encoder second stage make the product's search more robust?

    python -m eval.rerank_benchmark --train-only         # train the re-ranker on the shared train split (resumes)
    python -m eval.rerank_benchmark --split dev          # compare with and without it on the dev split

Trains `RERANKER` (retriever/rerank_train.py: findings -> impression pairs of the shared data's TRAIN split, negatives
of four kinds) from the product's default encoder if it is not in the models directory yet; an interrupted training
resumes from its checkpoints. Then scores the product default ranker with and without the re-ranker on one split:
findings -> impression match@k per source and pooled (eval.retrieval, as eval/results/retrieval.md), and the
robustness parts (eval/robustness: ICD-10-CM rephrasings, query variants, error discrimination) with query expansion
on, as the product searches. Candidates are compared on dev; the test split is for the one chosen, once. Writes
eval/results/rerank_<split>.{json,md}. Skips cleanly when the shared data is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval.resumable import run_resumable
from eval.retrieval import RERANK_SUFFIX
from eval.retrieval_benchmark import DEFAULT_MODEL, product_default
from eval.robustness.corrupt import ERROR_TYPES
from eval.robustness.variants import VARIANTS
from eval.shared_data import RESULTS, SHARED_DATA, add_out_option, eval_home, index_backend, load_shared, write_results
from eval.stats import format_p, mcnemar
from retriever.report import Report
from retriever.rerank import CARD_FILE

RERANKER = "radsearch-rerank-minilm"
#: Issue 20's bound on the abbreviated-query match@5 drop.
ABBREVIATED_DROP = 0.02


def ensure_trained(data: Path, name: str = RERANKER, base: str = DEFAULT_MODEL, max_steps: int = -1) -> Path:
    """The re-ranker's folder, trained first on the shared train split when it is missing (resuming if a run was
    interrupted)."""
    from models.paths import models_dir
    from retriever.rerank_config import RerankConfig
    from retriever.rerank_train import train_reranker
    from retriever.train_run import CHECKPOINTS

    target = models_dir() / name
    if (target / "config.json").is_file():
        return target
    resume = any((models_dir() / CHECKPOINTS / name).glob("checkpoint-*"))
    print(f"training re-ranker {name} from {base}" + (" (resuming)" if resume else ""), flush=True)
    result = train_reranker(
        load_shared(data).reports, name, RerankConfig(base=base, max_steps=max_steps), resume=resume
    )
    print(f"dev pairwise accuracy: {result.card['dev_pairwise_accuracy']}", flush=True)
    return result.path


def retrieval(ref: str, reports: list[Report]) -> dict[str, Any]:
    """Findings -> impression metrics per source (each against its own impressions) and pooled, with per-query
    ranks of the pooled set (for the paired test)."""
    from eval.retrieval import findings_to_impression, make_ranker

    ranker = make_ranker(ref, backend=index_backend())
    by_source: dict[str, list[Report]] = {}
    for report in reports:
        by_source.setdefault(report.source, []).append(report)
    scores = {source: findings_to_impression(group, ranker) for source, group in sorted(by_source.items())}
    return scores | {"pooled": findings_to_impression(reports, ranker, per_query=True)}


def compare(data: Path, split: str, card: dict[str, Any], reranker: str = RERANKER,
            progress: Path | None = None) -> dict[str, Any]:
    """Every measure for the product default with and without the re-ranker (`without`, `with`). About 40 minutes
    of cross-encoder scoring on 2 cores, so each finished measure is kept in `progress` (eval/resumable.py), reused
    only for the same split, rankers, re-ranker card and default encoder weights."""
    from eval.robustness import errors, icd, queries
    from eval.robustness.search import RankerSpec
    from models.resolve import resolve_encoder
    from retriever.encoder import weights_fingerprint

    base = f"{product_default()}+expand"
    refs = {"without": base, "with": f"{base}{RERANK_SUFFIX}{reranker}"}
    reports = queries.split_reports(data, split)
    corpus = icd.descriptions()
    icd_queries = icd.query_set(corpus, data, split)
    variants = queries.query_variants(reports, data)
    items = errors.build_items(reports)

    def measures(ref: str) -> dict[str, Callable[[], Any]]:
        spec = RankerSpec.parse(ref)
        return {
            "retrieval": lambda: retrieval(product_default() + ref.removeprefix(base), reports),
            "errors": lambda: errors.evaluate(spec, items),
            "icd": lambda: icd.evaluate(spec, icd_queries, corpus),
            "queries": lambda: queries.evaluate(spec, reports, variants),
        }

    encoder = weights_fingerprint(str(resolve_encoder(DEFAULT_MODEL)[0]))
    key = {"split": split, "refs": refs, "card": card, "encoder": encoder}
    done = run_resumable({name: measures(ref) for name, ref in refs.items()}, key, progress,
                         log=lambda m: print(f"{split}: {m}", flush=True))
    return {"refs": refs, "reports": len(reports), "items": len(items)} | done


def hit5(ranks: list[int | None]) -> list[bool]:
    return [rank is not None and rank <= 5 for rank in ranks]


def decide(results: dict[str, Any]) -> dict[str, Any]:
    """The rule (dev split): the re-ranker goes into the product default only if error discrimination rises while
    pooled findings -> impression match@5 and ICD-10-CM exact@1 do not fall and the abbreviated-query drop stays
    within 0.02."""
    without, with_ = results["without"], results["with"]
    checks = {
        "error discrimination rises": with_["errors"]["all"]["value"] > without["errors"]["all"]["value"],
        "pooled match@5 not lower": with_["retrieval"]["pooled"]["all"]["match@5"]
        >= without["retrieval"]["pooled"]["all"]["match@5"],
        "ICD exact@1 not lower": with_["icd"]["exact@1"]["value"] >= without["icd"]["exact@1"]["value"],
        "abbreviated drop within 0.02": with_["queries"]["abbreviated"]["drop@5"] <= ABBREVIATED_DROP,
    }
    return {"checks": checks, "adopt": all(checks.values())}


def render(results: dict[str, Any]) -> str:
    without, with_ = results["without"], results["with"]
    p = mcnemar(hit5(without["retrieval"]["pooled"]["per_query"]["rank"]),
                hit5(with_["retrieval"]["pooled"]["per_query"]["rank"])).p
    lines = [
        f"# Cross-encoder re-ranker, {results['split']} split (issue 20)",
        "",
        f"Run {results['created']} (`{results['command']}`, load average {results['load']}). Product default "
        f"`{results['refs']['without']}` without and with `{results['reranker']}` re-scoring its top 20 hits "
        "(retriever/rerank.py; trained on the train split by retriever/rerank_train.py, card below). "
        f"{results['reports']} {results['split']}-split reports.",
        "",
        "## Findings -> impression (match@5; each source against its own impressions)",
        "",
        "| source | without | with |",
        "|---|---:|---:|",
    ]
    for source in without["retrieval"]:
        a, b = without["retrieval"][source]["all"], with_["retrieval"][source]["all"]
        lines.append(f"| {source} | {a['match@5']:.3f} | {b['match@5']:.3f} |")
    lines += ["", f"Pooled hit@5, McNemar p = {format_p(p)}.", "",
              "## Robustness (eval/robustness, as in robustness.md)", "",
              "| measure | without | with |", "|---|---:|---:|"]
    rows = [("ICD-10-CM exact@1", lambda r: r["icd"]["exact@1"]["value"]),
            ("ICD-10-CM category@1", lambda r: r["icd"]["category@1"]["value"]),
            ("error discrimination, all", lambda r: r["errors"]["all"]["value"])]
    rows += [(f"error discrimination, {t}", lambda r, t=t: r["errors"][t]["value"]) for t in ERROR_TYPES]
    rows += [(f"query match@5, {v}", lambda r, v=v: r["queries"][v]["match@5"]) for v in VARIANTS]
    rows += [("abbreviated drop", lambda r: r["queries"]["abbreviated"]["drop@5"])]
    for label, value in rows:
        lines.append(f"| {label} | {value(without):.3f} | {value(with_):.3f} |")
    if "decision" in results:
        lines += ["", "## Rule (dev split only)", "", decide.__doc__.split("The rule (dev split): ")[1].strip(), ""]
        lines += [f"- {name}: {'yes' if ok else 'no'}" for name, ok in results["decision"]["checks"].items()]
        lines += ["", f"Decision: {'adopt' if results['decision']['adopt'] else 'keep search without it'}."]
    card = results["card"]
    lines += ["", "## The re-ranker", "", f"Base `{card['base_model']['ref']}`, {card['loss']}, "
              f"{card['data']['pairs']['train']} training pairs, examples {card['data']['examples']['train']}, "
              f"seconds per epoch {card['train_seconds_per_epoch']}; dev pairwise accuracy before "
              f"{card['dev_pairwise_accuracy']['before']}, after {card['dev_pairwise_accuracy']['after']}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED_DATA, help="shared data folder")
    parser.add_argument("--train-only", action="store_true", help="train the re-ranker if missing, compare nothing")
    parser.add_argument("--max-steps", type=int, default=-1, help="stop training early (smoke runs)")
    parser.add_argument("--split", choices=("dev", "test"), default="dev", help="dev to decide on, test to report once")
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    if not args.data.is_dir():
        print(f"skipped: shared data folder {args.data} is absent")
        return 0
    folder = ensure_trained(args.data, max_steps=args.max_steps)
    if args.train_only:
        return 0
    results: dict[str, Any] = {
        "name": f"rerank_{args.split}",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(["python -m eval.rerank_benchmark", *(argv if argv is not None else sys.argv[1:])]),
        "split": args.split,
        "reranker": RERANKER,
        "card": json.loads((folder / CARD_FILE).read_text(encoding="utf-8")),
    }
    results |= compare(args.data, args.split, results["card"], progress=eval_home() / f"{results['name']}.partial.json")
    results["load"] = "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    if args.split == "dev":
        results["decision"] = decide(results)
    write_results(args.out / results["name"], results, render)
    print(f"wrote {args.out / results['name']}.json and .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
