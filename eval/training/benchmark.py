"""Training benchmark: does fine-tuning MiniLM on findings -> impression pairs beat the untuned encoders?

    python -m eval.training.benchmark                  # all variants; resumes: finished steps are kept
    python -m eval.training.benchmark --variants plain # only the paper's recipe

Trains MiniLM on the TRAIN split (retriever.reports.splits) of the shared development data (Open-i, CT-RATE, MTSamples,
MedPix), then scores BM25, untuned MiniLM, untuned mpnet and every fine-tuned variant on the held-out TEST split,
per source and pooled: findings -> impression match@1/5/10 and MRR@10 (eval.retrieval.findings_impression). Writes
eval/results/training.json (after every finished step, so an interrupted run resumes) and training.md. Skips
cleanly when ../shared/data is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval.common.provenance import stamp
from eval.common.shared_data import CORPORA, RESULTS, SHARED_DATA, add_out_option
from eval.training.results import (
    DevMetrics,
    SetScores,
    TrainedVariant,
    TrainingData,
    TrainingMachine,
    TrainingResults,
)

BASELINES = ("bm25", "minilm", "mpnet")
#: The benchmarks' default recipe until 2026-11-27, which `labelneg-2ep-256` extends (the default encoder,
#: eval.retrieval.benchmark.DEFAULT_MODEL, is now the weight average of that variant's runs with seeds 42 and 43).
_NEGMARGIN_256: dict[str, Any] = {
    "bm25_negatives": True,
    "negation_negatives": True,
    "epochs": 2,
    "negation_margin": 0.5,
    "max_seq_length": 256,
}
#: Variant name -> TrainConfig options; "plain" is the paper's recipe, the others are the options beyond it.
VARIANTS: dict[str, dict[str, Any]] = {
    "plain": {},
    "mask": {"mask_near_duplicates": True},
    "symmetric": {"symmetric": True},
    "cached": {"cached": True, "batch_size": 128, "mini_batch_size": 32},
    "bm25neg": {"bm25_negatives": True},
    "negation": {"negation_negatives": True},
    "hardneg-2ep": {"bm25_negatives": True, "negation_negatives": True, "epochs": 2},
    "negmargin-2ep": {"bm25_negatives": True, "negation_negatives": True, "epochs": 2, "negation_margin": 0.5},
    # The same recipe trained at the length search reads (256 tokens): at 128, 99% of CT-RATE's and 64% of
    # MTSamples' train findings were cut (eval/training/encoder_choice.py picked it on dev,
    # eval/results/encoder_choice_dev.md).
    "negmargin-2ep-256": _NEGMARGIN_256,
    # The 256-token recipe plus real-sentence negation triplets keyed by the finding a resident types (issue 17's
    # real-pair Δcos missed 0.45 by 0.012 with the 256-token default).
    "labelneg-2ep-256": {**_NEGMARGIN_256, "label_negatives": True},
    "detail-2ep": {
        "bm25_negatives": True,
        "negation_negatives": True,
        "epochs": 2,
        "negation_margin": 0.5,
        "detail_negatives": True,
    },
}


def model_name(variant: str) -> str:
    """Name of a trained variant in the models directory (`plain` is the one to use: radsearch-minilm)."""
    return "radsearch-minilm" if variant == "plain" else f"radsearch-minilm-{variant}"


def evaluate(ranker: Any, test: dict[str, list[Any]]) -> dict[str, SetScores]:
    """Findings -> impression metrics per source (each against its own impressions) and pooled."""
    from eval.retrieval.findings_impression import findings_to_impression

    pooled = [r for reports in test.values() for r in reports]
    sets = {**test, "overall": pooled}
    return {source: SetScores.from_json(findings_to_impression(reports, ranker)) for source, reports in sets.items()}


def machine() -> TrainingMachine:
    """What the numbers were measured on (CPU model, cores, load: the machine is shared)."""
    import torch

    cpu = platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        cpu = next(
            (
                line.split(":", 1)[1].strip()
                for line in cpuinfo.read_text().splitlines()
                if line.startswith("model name")
            ),
            cpu,
        )
    return TrainingMachine(
        cpu=cpu,
        cores=os.cpu_count(),
        torch_threads=torch.get_num_threads(),
        torch=torch.__version__,
        python=platform.python_version(),
        platform=platform.platform(),
        load_average_at_end=[round(x, 2) for x in os.getloadavg()],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    add_out_option(parser, RESULTS)
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated: " + ", ".join(VARIANTS))
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-seq-length", type=int, default=128)
    parser.add_argument("--max-steps", type=int, default=-1, help="stop each training early (smoke runs)")
    parser.add_argument("--fresh", action="store_true", help="ignore finished steps in the results file")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"skipped: shared data folder {args.data} is absent")
        return 0

    from eval.retrieval.findings_impression import make_ranker
    from retriever.reports.ingest import ingest
    from retriever.reports.splits import DEFAULT_SPLIT, split_reports
    from retriever.training.train import TrainConfig, train_encoder

    args.out.mkdir(parents=True, exist_ok=True)
    result_file = args.out / "training.json"
    previous = None if args.fresh or not result_file.is_file() else TrainingResults.read(result_file)
    corpora = [str(args.data / c) for c in CORPORA]
    ingested = ingest(corpora)
    groups = split_reports(ingested.reports)
    test: dict[str, list[Any]] = {}
    for report in groups["test"]:
        test.setdefault(report.source, []).append(report)
    results = TrainingResults(
        task="findings -> impression retrieval on the held-out test split; corpus = the split's unique "
        "impressions (per source: that source's; overall: all sources')",
        data=TrainingData(
            corpora=[str(Path(c).relative_to(args.data.parent.parent)) for c in corpora],
            reports_in=ingested.records_in,
            usable=len(ingested.reports),
            rejected=dict(ingested.reasons()),
            split={k: len(v) for k, v in groups.items()},
            test_by_source={s: len(v) for s, v in sorted(test.items())},
            split_spec=DEFAULT_SPLIT.__dict__,
        ),
        command="python -m eval.training.benchmark " + " ".join(argv if argv is not None else sys.argv[1:]),
        baselines=previous.baselines if previous else {},
        variants=previous.variants if previous else {},
    )
    baselines, variants = results.baselines, results.variants

    def save() -> None:
        # Variants trained meanwhile by another run of this script (in parallel, on other variants) are kept.
        if result_file.is_file():
            on_disk = TrainingResults.read(result_file).variants
            variants.update({name: v for name, v in on_disk.items() if name not in variants})
        results.machine = machine()
        results.updated = datetime.now(UTC).isoformat(timespec="seconds")
        result_file.write_text(json.dumps(stamp(results.to_json()), indent=2) + "\n", encoding="utf-8")
        (args.out / "training.md").write_text(render(results), encoding="utf-8")

    for ref in BASELINES:
        if ref not in baselines:
            print(f"evaluating untuned {ref}", flush=True)
            baselines[ref] = evaluate(make_ranker(ref), test)
            save()
    for variant in [v.strip() for v in args.variants.split(",") if v.strip()]:
        options = {"epochs": args.epochs, "max_seq_length": args.max_seq_length, "max_steps": args.max_steps}
        config = TrainConfig(**(options | VARIANTS[variant]))
        if variant in variants and variants[variant].hyperparameters == config.__dict__:
            continue
        print(f"training variant {variant}: {config.loss_name}", flush=True)
        started = time.perf_counter()
        trained = train_encoder(
            ingested.reports, model_name(variant), config, skipped=ingested.reasons(), overwrite=True
        )
        card = trained.card
        variants[variant] = TrainedVariant(
            model=model_name(variant),
            loss=config.loss_name,
            hyperparameters=config.__dict__,
            train_pairs=card["data"]["pairs"]["train"],
            seconds_per_epoch=card["train_seconds_per_epoch"],
            wall_seconds=round(time.perf_counter() - started, 1),
            dev=DevMetrics.from_json(card["dev_metrics"]),
            masked_negatives=card["masked_negatives"],
            test=evaluate(make_ranker(model_name(variant)), test),
        )
        save()
    save()
    print(f"wrote {result_file} and {args.out / 'training.md'}")
    return 0


def _row(name: str, s: dict[str, float]) -> str:
    return f"| {name} | {s['n']} | {s['match@1']:.3f} | {s['match@5']:.3f} | {s['match@10']:.3f} | {s['mrr@10']:.3f} |"


def render(results: TrainingResults) -> str:
    """Markdown report: pooled and per-source test tables, dev comparison of the options, cost, machine."""
    systems = {f"untuned {k}": v for k, v in results.baselines.items()}
    systems |= {f"fine-tuned MiniLM ({k}: {v.loss})": v.test for k, v in results.variants.items()}
    header = ["| system | n | match@1 | match@5 | match@10 | MRR@10 |", "|---|---|---|---|---|---|"]
    data = results.data
    lines = [
        "# Findings -> impression retrieval: fine-tuned vs untuned encoders",
        "",
        f"Written by `{results.command.strip()}` on {results.updated or ''}. Held-out TEST split of "
        "the shared development data (reports never seen in training, split by a salted hash of the report id). "
        "Query = findings, corpus = the unique impressions of the test reports, hit = the report's own "
        "impression text in the top k.",
        "",
        f"Data: {json.dumps(data.split)} reports per split; test by source "
        f"{json.dumps(data.test_by_source)}; rejected at ingestion "
        f"{json.dumps(data.rejected)}.",
        "",
        "## Overall (all sources pooled)",
        *header,
        *(_row(name, scores["overall"].all) for name, scores in systems.items()),
        "",
        "## Overall, without the 20 most frequent impressions (boilerplate normals cannot carry the score)",
        *header,
        *(_row(name, scores["overall"].without_top20_impressions) for name, scores in systems.items()),
    ]
    for source in data.test_by_source:
        lines += [
            "",
            f"## {source} (corpus = this source's test impressions)",
            *header,
            *(_row(name, scores[source].all) for name, scores in systems.items() if source in scores),
        ]
    lines += [
        "",
        "## Training options on the dev split (each against plain MNRL; same data, seed, epochs)",
        "| variant | loss | dev match@5 before | dev match@5 after | dev MRR@10 after | s/epoch | "
        "in-batch negatives masked |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, v in results.variants.items():
        before, after = v.dev.before, v.dev.after
        masked = "" if v.masked_negatives is None else f"{100 * v.masked_negatives:.1f} %"
        lines.append(
            f"| {name} | {v.loss} | {before.get('match@5', '')} | {after.get('match@5', '')} | "
            f"{after.get('mrr@10', '')} | {', '.join(map(str, v.seconds_per_epoch))} | {masked} |"
        )
    m = results.machine
    lines += [
        "",
        "## Cost and machine",
        _machine(m),
        "",
        "Reproduce: `python -m eval.training.benchmark` (add `--fresh` to retrain everything). Trained models "
        "are written to the models directory as `radsearch-minilm` (plain) and `radsearch-minilm-<option>`.",
    ]
    return "\n".join(lines) + "\n"


def _machine(m: TrainingMachine | None) -> str:
    """What the numbers were measured on, "?" for a run saved before its machine was."""
    described = (
        f"{m.cpu}, {m.cores} cores ({m.torch_threads} torch threads), torch {m.torch}, Python {m.python}"
        if m
        else "?, ? cores (? torch threads), torch ?, Python ?"
    )
    return (
        f"{described}; CPU only. The machine was shared with other jobs (load average at the end "
        f"{m.load_average_at_end if m else None}), so times are upper bounds."
    )


if __name__ == "__main__":
    raise SystemExit(main())
