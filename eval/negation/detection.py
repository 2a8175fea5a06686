"""Negation detection chosen by measurement: the project's NegEx rules against medspaCy's ConText, and both combined.

    python -m eval.negation.detection                       # writes eval/results/negation_detection.{json,md}

Detectors: `rules` (retriever.negation.rules.is_negated), `context` (medspaCy's ConText with its default English rules,
offline: a blank spaCy pipeline, no model download), `either` (negated if either says so) and `both` (only if both
do). ConText needs the optional `negation` extra; without it only the rules are measured, and the report says so.

Datasets (../shared/data; the command skips cleanly when it is absent):
- (a) the NegEx annotated set: concept + sentence + Affirmed/Negated; precision, recall and F1 of "negated", and
  accuracy;
- (b) NegBio's Open-i labels: for each report and each of the 14 findings, the finding's terms
  (eval.negation.finding_mentions) are looked up in findings + impression; a finding mentioned at least once not negated
  is "affirmed", mentioned only negated is "negated-only", and both are compared with NegBio's positive (1) / negative
  (0) label. NegBio is itself a rule system (with a dependency parser), so (b) is agreement with a strong reference, not
  truth.
- (c) hand-labelled real report sentences (eval.negation.sentences, eval.negation.labelled): precision, recall and
  F1 of "ruled out" over all rows (the acceptance figure), per split (train + dev, where the rules were developed;
  test, scored once), source, kind and form (the list and colon forms of issue 50), and the rules' train + dev
  errors. Skipped, and said so, when the labelled file is absent.
Rows where the concept is not mentioned are left out of (a) and (b) (a detector has nothing to judge); their counts
are kept.
"""

from __future__ import annotations

import argparse
import csv
import platform
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypeVar

from eval.common.shared_data import RESULTS, SHARED_DATA, add_out_option, write_results
from eval.common.stats import format_p, mcnemar
from eval.diagnosis.grader_validation import agreement
from eval.negation.finding_mentions import Detector, Status, status_of
from eval.negation.labelled import EARLIER, evaluate_labelled, render_labelled
from eval.negation.results import (
    Detection,
    DetectionScores,
    Disagreement,
    LabelledPart,
    LeftOut,
    NegexPart,
    OpeniPart,
    OpeniScores,
    PairedTest,
)
from eval.negation.sentences import SENTENCES_FILE, load_labelled_sentences
from retriever.negation.inflection import concept_spans
from retriever.negation.pairs import mentions, term_spans
from retriever.negation.rules import is_negated
from retriever.reports.findings import OPENI_FINDINGS

DETECTORS = ("rules", "context", "either", "both")
#: A detector's scores on one dataset (any of the records of eval.negation.results).
Scored = TypeVar("Scored")
#: How the combined detectors merge the two verdicts.
COMBINE: dict[str, Callable[[Sequence[bool]], bool]] = {"either": any, "both": all}
NEGEX_FILE = Path("negex") / "negex_Annotations-1-120.txt"
OPENI_REPORTS = Path("openi") / "indiana_reports.csv"
OPENI_LABELS = Path("openi") / "negbio_labels14.csv"


class DetectorUnavailable(RuntimeError):
    """A detector's library is not installed; the message says how to get it."""


class ConText:
    """medspaCy's ConText on a concept span we mark ourselves (its target matcher is not used), so both detectors
    judge exactly the same mention. Verdicts are cached: the combined detectors ask again."""

    def __init__(self) -> None:
        try:
            import medspacy
            from loguru import logger
        except ModuleNotFoundError as exc:
            raise DetectorUnavailable(
                f"ConText needs medspaCy ({exc.name} is missing): install the optional extra, "
                "see pyproject.toml [project.optional-dependencies] negation"
            ) from exc
        logger.disable("PyRuSH")  # its sentence splitter logs every token at DEBUG
        self._nlp = medspacy.load()  # blank English pipeline + PyRuSH + target matcher + ConText: all offline
        self._sentences = self._nlp.get_pipe("medspacy_pyrush")
        self._context = self._nlp.get_pipe("medspacy_context")
        self._verdicts: dict[tuple[str, str], bool] = {}

    def __call__(self, text: str, concept: str) -> bool:
        key = (text, concept)
        if key not in self._verdicts:
            spans = concept_spans(text, concept)
            if not spans:
                raise ValueError(f"concept {concept!r} not in text")
            doc = self._sentences(self._nlp.make_doc(text))
            doc.ents = [doc.char_span(*spans[0], label="CONCEPT", alignment_mode="expand")]
            self._verdicts[key] = bool(self._context(doc).ents[0]._.is_negated)
        return self._verdicts[key]


@cache
def _context() -> ConText:
    return ConText()


def load_detector(name: str) -> Detector:
    """A detector by name (one of DETECTORS); DetectorUnavailable when it needs medspaCy and that is missing."""
    if name == "rules":
        return is_negated
    if name not in DETECTORS:
        raise ValueError(f"unknown detector {name!r}; choose one of {', '.join(DETECTORS)}")
    context = _context()
    if name == "context":
        return context
    combine = COMBINE[name]
    return lambda text, concept: combine([is_negated(text, concept), context(text, concept)])


def scores(predicted: Sequence[bool], truth: Sequence[bool]) -> DetectionScores:
    """Precision, recall and F1 of the positive class, with accuracy and the confusion counts."""
    result = agreement(list(predicted), list(truth))
    tp, fp, fn = result.true_positive, result.false_positive, result.false_negative
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return DetectionScores(
        **asdict(result), n=len(truth), precision=round(precision, 4), recall=round(recall, 4), f1=round(f1, 4)
    )


# ------------------------------------------------------------------------------------------------ (a) NegEx set
@dataclass(frozen=True)
class Annotated:
    """One NegEx row: the concept, its sentence, and the annotators' verdict."""

    sentence: str
    concept: str
    negated: bool


def negex_rows(path: Path) -> tuple[list[Annotated], int]:
    """Rows whose concept occurs in the sentence as whole words (whitespace normalized), and how many did not."""
    rows, missing = [], 0
    with path.open(encoding="utf-8", errors="replace") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            concept = " ".join(row["Concept"].split())
            sentence = " ".join(row["Sentence"].strip().strip('"').split())
            if concept and term_spans(sentence, concept):
                rows.append(Annotated(sentence, concept, row["Negation"].strip() == "Negated"))
            else:
                missing += 1
    return rows, missing


def evaluate_negex(rows: Sequence[Annotated], detectors: dict[str, Detector]) -> dict[str, Any]:
    """Scores of "negated" per detector, their verdicts (for paired tests) and the rules-vs-ConText disagreements."""
    truth = [r.negated for r in rows]
    verdicts = {name: [detect(r.sentence, r.concept) for r in rows] for name, detect in detectors.items()}
    return {
        "scores": {name: scores(v, truth) for name, v in verdicts.items()},
        "correct": {name: [p == t for p, t in zip(v, truth, strict=True)] for name, v in verdicts.items()},
        "disagreements": _disagreements(
            [(r.concept, r.sentence, "negated" if r.negated else "affirmed") for r in rows], verdicts, truth
        ),
    }


# ---------------------------------------------------------------------------------------- (b) NegBio's Open-i labels
@dataclass(frozen=True)
class LabelCase:
    """One (report, finding) pair whose text mentions the finding: its mentions and NegBio's label."""

    uid: str
    label: str
    positive: bool
    mentions: tuple[tuple[str, str], ...]


def openi_cases(data: Path) -> tuple[list[LabelCase], dict[str, int]]:
    """Mentioned (report, finding) pairs of every Open-i report with a NegBio row, and counts of what was left out."""
    with (data / OPENI_LABELS).open(encoding="utf-8") as handle:
        labels = {row["filename"].removeprefix("CXR"): row for row in csv.DictReader(handle)}
    cases: list[LabelCase] = []
    left_out = {"reports_without_labels": 0, "positive_not_mentioned": 0, "negative_not_mentioned": 0}
    with (data / OPENI_REPORTS).open(encoding="utf-8") as handle:
        for report in csv.DictReader(handle):
            row = labels.get(report["uid"])
            if row is None:
                left_out["reports_without_labels"] += 1
                continue
            text = "\n".join(report[k].strip() for k in ("findings", "impression") if report[k].strip())
            for finding in OPENI_FINDINGS:
                positive = row[finding.label] in ("1", "1.0")
                found = tuple(mentions(text, finding.terms))
                if found:
                    cases.append(LabelCase(report["uid"], finding.label, positive, found))
                else:
                    left_out["positive_not_mentioned" if positive else "negative_not_mentioned"] += 1
    return cases, left_out


def evaluate_openi(cases: Sequence[LabelCase], detectors: dict[str, Detector]) -> dict[str, Any]:
    """Per detector: precision/recall of "affirmed" against NegBio positives and of "negated-only" against NegBio
    negatives, among mentioned (report, finding) pairs."""
    truth = [c.positive for c in cases]
    statuses = {
        name: [status_of([detect(part, term) for part, term in c.mentions]) for c in cases]
        for name, detect in detectors.items()
    }
    affirmed = {name: [s == Status.AFFIRMED for s in v] for name, v in statuses.items()}
    return {
        "scores": {
            name: OpeniScores(
                affirmed=scores(affirmed[name], truth),
                negated_only=scores([not a for a in affirmed[name]], [not t for t in truth]),
            )
            for name in statuses
        },
        "correct": {name: [a == t for a, t in zip(v, truth, strict=True)] for name, v in affirmed.items()},
        "disagreements": _disagreements(
            [(c.label, " | ".join(p for p, _ in c.mentions), "positive" if c.positive else "negative") for c in cases],
            {name: [not a for a in v] for name, v in affirmed.items()},
            [not t for t in truth],
        ),
    }


def _disagreements(
    items: Sequence[tuple[str, str, str]], negated: dict[str, list[bool]], truth: Sequence[bool], limit: int = 8
) -> list[Disagreement]:
    """Examples where the rules and ConText disagree, half where each is right."""
    if "rules" not in negated or "context" not in negated:
        return []
    rows: dict[str, list[Disagreement]] = {"rules": [], "context": []}
    seen: set[tuple[str, str]] = set()
    for item, rule, ctx, gold in zip(items, negated["rules"], negated["context"], truth, strict=True):
        if rule != ctx and item[:2] not in seen:
            seen.add(item[:2])
            right = "rules" if rule == gold else "context"
            rows[right].append(Disagreement(concept=item[0], text=item[1][:300], gold=item[2], right=right))
    return rows["rules"][: limit // 2] + rows["context"][: limit // 2]


# ------------------------------------------------------------------------------------------------------- report
def best(table: dict[str, Scored], metric: Callable[[Scored], float]) -> str:
    """The detector with the highest `metric` (the first listed on a tie)."""
    return max(table, key=lambda name: metric(table[name]))


def paired_tests(correct: dict[str, list[bool]]) -> dict[str, PairedTest]:
    """McNemar of each other detector against the rules (the current product choice)."""
    if "rules" not in correct:
        return {}
    tests = {name: mcnemar(correct["rules"], v) for name, v in correct.items() if name != "rules"}
    return {name: PairedTest(t.p, only_rules_right=t.b or 0, only_this_right=t.c or 0) for name, t in tests.items()}


def _versus(test: PairedTest | None) -> str:
    if test is None:
        return "—"
    return f"p {format_p(test.p)} ({test.only_rules_right} only rules right, {test.only_this_right} only this right)"


def render(payload: Detection) -> str:
    """The Markdown report."""
    negex, openi = payload.negex, payload.openi
    lines = [
        "# Negation detection: project NegEx rules vs medspaCy ConText",
        "",
        f"Command: `{payload.command}` ({payload.created}; {payload.versions}).",
        "",
        f"## (a) NegEx annotated set: {negex.rows} (concept, sentence) rows "
        f"({negex.negated} negated; {negex.concept_not_found} left out, concept not found as whole words)",
        "",
        "| detector | precision (negated) | recall (negated) | F1 (negated) | accuracy | TP | FP | FN | TN | "
        "McNemar vs rules |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, s in negex.scores.items():
        lines.append(
            f"| {name}{' **best**' if name == negex.best else ''} | {s.precision:.3f} | {s.recall:.3f} | "
            f"{s.f1:.3f} | {s.accuracy:.3f} | {s.true_positive} | {s.false_positive} | "
            f"{s.false_negative} | {s.true_negative} | {_versus(negex.vs_rules.get(name))} |"
        )
    left = openi.left_out
    lines += [
        "",
        f"## (b) NegBio Open-i labels: {openi.cases} mentioned (report, finding) pairs "
        f"({openi.positive} NegBio-positive)",
        "",
        f"Left out (no term of the finding in findings + impression): {left.positive_not_mentioned} positive and "
        f"{left.negative_not_mentioned} negative pairs; {left.reports_without_labels} reports without a label "
        "row.",
        "",
        "| detector | P affirmed | R affirmed | F1 affirmed | P negated-only | R negated-only | F1 negated-only | "
        "accuracy | McNemar vs rules |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, s in openi.scores.items():
        a, n = s.affirmed, s.negated_only
        lines.append(
            f"| {name}{' **best**' if name == openi.best else ''} | {a.precision:.3f} | {a.recall:.3f} | "
            f"{a.f1:.3f} | {n.precision:.3f} | {n.recall:.3f} | {n.f1:.3f} | {a.accuracy:.3f} | "
            f"{_versus(openi.vs_rules.get(name))} |"
        )
    if payload.labelled:
        lines += ["", *render_labelled(payload.labelled, format_p)]
    elif payload.labelled_skipped:
        lines += ["", f"(c) hand-labelled sentences not measured: {payload.labelled_skipped}"]
    lines += ["", "## Verdict", "", payload.verdict, ""]
    for part, title in ((negex, "(a) NegEx"), (openi, "(b) Open-i")):
        if part.disagreements:
            lines += [f"Rules and ConText disagree, {title} (gold in brackets):", ""]
            lines += [f"- right: {d.right} [{d.gold}] `{d.concept}`: {d.text}" for d in part.disagreements]
            lines.append("")
    if payload.unavailable:
        lines += [f"Not measured: {payload.unavailable}", ""]
    return "\n".join(lines)


def verdict(negex: NegexPart, openi: OpeniPart) -> str:
    """Which detector to keep by F1 of the negated class, honest when the two datasets disagree."""
    a, b = negex.best, openi.best
    f1_a = ", ".join(f"{n} {s.f1:.3f}" for n, s in negex.scores.items())
    f1_b = ", ".join(f"{n} {s.negated_only.f1:.3f}" for n, s in openi.scores.items())
    if a == b:
        return f"`{a}` is best on both datasets (F1 negated, NegEx: {f1_a}; F1 negated-only, Open-i: {f1_b})."
    return (
        f"The datasets disagree: `{a}` is best on the NegEx set (mostly discharge summaries; F1 negated: {f1_a}) "
        f"and `{b}` on Open-i chest X-ray reports against NegBio (F1 negated-only: {f1_b}). Report search runs "
        "on radiology reports, so the Open-i result weighs more."
    )


def run(data: Path, names: Sequence[str]) -> Detection:
    """Both evaluations for the detectors that can be loaded."""
    detectors: dict[str, Detector] = {}
    unavailable = ""
    for name in names:
        try:
            detectors[name] = load_detector(name)
        except DetectorUnavailable as exc:
            unavailable = str(exc)
    rows, missing = negex_rows(data / NEGEX_FILE)
    negex = evaluate_negex(rows, detectors)
    cases, left_out = openi_cases(data)
    openi = evaluate_openi(cases, detectors)
    negex_part = NegexPart(
        rows=len(rows),
        negated=sum(r.negated for r in rows),
        concept_not_found=missing,
        scores=negex["scores"],
        best=best(negex["scores"], lambda s: s.f1),
        vs_rules=paired_tests(negex["correct"]),
        disagreements=negex["disagreements"],
    )
    openi_part = OpeniPart(
        cases=len(cases),
        positive=sum(c.positive for c in cases),
        left_out=LeftOut(**left_out),
        scores=openi["scores"],
        best=best(openi["scores"], lambda s: s.negated_only.f1),
        vs_rules=paired_tests(openi["correct"]),
        disagreements=openi["disagreements"],
    )
    labelled, labelled_skipped = _labelled(data, detectors)
    return Detection(
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        machine=f"{platform.machine()}, python {platform.python_version()}",
        versions=", ".join(f"{p} {_version(p)}" for p in ("medspacy", "spacy")),
        command="python -m eval.negation.detection"
        + (f" --detectors {','.join(names)}" if tuple(names) != DETECTORS else ""),
        negex=negex_part,
        openi=openi_part,
        labelled=labelled,
        labelled_skipped=labelled_skipped,
        verdict=verdict(negex_part, openi_part) + labelled_verdict(labelled),
        unavailable=unavailable,
    )


def _labelled(data: Path, detectors: dict[str, Detector]) -> tuple[LabelledPart | None, str]:
    """Dataset (c), or None and why it was skipped (no labelled file)."""
    if not SENTENCES_FILE.is_file():
        return None, f"{SENTENCES_FILE.name} is absent"
    result = evaluate_labelled(load_labelled_sentences(data), detectors, scores)
    correct = result.pop("correct")
    return LabelledPart(**result, best=best(result["scores"], lambda s: s.all.f1), vs_rules=paired_tests(correct)), ""


def labelled_verdict(labelled: LabelledPart | None) -> str:
    """The (c) sentence of the verdict: best by F1 of "ruled out" over all rows, and whether the rules reach the
    0.95 precision and recall asked of them, over all rows and per list or colon form."""
    if not labelled:
        return ""
    rules = labelled.scores.get("rules")
    reached = ""
    if rules:
        met = "met" if min(rules.all.precision, rules.all.recall) >= 0.95 else "not met"
        forms = {name: s for name, s in rules.form.items() if name != EARLIER}
        short = [name for name, s in forms.items() if min(s.precision, s.recall) < 0.95]
        reached = (
            f" The rules score precision {rules.all.precision:.3f} and recall {rules.all.recall:.3f} of "
            f'"ruled out" over all rows (target >= 0.95 each: {met}); per list or colon form, '
            + (f"below 0.95: {', '.join(short)}." if short else f"all {len(forms)} forms reach 0.95 or more.")
        )
    return f' On the hand-labelled real sentences (c), `{labelled.best}` is best by F1 of "ruled out".{reached}'


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--detectors", default=",".join(DETECTORS), help=f"comma-separated, of {', '.join(DETECTORS)}")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    add_out_option(parser, RESULTS / "negation_detection")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"skipped: shared data folder {args.data} is absent")
        return 0
    payload = run(args.data, [n.strip() for n in args.detectors.split(",") if n.strip()])
    print(write_results(args.out, payload, render, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
