"""Agreement of the grader with hand judgement: eval/datasets/grader_validation.jsonl -> eval/results/.

    python -m eval.diagnosis.grader_validation            # all criteria, ICD-10-CM included
    python -m eval.diagnosis.grader_validation --icd off

The labelled pairs (prediction, reference, correct?) were written and judged by hand for this project: would a
radiologist marking a resident's answer accept the prediction as the reference diagnosis? Reports accuracy,
Cohen's kappa and the confusion counts per criterion and for the overall verdict.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from eval.common.shared_data import DATASETS, RESULTS, add_out_option, write_results
from eval.common.stats import cohen_kappa, wilson
from eval.diagnosis.grading import Grader
from eval.diagnosis.results import Agreement, Disagreement, GraderValidation

VALIDATION = DATASETS / "grader_validation.jsonl"
COMMAND = "python -m eval.diagnosis.grader_validation"


def agreement(verdicts: list[bool], truth: list[bool]) -> Agreement:
    """Accuracy (with Wilson CI), kappa and the confusion counts of one criterion against the labels."""
    pairs = list(zip(verdicts, truth, strict=True))
    agree = sum(v == t for v, t in pairs)
    ci = wilson(agree, len(pairs))
    return Agreement(
        accuracy=round(ci.value, 4),
        ci95=[round(ci.low, 4), round(ci.high, 4)],
        kappa=round(cohen_kappa(verdicts, truth), 4),
        true_positive=sum(v and t for v, t in pairs),
        false_positive=sum(v and not t for v, t in pairs),
        false_negative=sum(t and not v for v, t in pairs),
        true_negative=sum(not v and not t for v, t in pairs),
    )


def render(results: GraderValidation) -> str:
    """The Markdown report; files written before the command and the pairs file were recorded name the defaults."""
    lines = [
        "# Grader validation",
        "",
        f"{results.pairs} hand-labelled (prediction, reference, correct?) pairs, {results.labelled_correct} labelled "
        f"correct (`{results.pairs_file or VALIDATION.name}`). Written by `{results.command or COMMAND}`.",
        "",
        "Caveat: the pairs were labelled by the engineer who wrote the grader, and the synonym and abbreviation "
        "tables were extended after a first pass over these same pairs (first pass, text criteria: accuracy "
        "0.822, kappa 0.644). The agreement below is therefore optimistic; an independently labelled set "
        "(ideally by a radiologist) is needed for an unbiased estimate.",
        "",
        "| criterion | accuracy [95% CI] | Cohen's kappa | TP | FP | FN | TN |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, a in [*results.criteria.items(), ("verdict (exact, lexical or expanded)", results.overall)]:
        lines.append(
            f"| {name} | {100 * a.accuracy:.1f} [{100 * a.ci95[0]:.1f}, {100 * a.ci95[1]:.1f}] | "
            f"{a.kappa:.3f} | {a.true_positive} | {a.false_positive} | {a.false_negative} | "
            f"{a.true_negative} |"
        )
    lines += [
        "",
        "## Disagreements",
        "| prediction | reference | labelled | grader | matched by |",
        "|---|---|---|---|---|",
    ]
    for d in results.disagreements:
        lines.append(
            f"| {d.prediction} | {d.reference} | {d.labelled} | {d.grader} | {', '.join(d.matched_by) or '-'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=Path, default=VALIDATION)
    parser.add_argument("--icd", choices=("on", "off"), default="on")
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.pairs.read_text(encoding="utf-8").splitlines() if line.strip()]
    grader = Grader.default(icd=args.icd == "on")
    grades = [grader.grade(r["prediction"], [r["reference"]]) for r in rows]
    truth = [bool(r["correct"]) for r in rows]
    results = GraderValidation(
        pairs=len(rows),
        labelled_correct=sum(truth),
        criteria={c: agreement([g.criteria[c] for g in grades], truth) for c in grader.criteria},
        overall=agreement([g.correct for g in grades], truth),
        disagreements=[
            Disagreement(r["prediction"], r["reference"], labelled=t, grader=g.correct, matched_by=sorted(g.matched))
            for r, g, t in zip(rows, grades, truth, strict=True)
            if g.correct != t
        ],
        command=f"{COMMAND} --icd {args.icd}",
        pairs_file=args.pairs.name,
    )
    write_results(args.out / "grader_validation", results, render)
    overall = results.overall
    print(
        f"grader vs hand labels: accuracy {overall.accuracy:.3f}, kappa {overall.kappa:.3f} "
        f"({len(rows)} pairs); wrote {args.out / 'grader_validation.md'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
