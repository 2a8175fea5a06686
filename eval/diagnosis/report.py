"""Grade a diagnosis run and write its report: JSON (machine-readable), Markdown (the paper's table layout) and
a PNG of accuracy with 95% CIs per condition.

The paper's layout: one row per condition with "accuracy % (k/n) [95% CI]" overall and per source, then the
paired comparisons (McNemar, Bonferroni-adjusted across all pairs). Each grading criterion is reported too, and
the per-case verdicts are kept by case id (no case text: the data is not ours to republish).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path

from assistant.rag.question import stated_diagnosis
from eval.common.plots import accuracy_bars
from eval.common.shared_data import write_results
from eval.common.stats import bonferroni, chi_square, format_p, mcnemar, mcnemar_sample_size
from eval.diagnosis.cases import SCREENING, Case
from eval.diagnosis.grading import Grader
from eval.diagnosis.results import (
    Ceiling,
    Cell,
    Comparison,
    ConditionSummary,
    DiagnosisResults,
    RunMeta,
    SourceTest,
    Summary,
    Target,
    Verdict,
)
from retriever.reports.splits import split_of

#: Column of the cases no configuration was chosen on (build_cases marks the screening set).
NEVER_SCREENED = "never screened"
#: Column of the cases whose report is in the test split (configurations are chosen on the dev split's cases).
TEST_SPLIT = "test split"
#: How many of an answer's diagnoses (the answer, then its differential) the differential recall counts.
RECALL_AT = 5
#: Issue 16's bars for the product's default configuration: baseline retriever -> (accuracy points the default must
#: gain over it, McNemar p it must stay below). Other retrievers of the run (mpnet, the generalist) are reported
#: beside them without a bar.
TARGETS = {"none": (0.15, 0.01), "bm25": (0.05, 0.05)}
#: The power the case count is planned for (eval/diagnosis/build_cases.py states the plan; each run re-checks it,
#: `power`).
POWER = 0.8


def _text(cell: Cell | None) -> str:
    if cell is None or not cell.n:
        return "-"
    low, high = cell.ci95
    return f"{100 * cell.accuracy:.1f} ({cell.k}/{cell.n}) [{100 * low:.1f}, {100 * high:.1f}]"


def _correct(verdicts: Sequence[Verdict]) -> Cell:
    return Cell.of(sum(v.correct for v in verdicts), len(verdicts))


def grade_run(
    cases: Sequence[Case], conditions: Sequence[str], rows: Sequence[dict], grader: Grader
) -> dict[str, list[Verdict]]:
    """Verdicts per condition per case, in case order; a missing prediction counts as wrong and is counted."""
    by_key = {(r["case_id"], r["condition"]): r for r in rows}
    graded: dict[str, list[Verdict]] = {}
    for condition in conditions:
        graded[condition] = []
        for case in cases:
            row = by_key.get((case.id, condition))
            prediction = stated_diagnosis(row.get("diagnosis"), row.get("degraded_kind")) if row else None
            grade = grader.grade(prediction, case.references())
            listed = list(dict.fromkeys(d for d in [prediction, *((row or {}).get("differential") or [])] if d))
            graded[condition].append(
                Verdict(
                    case_id=case.id,
                    source=case.source,
                    screening=SCREENING in case.meta,
                    prediction=prediction,
                    correct=grade.correct,
                    in_differential=any(grader.grade(d, case.references()).correct for d in listed[:RECALL_AT]),
                    test_split=split_of(case.id) == "test",
                    criteria=grade.criteria,
                    matched_by=sorted(grade.matched),
                    prediction_icd=grade.prediction_code,
                    missing=row is None,
                    degraded=row.get("degraded_kind") if row else "missing",
                    retrieved=[r["id"] for r in row.get("retrieved", [])] if row else [],
                    own_report_retrieved=bool(row and row.get("own_report_retrieved")),
                    self_contradicted=bool(row and row.get("self_contradicted")),
                    fell_back=bool(row and row.get("parse_mode") == "fallback"),
                    seconds=(row or {}).get("timings", {}).get("total"),
                )
            )
    return graded


def summarize(cases: Sequence[Case], graded: dict[str, list[Verdict]], criteria: Sequence[str]) -> Summary:
    """Accuracies with CIs (overall, per source, per criterion) and the statistical comparisons."""
    sources = sorted({c.source for c in cases if c.source})
    table: dict[str, ConditionSummary] = {}
    for condition, verdicts in graded.items():
        subsets = {source: _correct([v for v in verdicts if v.source == source]) for source in sources}
        if any(v.screening for v in verdicts):  # configurations were chosen on some cases: score the others too
            subsets[NEVER_SCREENED] = _correct([v for v in verdicts if not v.screening])
        in_test = [bool(v.test_split) for v in verdicts]  # verdicts of older result files lack the flag
        if any(in_test) and not all(in_test):
            subsets[TEST_SPLIT] = _correct([v for v, t in zip(verdicts, in_test, strict=True) if t])
        seconds = [v.seconds for v in verdicts if v.seconds is not None]
        entry = ConditionSummary(
            overall=_correct(verdicts),
            subsets=subsets,
            differential_recall=Cell.of(sum(bool(v.in_differential) for v in verdicts), len(verdicts)),
            criteria={c: Cell.of(sum(v.criteria[c] for v in verdicts), len(verdicts)) for c in criteria},
            mean_seconds_per_case=round(sum(seconds) / len(seconds), 2) if seconds else None,
            degraded=dict(Counter(v.degraded for v in verdicts if v.degraded)),
            own_report_retrieved=sum(v.own_report_retrieved for v in verdicts),
            self_contradicted=sum(bool(v.self_contradicted) for v in verdicts),
            fell_back=sum(bool(v.fell_back) for v in verdicts),
        )
        if len(sources) == 2:  # independent case sets: is accuracy different between the two sources?
            a, b = (subsets[s] for s in sources)
            test = chi_square(a.k, a.n, b.k, b.n)
            entry.between_sources = SourceTest(test.p, test.method, test.statistic)
        table[condition] = entry
    pairs = list(combinations(graded, 2))
    tests = [mcnemar([v.correct for v in graded[a]], [v.correct for v in graded[b]]) for a, b in pairs]
    adjusted = bonferroni([t.p for t in tests])
    comparisons = [
        Comparison(a, b, only_a_correct=t.b, only_b_correct=t.c, p=t.p, p_bonferroni=p_adj, method=t.method)
        for (a, b), t, p_adj in zip(pairs, tests, adjusted, strict=True)
    ]
    return Summary(sources, table, comparisons)


def check_targets(summary: Summary, default: str, baselines: dict[str, str]) -> list[Target]:
    """The default condition against each baseline of the run (`baselines`: retriever spec -> condition name):
    the paired accuracy difference and the unadjusted McNemar p, judged by TARGETS where the spec has a bar. Why
    here and not in prose: a missed target must show in the committed table itself, not only in a note."""
    accuracy = summary.accuracy
    pairs = {(c.a, c.b): c for c in summary.mcnemar}
    rows = []
    for spec, name in baselines.items():
        if name == default or name not in accuracy or default not in accuracy:
            continue
        comparison = pairs.get((default, name)) or pairs[(name, default)]
        difference = accuracy[default].overall.accuracy - accuracy[name].overall.accuracy
        points, alpha = TARGETS.get(spec, (None, None))
        met = None if points is None or alpha is None else bool(difference >= points - 1e-9 and comparison.p < alpha)
        discordant = (comparison.only_a_correct + comparison.only_b_correct) / accuracy[default].overall.n
        rows.append(
            Target(
                baseline=name,
                difference=round(difference, 4),
                p=comparison.p,
                needed_difference=points,
                needed_p=alpha,
                met=met,
                discordant=round(discordant, 4),
                cases_needed=None if points is None or alpha is None else power(points, discordant, alpha),
            )
        )
    return rows


def power(difference: float, discordant: float, alpha: float) -> int | None:
    """Cases a McNemar test at `alpha` needs to show `difference` with POWER when the conditions disagree on a
    share `discordant` of the cases, as the run observed it; None when the difference is larger than that share
    (no case count can show it: the conditions would have to disagree more). Why: it says whether a missed bar
    lacked cases or lacked effect."""
    return mcnemar_sample_size(difference, discordant, alpha, POWER) if 0 < difference <= discordant else None


def top_hit_ceiling(graded: dict[str, list[Verdict]], default: str, no_retrieval: str) -> Ceiling | None:
    """What a model shown only the top report could reach at best: the share of cases where its own answer without
    retrieval or the top hit's impression (the no-LLM condition `tophit:<default>`) is right, i.e. a perfect choice
    between the two. Why: it says whether a k = 1 target is reachable by answering better, or needs more reports.
    None unless the run has both conditions."""
    top_hit = "tophit:" + default
    if default not in graded or no_retrieval not in graded or top_hit not in graded:
        return None
    own = {row.case_id: row.correct for row in graded[no_retrieval]}
    either = Cell.of(sum(own[row.case_id] or row.correct for row in graded[top_hit]), len(graded[top_hit]))
    return Ceiling(either.k, either.n, either.accuracy, either.ci95, no_retrieval=no_retrieval, top_hit=top_hit)


def _ceiling_lines(ceiling: Ceiling, accuracy: dict[str, ConditionSummary], default: str) -> list[str]:
    alone = accuracy[ceiling.no_retrieval].overall.accuracy
    return [
        "",
        "## What one report can give at best",
        f"Cases where the answer without retrieval (`{ceiling.no_retrieval}`) or the top hit's impression "
        f"(`{ceiling.top_hit}`) is right, i.e. a perfect choice between the two: {_text(ceiling)}, "
        f"{100 * (ceiling.accuracy - alone):+.1f} points over no retrieval; the default "
        f"(`{default}`) reaches {100 * accuracy[default].overall.accuracy:.1f}.",
    ]


def _target_lines(default: str, rows: list[Target], n_cases: int) -> list[str]:
    lines = [
        "",
        f"## Targets: the default configuration `{default}` against each baseline",
        f"| baseline | difference (points) | McNemar p | target | met | discordant | cases for the target "
        f"(power {POWER:g}) |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        target = (
            "reported beside the targets"
            if row.met is None
            else f">= +{100 * (row.needed_difference or 0):.0f} points, p < {row.needed_p}"
        )
        verdict = {None: "-", True: "yes", False: "**no (missed)**"}[row.met]
        needed = (
            "-"
            if row.needed_difference is None or row.discordant is None  # runs before the power columns lack them
            else "none can (the target exceeds the discordant share)"
            if row.cases_needed is None
            else str(row.cases_needed)
        )
        discordant = "-" if row.discordant is None else f"{100 * row.discordant:.1f}%"
        lines.append(
            f"| {row.baseline} | {100 * row.difference:+.1f} | {format_p(row.p)} | {target} | "
            f"{verdict} | {discordant} | {needed} |"
        )
    lines += [
        "",
        f"Power: the cases a McNemar test needs to show the target's difference at its p with power "
        f"{POWER:g}, given the share of cases the two conditions disagree on in this run (Connor 1987; "
        f"eval.common.stats.mcnemar_sample_size); this run has {n_cases}.",
    ]
    return lines


def _recall_in(verdicts: list[Verdict], source: str) -> Cell:
    subset = [v for v in verdicts if v.source == source]
    return Cell.of(sum(bool(v.in_differential) for v in subset), len(subset))


def render(results: DiagnosisResults) -> str:
    """Markdown in the paper's layout."""
    summary, meta = results.summary, results.meta
    sources = summary.sources
    columns = sources + [NEVER_SCREENED] * any(NEVER_SCREENED in e.subsets for e in summary.accuracy.values())
    columns += [TEST_SPLIT] * any(TEST_SPLIT in e.subsets for e in summary.accuracy.values())
    header = "| condition | overall | " + " | ".join(columns) + " |"
    lines = [
        f"# Diagnosis benchmark: {results.name}",
        "",
        f"Model `{results.model_id}`, prompts {', '.join(f'`{p}`' for p in results.prompt_ids)}; "
        f"{results.n_cases} cases ({json.dumps(results.cases_by_source)}); retrieval field "
        f"`{meta.field}`, k={meta.k}, prompt `{meta.prompt}` unless a condition's "
        f"[options] say otherwise; corpus {meta.corpus_reports} reports (the cases' own reports "
        f"removed); max_tokens {meta.max_tokens}, temperature 0, seed 0. Written {results.created} by "
        f"`{meta.command}`.",
        "",
        "## Accuracy, % (correct/n) [95% Wilson CI]",
        header,
        "|" + "---|" * (2 + len(columns)),
    ]
    for condition, entry in summary.accuracy.items():
        cells = [_text(entry.overall), *(_text(entry.subsets.get(s)) for s in columns)]
        lines.append(f"| {condition} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"## Differential recall@{RECALL_AT}: the right diagnosis among the answer's first {RECALL_AT} "
        "(the diagnosis, then its differential)",
        "| condition | overall | " + " | ".join(sources) + " |",
        "|" + "---|" * (2 + len(sources)),
    ]
    for condition, entry in summary.accuracy.items():
        recall = entry.differential_recall
        per_source = [_recall_in(results.cases[condition], s) for s in sources]
        lines.append(f"| {condition} | {_text(recall)} | " + " | ".join(_text(c) for c in per_source) + " |")
    lines += [
        "",
        "## Paired comparisons (McNemar; exact binomial when < 25 discordant pairs)",
        "| A | B | only A correct | only B correct | P | P (Bonferroni) | test |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in summary.mcnemar:
        lines.append(
            f"| {c.a} | {c.b} | {c.only_a_correct} | {c.only_b_correct} | {format_p(c.p)} | "
            f"{format_p(c.p_bonferroni)} | {c.method} |"
        )
    default = results.default_condition or ""
    if results.targets:
        lines += _target_lines(default, results.targets, results.n_cases)
    if results.ceiling:
        lines += _ceiling_lines(results.ceiling, summary.accuracy, default)
    criteria = list(next(iter(summary.accuracy.values())).criteria)
    lines += [
        "",
        "## By grading criterion (correct = exact, lexical or expanded; ICD-10-CM category shown apart)",
        "| condition | " + " | ".join(criteria) + " |",
        "|---|" + "---|" * len(criteria),
    ]
    for condition, entry in summary.accuracy.items():
        lines.append(f"| {condition} | " + " | ".join(_text(entry.criteria[c]) for c in criteria) + " |")
    if len(sources) == 2:
        lines += [
            "",
            f"## {sources[0]} vs {sources[1]} (independent sets; chi-square, Yates corrected)",
            "| condition | P |",
            "|---|---|",
        ]
        for condition, entry in summary.accuracy.items():
            lines.append(f"| {condition} | {format_p(entry.between_sources.p) if entry.between_sources else '-'} |")
    lines += [
        "",
        "## Run",
        "Self-contradicted: the answer's diagnosis is ruled out by the findings or by every report "
        "it cites that mentions it (assistant/rag/grounding.py). Choice fell back: the model was asked to choose "
        "among the evidence and its choice could not be read or named nothing, so the evidence's best candidate was "
        "given.",
        "",
        "| condition | mean s/case | degraded or missing | own report retrieved | self-contradicted "
        "| choice fell back |",
        "|---|---|---|---|---|---|",
    ]
    for condition, entry in summary.accuracy.items():
        lines.append(
            f"| {condition} | {entry.mean_seconds_per_case} | {json.dumps(entry.degraded) or '-'} | "
            f"{entry.own_report_retrieved} | {entry.self_contradicted or 0} | {entry.fell_back or 0} |"
        )
    lines += ["", f"![accuracy per condition]({results.plot})", ""]
    return "\n".join(lines)


def write_report(
    cases: Sequence[Case],
    conditions: Sequence[str],
    rows: Sequence[dict],
    grader: Grader,
    meta: RunMeta,
    out: Path,
    name: str,
    default: str | None = None,
    baselines: dict[str, str] | None = None,
) -> list[Path]:
    """Grade, summarize and write `<name>.json`, `<name>.md` and `<name>_accuracy.png` into `out`; with `default`
    (a condition name) the report checks it against `baselines` (see check_targets)."""
    out.mkdir(parents=True, exist_ok=True)
    graded = grade_run(cases, conditions, rows, grader)
    summary = summarize(cases, graded, grader.criteria)
    plot = accuracy_bars(
        {c: (e.overall.accuracy, *e.overall.ci95) for c, e in summary.accuracy.items()},
        f"{name}: diagnosis accuracy ({len(cases)} cases)",
        out / f"{name}_accuracy.png",
    )
    results = DiagnosisResults(
        name=name,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        model_id=next((r["model_id"] for r in rows if r["prompt_id"]), None),  # the top-hit rows ask no model
        prompt_ids=sorted({r["prompt_id"] for r in rows if r["prompt_id"]}),
        n_cases=len(cases),
        cases_by_source=dict(Counter(c.source for c in cases)),
        conditions=list(conditions),
        meta=meta,
        plot=plot.name,
        summary=summary,
        default_condition=default,
        targets=check_targets(summary, default, baselines or {}) if default else [],
        ceiling=top_hit_ceiling(graded, default, (baselines or {}).get("none", "none")) if default else None,
        cases=graded,
    )
    write_results(out / name, results, render)
    return [out / f"{name}.json", out / f"{name}.md", plot]
