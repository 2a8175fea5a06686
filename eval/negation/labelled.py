"""Dataset (c) of eval.negation.detection: the detectors on hand-labelled real report sentences.

Why: the NegEx set (a) is mostly discharge summaries and NegBio (b) is another rule system, so neither says how
often the detector is right on the phrasing of the reports searched here (CT-RATE's "Pleural effusion was not
detected.", Open-i's "No A, B, or C.", hedges, resolution). The rows are eval.negation.sentences; the positive class
is "ruled out" (gold label `ruled_out`; `present` and `uncertain` are the negative class).

The rules were developed on the train and dev reports' rows only (retriever.reports.splits); the test reports'
rows were scored once, to report. So scores are given for all rows (the acceptance figure), train + dev and test,
and per source and kind; errors are listed for train + dev rows only, and with their sentence only for MTSamples
(CC0): the other sources' licences do not let the project ship report text, so those rows are named by report id.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from eval.negation.finding_mentions import Detector
from eval.negation.results import DetectionScores, LabelledError, LabelledPart, LabelledScores, RulesBefore
from eval.negation.sentences import LabelledSentence
from retriever.reports.splits import split_of

#: The split groups scored: where the rules were developed, and the held-out rows.
SPLIT_GROUPS = ("train+dev", "test")
#: The rules as they were before real phrasing was added (commit 5d727ae: six-word window, no list or post-negation
#: scopes, "rule out" a negation), on this set: the baseline the change is judged against.
RULES_BEFORE = {
    "all": RulesBefore(n=479, precision=0.928, recall=0.566, true_positive=129, false_positive=10, false_negative=99),
    "train+dev": RulesBefore(
        n=426, precision=0.934, recall=0.551, true_positive=113, false_positive=8, false_negative=92
    ),
    "test": RulesBefore(n=53, precision=0.889, recall=0.696, true_positive=16, false_positive=2, false_negative=7),
}
#: The group of the rows labelled before the list and colon forms were (no `form`).
EARLIER = "earlier rows"
_SHIPPABLE = frozenset({"mtsamples"})  # sources whose text may appear in the results
_ERRORS_SHOWN = 20


def split_group(row: LabelledSentence) -> str:
    """`test` for a row of a test report, else `train+dev`."""
    return "test" if split_of(row.report_id) == "test" else "train+dev"


def form_group(row: LabelledSentence) -> str:
    """The row's form (FORMS of eval.negation.sentences), or EARLIER for a row labelled before forms were."""
    return row.form or EARLIER


def evaluate_labelled(
    rows: Sequence[LabelledSentence],
    detectors: dict[str, Detector],
    scores: Callable[[Sequence[bool], Sequence[bool]], DetectionScores],
) -> dict[str, Any]:
    """Per detector, scores of "ruled out" over all rows, per split group, source, kind and form (`scores` is
    eval.negation.detection.scores); the verdicts' correctness (for paired tests); the rules' train + dev errors."""
    truth = [r.ruled_out for r in rows]
    verdicts = {name: [detect(r.sentence, r.concept) for r in rows] for name, detect in detectors.items()}
    facets: dict[str, Callable[[LabelledSentence], str]] = {
        "split": split_group,
        "source": lambda r: r.source,
        "kind": lambda r: r.kind,
        "form": form_group,
    }

    def scored(predicted: list[bool]) -> LabelledScores:
        result: dict[str, dict[str, DetectionScores]] = {}
        for facet, key in facets.items():
            groups: dict[str, list[int]] = {}
            for i, row in enumerate(rows):
                groups.setdefault(key(row), []).append(i)
            order = [g for g in SPLIT_GROUPS if g in groups] if facet == "split" else sorted(groups)
            result[facet] = {g: scores([predicted[i] for i in groups[g]], [truth[i] for i in groups[g]]) for g in order}
        return LabelledScores(all=scores(predicted, truth), **result)

    return {
        "rows": len(rows),
        "ruled_out": sum(truth),
        "labels": {label: sum(r.label == label for r in rows) for label in sorted({r.label for r in rows})},
        "rows_per_split": {g: sum(split_group(r) == g for r in rows) for g in SPLIT_GROUPS},
        "scores": {name: scored(v) for name, v in verdicts.items()},
        "correct": {name: [p == t for p, t in zip(v, truth, strict=True)] for name, v in verdicts.items()},
        "errors": _errors(rows, verdicts.get("rules")),
        "rules_before": RULES_BEFORE,
    }


def _errors(rows: Sequence[LabelledSentence], predicted: list[bool] | None) -> list[LabelledError]:
    """The rules' wrong verdicts on train + dev rows (test rows are never listed)."""
    if predicted is None:
        return []
    wrong = [(r, p) for r, p in zip(rows, predicted, strict=True) if p != r.ruled_out and split_group(r) != "test"]
    return [
        LabelledError(
            error="false positive" if p else "false negative",
            gold=r.label,
            kind=r.kind,
            source=r.source,
            concept=r.concept,
            where=r.sentence[:240] if r.source in _SHIPPABLE else f"report {r.report_id} ({r.field})",
        )
        for r, p in wrong[:_ERRORS_SHOWN]
    ]


def render_labelled(part: LabelledPart, format_p: Callable[[float], str]) -> list[str]:
    """The Markdown section of dataset (c)."""
    labels = ", ".join(f"{n} {label}" for label, n in part.labels.items())
    per_split = ", ".join(f"{n} {g}" for g, n in part.rows_per_split.items())
    lines = [
        f"## (c) Hand-labelled real report sentences: {part.rows} (sentence, concept) rows ({labels}; {per_split})",
        "",
        "Positive class: ruled out. The rules were developed on train + dev rows only; test rows were scored once. "
        "The acceptance figure is all rows.",
        "",
        "| detector | rows | P (ruled out) | R (ruled out) | F1 | TP | FP | FN | McNemar vs rules (all rows) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, s in part.scores.items():
        test = part.vs_rules.get(name)
        versus = (
            f"p {format_p(test.p)} ({test.only_rules_right} only rules right, {test.only_this_right} only this right)"
            if test
            else "—"
        )
        for group, row in (("all", s.all), *s.split.items()):
            lines.append(
                f"| {name} | {group} | {row.precision:.3f} | {row.recall:.3f} | {row.f1:.3f} | "
                f"{row.true_positive} | {row.false_positive} | {row.false_negative} | "
                f"{versus if group == 'all' else ''} |"
            )
    for group, before in part.rules_before.items():
        lines.append(
            f"| rules before (5d727ae) | {group} | {before.precision:.3f} | {before.recall:.3f} | | "
            f"{before.true_positive} | {before.false_positive} | {before.false_negative} | |"
        )
    for facet in ("source", "kind", "form"):
        names = list(part.scores)
        lines += [
            "",
            f"Per {facet} (P / R / accuracy; FP, FN):",
            "",
            f"| {facet} | rows | " + " | ".join(names) + " |",
            "|---|---:|" + "---|" * len(names),
        ]
        for value in getattr(part.scores[names[0]], facet):
            cells = [getattr(part.scores[n], facet)[value] for n in names]
            lines.append(
                f"| {value} | {cells[0].n} | "
                + " | ".join(
                    f"{c.precision:.2f} / {c.recall:.2f} / {c.accuracy:.2f}; {c.false_positive}, {c.false_negative}"
                    for c in cells
                )
                + " |"
            )
    lines += ["", "Rules' errors on train + dev rows (sentence shown for MTSamples only, licences):", ""]
    lines += [f"- {e.error} [{e.gold}, {e.kind}, {e.source}] `{e.concept}`: {e.where}" for e in part.errors] or [
        "- none"
    ]
    return [*lines, ""]
