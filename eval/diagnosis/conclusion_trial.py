"""What the evidence answer does with what the question's own findings conclude ("... consistent with Bochdalek's
hernia"): today's ranking beside the variants of docs/decisions/2026-11-29-question-concludes.md (issue 48).

    python -m eval.diagnosis.conclusion_trial --split dev --name question_concludes_dev

Why a trial of its own: a variant may add a candidate no similar report affirms, which a re-ranking of the evidence's
candidates (eval.diagnosis.evidence_ranking) cannot show. Each variant runs the product's pipeline (no model) with
its parameters (assistant/rag/evidence.py, CONCLUSION_BONUS and CONCLUSION_JOINS) and is graded as the benchmark
grades: the stated diagnosis at top-1, the first five of the answer, how many answers are strong and right, and how
many answers are a concept the question concludes (an answer that only restates the findings' conclusion).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from eval.common.shared_data import RESULTS, eval_home, write_results
from eval.diagnosis.results import ConclusionTrialResults

CONDITION = "evidence:hybrid-weighted:radsearch[report,k=40,weighting=similarity:0.5]"
#: variant -> (CONCLUSION_BONUS, CONCLUSION_JOINS); "today" is the ranking before the trial.
VARIANTS: dict[str, tuple[float, bool]] = {
    "today": (0.0, False),
    **{f"A({b:g})": (b, False) for b in (0.1, 0.2, 0.3)},
    **{f"C({b:g})": (b, True) for b in (0.1, 0.2, 0.3)},
}


def measure(condition: str, cases_path: Path, split: str | None) -> tuple[int, dict[str, dict[str, int]]]:
    """The number of cases and each variant's counts (ConclusionTrialResults.variants)."""
    from assistant.rag import evidence
    from assistant.rag.question import read_question, stated_diagnosis
    from eval.diagnosis.benchmark import condition_pipeline
    from eval.diagnosis.grading import Grader

    cases, _, pipeline = condition_pipeline(condition, cases_path, split)
    grader = Grader.default(icd=False)
    saved = evidence.CONCLUSION_BONUS, evidence.CONCLUSION_JOINS
    out: dict[str, dict[str, int]] = {}
    try:
        for variant, (bonus, joins) in VARIANTS.items():
            evidence.CONCLUSION_BONUS, evidence.CONCLUSION_JOINS = bonus, joins
            counts = dict.fromkeys(("top1", "first_five", "strong", "strong_right", "concluded_answers"), 0)
            for case in cases:
                answer = pipeline.invoke(case.findings)
                first = stated_diagnosis(answer.diagnosis, answer.degraded_kind)
                listed = list(dict.fromkeys(d for d in [first, *(answer.differential or [])] if d))[:5]
                grades = [grader.grade(name, case.references()).correct for name in listed]
                concluded = {c.name for c in read_question(case.findings).concluded}
                strong = (answer.strength or {}).get("level") == "strong"
                counts["top1"] += bool(grades and grades[0])
                counts["first_five"] += any(grades)
                counts["strong"] += strong
                counts["strong_right"] += strong and bool(grades and grades[0])
                counts["concluded_answers"] += (answer.diagnosis or "") in concluded
            out[variant] = counts
            print(variant, counts, file=sys.stderr)
    finally:
        evidence.CONCLUSION_BONUS, evidence.CONCLUSION_JOINS = saved
    return len(cases), out


def render(result: ConclusionTrialResults) -> str:
    n = result.cases
    lines = [
        f"# What the question concludes: the evidence answer's variants ({result.split}, {n} cases)",
        "",
        f"Condition `{result.condition}`; written by `{result.command}`. Rule and choice:",
        "docs/decisions/2026-11-29-question-concludes.md.",
        "",
        "| variant | top-1 | first five | strong (right) | answers a concluded concept |",
        "|---|---|---|---|---|",
    ]
    for name, c in result.variants.items():
        lines.append(
            f"| {name} | {c['top1']}/{n} ({100 * c['top1'] / n:.1f}%) | {c['first_five']}/{n} | "
            f"{c['strong']} ({c['strong_right']}) | {c['concluded_answers']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--condition", default=CONDITION)
    parser.add_argument("--cases", type=Path, default=eval_home() / "cases" / "shared_heldout.jsonl")
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name", default="question_concludes_dev")
    args = parser.parse_args(argv)
    n, variants = measure(args.condition, args.cases, args.split)
    command = " ".join(["python -m eval.diagnosis.conclusion_trial", *(argv if argv is not None else sys.argv[1:])])
    print(
        write_results(
            args.out / args.name, ConclusionTrialResults(n, args.condition, args.split, command, variants), render
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
