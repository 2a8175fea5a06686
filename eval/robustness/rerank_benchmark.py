"""Re-ranker benchmark (issue 20): does a cross-encoder second stage make the product's search more robust?

    python -m eval.robustness.rerank_benchmark --train-only   # train the re-ranker on the shared train split (resumes)
    python -m eval.robustness.rerank_benchmark --split dev --weights 1,0.5,0.3,0.2,0.1   # with and without it, on dev
    python -m eval.robustness.rerank_benchmark --split test --weights 0.3                # the weight dev chose, once
    python -m eval.robustness.rerank_benchmark --split dev --weights 0.3,0.2 --gates 15 --name rerank_dev_gated
                                        # only queries of 15+ words re-scored (the train findings' 5th percentile)
    python -m eval.robustness.rerank_benchmark --reranker support --split dev --weights 0.3,0.5 --gates 15
                                        # the model-free support check (retriever/search/support.py) instead: no
                                        # training
    python -m eval.robustness.rerank_benchmark --reranker support-words --split dev --weights 0.3,0.5 --gates 15
                                        # it on single terms only, to measure what its term pairs add

Trains `RERANKER` (retriever/training/reranker.py: findings -> impression pairs of the shared data's TRAIN split,
negatives of four kinds) from the product's default encoder if it is not in the models directory yet; an interrupted
training resumes from its checkpoints. Then scores the product default ranker without the re-ranker and with it at each
weight (its share of the score, the first stage's the rest: retriever/search/rerank.py) on one split:
findings -> impression match@k per source and pooled (eval.retrieval.findings_impression, as eval/results/retrieval.md),
and the robustness parts (eval/robustness: ICD-10-CM rephrasings, query variants, error discrimination) with query
expansion on, as the product searches. Each (query, candidate) pair is scored once whatever the number of weights
(eval.retrieval.findings_impression.MemoReranker). Weights are compared on dev; the test split is for the one chosen,
once. Writes eval/results/rerank_<split>.{json,md} (`support_<split>` for the support check). Skips cleanly when the
shared data is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval.common.resumable import run_resumable
from eval.common.shared_data import (
    RESULTS,
    SHARED_DATA,
    add_out_option,
    eval_home,
    index_backend,
    load_shared,
    split_reports,
    write_results,
)
from eval.common.stats import format_p, mcnemar
from eval.retrieval.benchmark import DEFAULT_MODEL, product_default
from eval.retrieval.findings_impression import GATE_MARK, RERANK_SUFFIX, SUPPORT_WORDS, split_gate
from eval.robustness.corrupt import ERROR_TYPES
from eval.robustness.results import RerankDecision, RerankResults, RerankSide
from eval.robustness.variants import VARIANTS
from models.preset import adopt_search
from retriever.reports.record import Report
from retriever.search import support as support_stage
from retriever.search.rerank import CARD_FILE, RERANK_WEIGHT, WEIGHT_MARK, split_weight

RERANKER = "radsearch-rerank-minilm"
SUPPORT = support_stage.NAME
#: The model-free stages (no training): the support check, and it on single terms only.
SUPPORT_STAGES = (SUPPORT, SUPPORT_WORDS)
#: Issue 20's bound on the abbreviated-query match@5 drop.
ABBREVIATED_DROP = 0.02


def ensure_trained(data: Path, name: str = RERANKER, base: str = DEFAULT_MODEL, max_steps: int = -1) -> Path:
    """The re-ranker's folder, trained first on the shared train split when it is missing (resuming if a run was
    interrupted)."""
    from models.paths import models_dir
    from retriever.training.reranker import train_reranker
    from retriever.training.reranker_config import RerankConfig
    from retriever.training.run import CHECKPOINTS

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


def support_card() -> dict[str, str]:
    """What identifies the support check's results: the source of the code that scores (a changed rule must not
    resume a run; a changed docstring or default weight, which a run names in its references, need not rerun one)."""
    import hashlib
    import inspect

    source = inspect.getsource(support_stage.SupportCheck) + inspect.getsource(support_stage.adjacent_pairs)
    return {"stage": SUPPORT, "scorer_sha256": hashlib.sha256(source.encode()).hexdigest()}


def retrieval(ref: str, reports: list[Report]) -> dict[str, Any]:
    """Findings -> impression metrics per source (each against its own impressions) and pooled, with per-query
    ranks of the pooled set (for the paired test)."""
    from eval.retrieval.findings_impression import findings_to_impression, make_ranker

    ranker = make_ranker(ref, backend=index_backend())
    by_source: dict[str, list[Report]] = {}
    for report in reports:
        by_source.setdefault(report.source, []).append(report)
    scores = {source: findings_to_impression(group, ranker) for source, group in sorted(by_source.items())}
    return scores | {"pooled": findings_to_impression(reports, ranker, per_query=True)}


def query_words(data: Path) -> dict[str, int]:
    """Percentiles (1, 5, 10, 50) of the word counts of the train-split findings the re-ranker learned from: where
    a length gate (`--gates`) comes from, so it is read off the training data, not tuned to a split."""
    import numpy as np

    counts = [len(r.findings.split()) for r in split_reports(data, "train")]
    return {f"p{p}": int(np.percentile(counts, p)) for p in (1, 5, 10, 50)}


def side_label(weight: float, gate: int = 0) -> str:
    """The results key of the re-ranked side at `weight` (re-scoring queries of `gate` words or more)."""
    return f"weight {weight:g}" + (f", {gate}+ words" if gate else "")


def compare(
    data: Path,
    split: str,
    card: dict[str, Any],
    weights: Sequence[float],
    reranker: str = RERANKER,
    progress: Path | None = None,
    gates: Sequence[int] = (0,),
) -> dict[str, Any]:
    """Every measure for the product default without the re-ranker (`without`) and with it at each weight
    (`side_label`), with the references and the report and item counts: the fields of RerankResults they fill.
    About 40 minutes of cross-encoder scoring on 2 cores, so each finished measure is kept in
    `progress` (eval/common/resumable.py), reused only for the same split, rankers, re-ranker card, default encoder
    weights, negation rules and fusion weight."""
    from eval.robustness import errors, icd, queries
    from eval.robustness.search import RankerSpec
    from models.resolve import resolve_encoder
    from retriever.encoders.encoder import weights_fingerprint
    from retriever.negation.tokens import TOKENIZER_FINGERPRINT
    from retriever.search.fusion import DENSE_WEIGHT

    base = f"{product_default()}+expand"
    refs = {"without": base} | {
        side_label(w, g): f"{base}{RERANK_SUFFIX}{reranker}{WEIGHT_MARK}{w:g}{GATE_MARK}{g}"
        for w in weights
        for g in gates
    }
    reports = split_reports(data, split)
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
    key = {
        "split": split,
        "refs": refs,
        "card": card,
        "encoder": encoder,
        "lexical_rules": TOKENIZER_FINGERPRINT,
        "dense_weight": DENSE_WEIGHT,
    }
    done = run_resumable(
        {name: measures(ref) for name, ref in refs.items()},
        key,
        progress,
        log=lambda m: print(f"{split}: {m}", flush=True),
    )
    sides = {name: RerankSide.from_json(measured) for name, measured in done.items()}
    return {"refs": refs, "reports": len(reports), "items": len(items), "sides": sides}


def sides(results: RerankResults) -> list[str]:
    """The re-ranked sides of a run, in the order they were asked for."""
    return [name for name in results.refs if name != "without"]


def hit5(ranks: list[int | None]) -> list[bool]:
    return [rank is not None and rank <= 5 for rank in ranks]


def pooled_ranks(side: RerankSide) -> list[int | None]:
    """The gold rank of each pooled findings query (None: not in the top 10), for paired tests between sides."""
    per_query = side.retrieval["pooled"].per_query
    if per_query is None:
        raise ValueError("the pooled retrieval was measured without per-query ranks")
    return per_query.rank


def decide(results: RerankResults) -> RerankDecision:
    """The rule (dev split): the re-ranker goes into the product default only at a weight where error
    discrimination rises while pooled findings -> impression match@5 and ICD-10-CM exact@1 do not fall and the
    abbreviated-query drop stays within 0.02; of several such weights, the one with the highest error
    discrimination (the lowest weight on a tie)."""
    without = results.sides["without"]
    checks: dict[str, dict[str, bool]] = {}
    for name in sides(results):
        with_ = results.sides[name]
        checks[name] = {
            "error discrimination rises": with_.errors.all.value > without.errors.all.value,
            "pooled match@5 not lower": with_.retrieval["pooled"].all["match@5"]
            >= without.retrieval["pooled"].all["match@5"],
            "ICD exact@1 not lower": with_.icd.exact_at_1.value >= without.icd.exact_at_1.value,
            "abbreviated drop within 0.02": with_.queries.variants["abbreviated"].drop_at_5 <= ABBREVIATED_DROP,
        }
    passing = [name for name in checks if all(checks[name].values())]
    weight = {name: split_weight(split_gate(results.refs[name])[0])[1] or RERANK_WEIGHT for name in passing}
    chosen = max(passing, key=lambda n: (results.sides[n].errors.all.value, -weight[n]), default=None)
    return RerankDecision(checks=checks, adopt=chosen is not None, chosen=chosen)


def render(results: RerankResults) -> str:
    names = sides(results)
    every = [results.sides[n] for n in ["without", *names]]
    without = every[0]
    header = "| {} | without | " + " | ".join(names) + " |"
    rule = "|---|---:|" + "---:|" * len(names)
    pairs = "" if results.reranker == SUPPORT_WORDS else " and adjacent term pairs"
    what = (
        f"the support check (retriever/search/support.py: idf of the hit's terms{pairs} the query has minus of "
        "those it has not; no model)"
        if results.reranker in SUPPORT_STAGES
        else "retriever/search/rerank.py; trained on the train split by retriever/training/reranker.py, card below"
    )
    lines = [
        f"# {'Support check' if results.reranker in SUPPORT_STAGES else 'Cross-encoder re-ranker'}"
        f"{', single terms only' if results.reranker == SUPPORT_WORDS else ''}, "
        f"{results.split} split (issue 20)",
        "",
        f"Run {results.created} (`{results.command}`, load average {results.load}). Product default "
        f"`{results.refs['without']}` without and with `{results.reranker}` re-scoring its top 20 hits "
        f"({what}); a weight is the second stage's share of the re-scored hits' score (min-max normalized, the "
        f"first stage's the rest; weight 1 = its score alone). {results.reports} {results.split}-split "
        "reports."
        + (
            " A side with `N+ words` re-scores only queries of N words or more; the words of the train-split "
            "findings the re-ranker learned from: "
            + ", ".join(f"{k} {v}" for k, v in results.train_query_words.items())
            + "."
            if results.train_query_words is not None and any(", " in name for name in results.refs)
            else ""
        ),
        "",
        "## Findings -> impression (match@5; each source against its own impressions)",
        "",
        header.format("source"),
        rule,
    ]
    for source in without.retrieval:
        values = [side.retrieval[source].all["match@5"] for side in every]
        lines.append(f"| {source} | " + " | ".join(f"{v:.3f}" for v in values) + " |")
    tests = [
        f"{n} {format_p(mcnemar(hit5(pooled_ranks(without)), hit5(pooled_ranks(results.sides[n]))).p)}" for n in names
    ]
    lines += [
        "",
        f"Pooled hit@5 against without, McNemar p: {', '.join(tests)}.",
        "",
        "## Robustness (eval/robustness, as in robustness.md)",
        "",
        header.format("measure"),
        rule,
    ]
    rows: list[tuple[str, Callable[[RerankSide], float]]] = [
        ("ICD-10-CM exact@1", lambda r: r.icd.exact_at_1.value),
        ("ICD-10-CM category@1", lambda r: r.icd.category_at_1.value),
        ("error discrimination, all", lambda r: r.errors.all.value),
    ]
    rows += [(f"error discrimination, {t}", lambda r, t=t: r.errors.by_type[t].value) for t in ERROR_TYPES]
    rows += [(f"query match@5, {v}", lambda r, v=v: r.queries.variants[v].match_at_5) for v in VARIANTS]
    rows += [("abbreviated drop", lambda r: r.queries.variants["abbreviated"].drop_at_5)]
    for label, value in rows:
        lines.append(f"| {label} | " + " | ".join(f"{value(side):.3f}" for side in every) + " |")
    if results.decision is not None:
        decision = results.decision
        lines += [
            "",
            "## Rule (dev split only)",
            "",
            decide.__doc__.split("The rule (dev split): ")[1].strip(),
            "",
            "| check | " + " | ".join(names) + " |",
            "|---|" + "---:|" * len(names),
        ]
        for check in next(iter(decision.checks.values()), {}):
            lines.append(
                f"| {check} | " + " | ".join("yes" if decision.checks[n][check] else "no" for n in names) + " |"
            )
        verdict = f"adopt at {decision.chosen}" if decision.adopt else "keep search without it"
        lines += ["", f"Decision: {verdict}."]
    card = results.card
    if results.reranker in SUPPORT_STAGES:
        return "\n".join(lines) + "\n"
    lines += [
        "",
        "## The re-ranker",
        "",
        f"Base `{card['base_model']['ref']}`, {card['loss']}, "
        f"{card['data']['pairs']['train']} training pairs, examples {card['data']['examples']['train']}, "
        f"seconds per epoch {card['train_seconds_per_epoch']}; dev pairwise accuracy before "
        f"{card['dev_pairwise_accuracy']['before']}, after {card['dev_pairwise_accuracy']['after']}.",
    ]
    return "\n".join(lines) + "\n"


def weight_list(text: str) -> list[float]:
    """`1,0.3` -> [1.0, 0.3]: each a re-ranker share in (0, 1], no repeats."""
    try:
        weights = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"weights are numbers separated by commas, not {text!r}") from None
    if not weights or any(not 0.0 < w <= 1.0 for w in weights) or len(set(weights)) != len(weights):
        raise argparse.ArgumentTypeError(f"give distinct weights in (0, 1], not {text!r}")
    return weights


def gate_list(text: str) -> list[int]:
    """`0,15` -> [0, 15]: minimum query words, distinct, 0 or more."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts or not all(p.isdigit() for p in parts) or len(set(map(int, parts))) != len(parts):
        raise argparse.ArgumentTypeError(f"give distinct whole numbers of words, 0 or more, not {text!r}")
    return [int(p) for p in parts]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED_DATA, help="shared data folder")
    parser.add_argument("--train-only", action="store_true", help="train the re-ranker if missing, compare nothing")
    parser.add_argument("--max-steps", type=int, default=-1, help="stop training early (smoke runs)")
    parser.add_argument("--split", choices=("dev", "test"), default="dev", help="dev to decide on, test to report once")
    parser.add_argument(
        "--weights",
        type=weight_list,
        default=[RERANK_WEIGHT],
        help="the re-ranker's shares of the score to compare, e.g. 1,0.3 (default: the product's)",
    )
    parser.add_argument(
        "--gates",
        type=gate_list,
        default=[0],
        help="minimum query words for the re-ranker to act, e.g. 0,15 (0: every query; default 0)",
    )
    parser.add_argument(
        "--reranker",
        choices=(RERANKER, *SUPPORT_STAGES),
        default=RERANKER,
        help=f"the second stage: the trained cross-encoder (trained first if missing), the "
        f"model-free support check, or it on single terms only (default {RERANKER})",
    )
    parser.add_argument(
        "--adopt",
        action="store_true",
        help="write the support check's decision into the preset for the default encoder (dev)",
    )
    parser.add_argument("--name", help="results name (default: rerank_<split>, support_<split>, support_words_<split>)")
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    if not args.data.is_dir():
        print(f"skipped: shared data folder {args.data} is absent")
        return 0
    support = args.reranker in SUPPORT_STAGES
    folder = None if support else ensure_trained(args.data, max_steps=args.max_steps)
    if args.train_only:
        return 0
    name = args.name or f"{args.reranker.replace('-', '_') if support else 'rerank'}_{args.split}"
    card = support_card() if folder is None else json.loads((folder / CARD_FILE).read_text(encoding="utf-8"))
    measured = compare(
        args.data, args.split, card, args.weights, args.reranker, eval_home() / f"{name}.partial.json", args.gates
    )
    results = RerankResults(
        name=name,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        command=" ".join(["python -m eval.robustness.rerank_benchmark", *(argv if argv is not None else sys.argv[1:])]),
        split=args.split,
        reranker=args.reranker,
        card=card,
        train_query_words=query_words(args.data),
        load="{:.1f} {:.1f} {:.1f}".format(*os.getloadavg()),
        **measured,
    )
    if args.split == "dev":
        results.decision = decide(results)
    write_results(args.out / results.name, results, render)
    print(f"wrote {args.out / results.name}.json and .md")
    if args.adopt and support and results.decision is not None:
        decision = results.decision
        source = f"eval/results/{results.name}.json"
        if decision.adopt and decision.chosen is not None:
            weight = split_weight(split_gate(results.refs[decision.chosen])[0])[1] or RERANK_WEIGHT
            adopt_search(DEFAULT_MODEL, source, second_stage=support_stage.NAME, second_stage_weight=weight)
        else:
            adopt_search(DEFAULT_MODEL, source, second_stage=None)
        print(f"wrote the decision ({decision.chosen or 'no second stage'}) into the preset (models/preset.json)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
