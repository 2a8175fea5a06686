"""Retrieval benchmark: every retrieval metric for BM25 and any encoders, on the shared data or your reports.

    python -m eval.retrieval.benchmark                                   # shared data, held-out test split
    python -m eval.retrieval.benchmark --rankers bm25,minilm,mpnet,radsearch-minilm
    python -m eval.retrieval.benchmark --corpus my_reports.csv --split all --beir my_queries/ --name my_site

Metrics (see eval.retrieval.findings_impression, eval.retrieval.label_metrics, eval.retrieval.beir):
- findings -> impression match@1/5/10 and MRR@10, per source and pooled, also without the 20 most frequent
  impressions;
- label mAP@100 and P@10 with findings as query against full reports: modality and source over the pooled
  reports, finding labels within each source that has them;
- free-text query P@10 / nDCG@10 / MRR@10 from a BEIR folder (default: the project's label queries over the
  shared data's held-out Open-i and CT-RATE reports).
Every ranker searches through the product's `ReportIndex` (eval.retrieval.findings_impression.IndexRanker), with the
encoder backend users' indexes are built with unless `--encoder-backend` says otherwise. Writes <name>.json (the records
of eval.retrieval.results), <name>.md and <name>_match_at_k.png to eval/results/.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval.common.plots import match_curves
from eval.common.shared_data import (
    CORPORA,
    RESULTS,
    SHARED_DATA,
    add_encoder_backend_option,
    add_out_option,
    write_results,
)
from eval.common.stats import format_p, mcnemar, paired_permutation
from eval.retrieval import beir
from eval.retrieval.findings_impression import RERANK_SUFFIX, Ranker, findings_to_impression, make_ranker
from eval.retrieval.label_metrics import label_retrieval
from eval.retrieval.results import (
    Candidate,
    Choice,
    LabelScores,
    MatchScores,
    RankerResult,
    RetrievalResults,
    TargetRow,
    Targets,
)
from models.preset import PRESET, adopt_search
from retriever.reports.record import Report
from retriever.reports.splits import split_of

#: Findings -> impression subsets reported, with their table titles.
SUBSETS = {
    "all": "all reports",
    "without_top20_impressions": "without the 20 most frequent impressions",
    "abnormal": "abnormal reports (eval.retrieval.findings_impression.is_abnormal: a non-normal label, "
    "else a non-normal impression)",
}
#: The issue's bar for the product's default retriever: beat these on every source.
RIVALS = ("bm25", "mpnet")
#: Sources whose finding labels the default must also retrieve better (label P@10).
LABEL_TARGET_SOURCES = ("openi", "ctrate")
#: The split the product's default method is chosen on (tune on dev, report on test), and the results holding it:
#: `python -m eval.retrieval.benchmark --split dev --name retrieval_dev`.
CHOICE_SPLIT = "dev"
CHOICE_RESULTS = RESULTS / "retrieval_dev.json"
#: The benchmarks' default fine-tuned encoder: the one the product ships and indexes with (`radsearch`,
#: models/radsearch/), as the preset names it (models/preset.json; the choice: docs/decisions/).
DEFAULT_MODEL = PRESET.encoder


def product_default(model: str = DEFAULT_MODEL) -> str:
    """The ranker the product uses by default: its default search method over `model` (the default-recipe one)."""
    from retriever.search.methods import DEFAULT_METHOD

    return model if DEFAULT_METHOD == "dense" else f"{DEFAULT_METHOD}:{model}"


def shipped_default(model: str = DEFAULT_MODEL) -> str:
    """What search, ask and chat run by default: `product_default` with the default second stage, if any
    (retriever.search.methods.DEFAULT_SECOND_STAGE). The targets are checked on this one, since it is what users get."""
    from retriever.search.methods import DEFAULT_SECOND_STAGE

    stage = f"{RERANK_SUFFIX}{DEFAULT_SECOND_STAGE}" if DEFAULT_SECOND_STAGE else ""
    return product_default(model) + stage


DEFAULT_RANKERS = ",".join(
    [
        "bm25",
        "minilm",
        "mpnet",
        "radsearch-minilm",
        DEFAULT_MODEL,
        f"hybrid:{DEFAULT_MODEL}",
        f"hybrid-weighted:{DEFAULT_MODEL}",
        shipped_default(),
    ]
)
LABEL_QUERIES = Path(__file__).resolve().parents[1] / "datasets" / "shared_label_queries"


def evaluate(reports: list[Report], ranker: Ranker, queries: beir.BeirSet | None) -> RankerResult:
    """All metrics for one ranker."""
    by_source: dict[str, list[Report]] = {}
    for r in reports:
        by_source.setdefault(r.source or "reports", []).append(r)
    f2i = {s: findings_to_impression(rs, ranker, per_query=True) for s, rs in sorted(by_source.items())}
    if len(by_source) > 1:
        f2i["overall"] = findings_to_impression(reports, ranker, per_query=True)
    labels: dict[str, Any] = {"pooled": label_retrieval(reports, ranker, ("modality", "source"))}
    for source, subset in sorted(by_source.items()):
        found = label_retrieval(subset, ranker, ("finding_label",), per_query=True)
        if found:
            labels[source] = found
    result: dict[str, Any] = {"findings_to_impression": f2i, "labels": labels}
    if queries is not None:
        result["free_text"] = beir.evaluate(queries, ranker)
    return RankerResult.from_json(result)


def render(results: RetrievalResults) -> str:
    """Markdown tables: one per metric family, one row per ranker."""
    rankers = results.rankers
    lines = [
        f"# Retrieval benchmark: {results.name}",
        "",
        f"Written {results.created} by `{results.command}`. Reports: {json.dumps(results.reports)} "
        f"({results.split} split of `retriever.reports.splits`; encoders were fine-tuned on the train split only). "
        f"Encoder backend: `{results.encoder_backend}`.",
        "",
        "## Findings -> impression (query = findings, corpus = the unique impressions of the set)",
    ]
    keys = list(next(iter(rankers.values())).findings_to_impression)
    for subset, label in SUBSETS.items():
        lines += [
            "",
            f"### {label}",
            "| ranker | set | n | match@1 | match@5 | match@10 | MRR@10 |",
            "|---|---|---|---|---|---|---|",
        ]
        for key in keys:
            for name, r in rankers.items():
                s = r.findings_to_impression[key].subset(subset)
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
        for subset, kinds in r.labels.items():
            for kind, s in kinds.items():
                lines.append(f"| {name} | {subset} | {kind} | {s.queries} | {s.map_at_100:.3f} | {s.p_at_10:.3f} |")
    if any(r.free_text for r in rankers.values()):
        lines += [
            "",
            f"## Free-text queries ({results.queries_folder})",
            "| ranker | queries | P@10 | nDCG@10 | MRR@10 |",
            "|---|---|---|---|---|",
        ]
        for name, r in rankers.items():
            if t := r.free_text:
                lines.append(f"| {name} | {t.queries} | {t.p_at_10:.3f} | {t.ndcg_at_10:.3f} | {t.mrr_at_10:.3f} |")
    if results.choice:
        lines += _render_choice(results.choice, results.product_default or "", results.split)
    if results.targets:
        lines += _render_targets(results.targets)
    reused = {n: r.reused_from for n, r in rankers.items() if r.reused_from}
    if reused:
        lines += [
            "",
            "Reused from an earlier run of the same split, reports and encoder backend (`--reuse`, "
            "`--reuse-missing`): " + ", ".join(f"{n} ({when})" for n, when in reused.items()),
        ]
    if results.missing:
        lines += ["", "Not evaluated (model not available): " + ", ".join(results.missing)]
    lines += ["", f"![match@k]({results.plot})", ""]
    return "\n".join(lines)


def check_targets(rankers: dict[str, RankerResult], default: str) -> Targets:
    """Every comparison the issue asks of the default retriever: findings -> impression match@5 (all and abnormal)
    per source and pooled, and finding-label P@10 on Open-i and CT-RATE, each against BM25 and mpnet (strictly
    better to pass). Where both rankers kept per-query results, each row also gets a paired two-sided p-value
    (McNemar on the match@5 hits, sign-flip permutation on P@10), so a small loss can be told from noise."""
    rows = []
    mine = rankers[default]
    for rival in (r for r in RIVALS if r in rankers):
        theirs = rankers[rival]
        for source, scores in mine.findings_to_impression.items():
            other = theirs.findings_to_impression[source]
            for subset in ("all", "abnormal"):
                a, b = scores.subset(subset)["match@5"], other.subset(subset)["match@5"]
                test = _paired_match5(scores, other, subset)
                rows.append(
                    TargetRow(f"match@5 ({subset})", source, rival, a, b, scores.subset(subset)["n"], a > b, test)
                )
        for source in LABEL_TARGET_SOURCES:
            label = mine.labels.get(source, {}).get("finding_label")
            their_label = theirs.labels.get(source, {}).get("finding_label")
            if label and their_label:
                a, b = label.p_at_10, their_label.p_at_10
                test = _paired_p10(label, their_label)
                rows.append(TargetRow("label P@10", source, rival, a, b, label.queries, a > b, test))
    return Targets(default, rows, bool(rows) and all(r.passed for r in rows))


def _paired_match5(mine: MatchScores, theirs: MatchScores, subset: str) -> float | None:
    """McNemar p for the top-5 hits of two rankers on the same queries of a subset (None without per-query data)."""
    a, b = mine.per_query, theirs.per_query
    if not a or not b or a.id != b.id:
        return None
    keep = [subset == "all" or abnormal for abnormal in a.abnormal]
    hits = [[rank is not None and rank <= 5 for rank, k in zip(q.rank, keep, strict=True) if k] for q in (a, b)]
    return mcnemar(hits[0], hits[1]).p


def _paired_p10(mine: LabelScores, theirs: LabelScores) -> float | None:
    """Sign-flip permutation p for the per-query P@10 of two rankers (None without per-query data)."""
    a, b = mine.per_query, theirs.per_query
    if not a or not b or a.id != b.id:
        return None
    return paired_permutation(a.p_at_10, b.p_at_10).p


def choose_default(rankers: dict[str, RankerResult], candidates: list[str]) -> Choice:
    """The rule that picks the product's default retriever from the results: the candidate that passes the most
    target rows (check_targets), ties broken by pooled findings -> impression match@5 and then MRR@10. The
    candidates are the search methods over the default-recipe model, i.e. the choices DEFAULT_METHOD offers."""
    table = []
    for name in candidates:
        rows = check_targets(rankers, name).rows
        pooled = rankers[name].pooled().all
        table.append(Candidate(name, sum(r.passed for r in rows), len(rows), pooled["match@5"], pooled["mrr@10"]))
    table.sort(key=lambda row: (-row.passed, -row.match_at_5, -row.mrr_at_10))
    return Choice(table[0].ranker if table else None, table)


def default_candidates(rankers: dict[str, RankerResult]) -> list[str]:
    """Rankers that are a search method over DEFAULT_MODEL (dense, hybrid, hybrid-weighted) and were evaluated."""
    from retriever.search.methods import split_fused_spec

    return [name for name in rankers if split_fused_spec(name)[1] == DEFAULT_MODEL]


def _render_targets(targets: Targets) -> list[str]:
    verdict = "every target met" if targets.all_pass else "NOT every target met (see the rows marked no)"
    paired = any(r.p is not None for r in targets.rows)
    lines = [
        "",
        f"## Targets for the default retriever `{targets.default}`: {verdict}",
        "",
        "p = paired two-sided test against the rival on the same queries (McNemar exact/chi-square on the top-5 "
        "hits; sign-flip permutation on per-query P@10); p >= 0.05 means the difference is within noise at this n."
        if paired
        else "p: not available (the default's results were reused from a run that kept no per-query results).",
        "",
        "| metric | set | n | default | rival | rival's score | beats it | p |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r.metric} | {r.set_name} | {r.n} | {r.default_score:.3f} | {r.rival} | {r.rival_score:.3f} "
        f"| {'yes' if r.passed else '**no**'} | {'' if r.p is None else format_p(r.p)} |"
        for r in targets.rows
    ]
    return lines


def _render_choice(choice: Choice, product: str, split: str) -> list[str]:
    where = (
        "This is the split the product's default is chosen on."
        if split == CHOICE_SPLIT
        else f"Shown for this split only: the product's default is chosen on the {CHOICE_SPLIT} split "
        f"(`{CHOICE_RESULTS.relative_to(RESULTS.parent.parent)}`), never on the split it is reported on."
    )
    lines = [
        "",
        "## Choosing the default",
        "",
        "Rule (`choose_default`): the search method over the default-recipe model that passes the most target rows; "
        f"ties broken by pooled match@5, then MRR@10. {where}",
        "",
        "| candidate | target rows passed | pooled match@5 | pooled MRR@10 |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {'**' + c.ranker + '**' if c.ranker == choice.best else c.ranker} | {c.passed} / "
        f"{c.rows} | {c.match_at_5:.3f} | {c.mrr_at_10:.3f} |"
        for c in choice.candidates
    ]
    same = "is" if product == choice.best else "is NOT"
    if split == CHOICE_SPLIT:
        lines += [
            "",
            f"Chosen: `{choice.best}`. The product's default (`retriever.search.methods.DEFAULT_METHOD` over "
            f"`{DEFAULT_MODEL}`) is `{product}`, which {same} the chosen one.",
        ]
    else:
        lines += [
            "",
            f"On this split the rule would pick `{choice.best}`; the product's default, chosen on the "
            f"{CHOICE_SPLIT} split, is `{product}`.",
        ]
    return lines


def reuse_previous(
    path: Path, refs: list[str], split: str, counts: dict[str, int], backend: str
) -> dict[str, RankerResult]:
    """Results of `refs` from an earlier run written to `path`, when it evaluated the same split and reports with
    the same encoder backend: for models that cannot be loaded here (not trained on this machine) or that need not
    be measured again."""
    if not path.is_file():
        return {}
    earlier = RetrievalResults.read(path)
    if earlier.split != split or earlier.reports != counts or earlier.encoder_backend != backend:
        return {}
    found = {ref: earlier.rankers[ref] for ref in refs if ref in earlier.rankers}
    for result in found.values():
        result.reused_from = result.reused_from or earlier.created
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", default=[], help="report corpus (repeatable; default shared)")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--split", default="test", choices=("train", "dev", "test", "all"))
    parser.add_argument("--rankers", default=DEFAULT_RANKERS, help="comma-separated: bm25 and encoder references")
    parser.add_argument("--beir", type=Path, default=None, help="BEIR folder (default: shared label queries)")
    add_out_option(parser, RESULTS)
    parser.add_argument("--name", default="retrieval")
    parser.add_argument(
        "--default",
        default=None,
        help="ranker checked against the targets (default: the product's, second stage included)",
    )
    parser.add_argument(
        "--reuse",
        default="",
        help="comma-separated rankers whose results to take from the previous <name>.json (same split, reports and "
        "encoder backend) instead of evaluating them again, e.g. the slow untuned mpnet when only a new model changed",
    )
    parser.add_argument(
        "--reuse-missing",
        action="store_true",
        help="for models that are not available here, keep their results from the previous <name>.json "
        "if it evaluated the same split, reports and encoder backend (marked as reused in the report)",
    )
    add_encoder_backend_option(parser)
    parser.add_argument(
        "--adopt",
        action="store_true",
        help="write the method the rule chooses (dev split) into the preset for the default encoder",
    )
    parser.add_argument(
        "--render-only",
        action="store_true",
        help="rewrite <out>/<name>.md from its .json (after a change of the report's wording)",
    )
    args = parser.parse_args(argv)
    if args.render_only:
        from models.atomic import write_atomic

        stem = args.out / args.name
        write_atomic(stem.with_suffix(".md"), render(RetrievalResults.read(stem.with_suffix(".json"))))
        print(f"rewrote {stem}.md")
        return 0
    from models.resolve import ModelNotAvailable
    from retriever.reports.ingest import ingest

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
    results = RetrievalResults(
        name=args.name,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        command=" ".join(["python -m eval.retrieval.benchmark", *(argv if argv is not None else sys.argv[1:])]),
        split=args.split,
        reports={s: sum(r.source == s for r in reports) for s in sorted({r.source for r in reports})},
        queries_folder=str(folder.relative_to(Path.cwd()))
        if folder and folder.is_relative_to(Path.cwd())
        else str(folder or ""),
        encoder_backend=args.encoder_backend,
        rankers={},
    )
    previous = args.out / f"{args.name}.json"

    def reused(refs: list[str]) -> dict[str, RankerResult]:
        return reuse_previous(previous, refs, results.split, results.reports, results.encoder_backend)

    results.rankers |= reused([r.strip() for r in args.reuse.split(",") if r.strip()])
    refs = [r.strip() for r in args.rankers.split(",") if r.strip()]
    for ref in refs:
        if ref in results.rankers:
            print(f"reusing {ref} from {previous}")
            continue
        try:
            ranker = make_ranker(ref, backend=args.encoder_backend)
        except ModelNotAvailable as exc:
            print(f"skipping {ref}: {exc}")
            results.missing.append(ref)
            continue
        print(f"evaluating {ref}", flush=True)
        results.rankers[ref] = evaluate(reports, ranker, queries)
    if args.reuse_missing and results.missing:
        earlier = reused(results.missing)
        results.rankers |= earlier
        results.missing = [ref for ref in results.missing if ref not in earlier]
    results.rankers = {ref: results.rankers[ref] for ref in refs if ref in results.rankers}
    if not results.rankers:
        print("no ranker could be evaluated")
        return 1
    conclude(results, args.default or shipped_default())
    key = "overall" if len(results.reports) > 1 else next(iter(results.reports))
    curves = {
        n: {int(m.split("@")[1]): v for m, v in r.findings_to_impression[key].all.items() if m.startswith("match@")}
        for n, r in results.rankers.items()
    }
    args.out.mkdir(parents=True, exist_ok=True)
    plot = args.out / f"{args.name}_match_at_k.png"
    results.plot = match_curves(curves, f"findings -> impression ({key})", plot).name
    write_results(args.out / args.name, results, render)
    print(f"wrote {args.out / args.name}.json, .md and _match_at_k.png")
    if args.adopt and results.split == "dev" and results.choice is not None:
        from retriever.search.methods import split_fused_spec

        method = split_fused_spec(results.choice.best.split(RERANK_SUFFIX)[0])[0]
        adopt_search(DEFAULT_MODEL, f"eval/results/{args.name}.json", method=method)
        print(f"wrote the method {method} for {DEFAULT_MODEL} into the preset (models/preset.json)")
    return 0


def conclude(results: RetrievalResults, default: str) -> None:
    """The verdicts: the product's default, the choice among the default model's methods, and the targets of
    `default` (when each can be computed from the rankers evaluated)."""
    results.product_default = product_default()
    candidates = default_candidates(results.rankers)
    if candidates:
        results.choice = choose_default(results.rankers, candidates)
    if default in results.rankers:
        results.targets = check_targets(results.rankers, default)


if __name__ == "__main__":
    raise SystemExit(main())
