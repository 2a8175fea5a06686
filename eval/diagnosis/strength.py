"""Calibration of the stated evidence strength: how often answers are right at each strength the answer states.

    python -m eval.diagnosis.strength --condition "evidence:..." --save-rows /tmp/rows.json --split dev --choose
    python -m eval.diagnosis.strength --condition "evidence:..." --rows /tmp/rows.json   # all cases: the table

Each case is answered by the product's pipeline for the evidence condition (no model, fast) and graded as the
benchmark grades it; its `Answer.strength` (assistant/rag/strength.py) says at which strength it was stated.
`--choose` applies the rules of docs/decisions/2026-11-28-evidence-strength.md (weak) and 2026-11-29-strong-evidence.md
(strong: share, first voting report, lead over the runner-up) and prints the cut points; otherwise the table by level
is written with a plot.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from eval.common.plots import accuracy_bars
from eval.common.shared_data import RESULTS, eval_home, write_results
from eval.common.stats import wilson
from eval.diagnosis.results import StrengthCalibration

MIN_CASES = 15
STRONG_CANDIDATES = [round(0.30 + 0.05 * i, 2) for i in range(11)]
LEAD_CANDIDATES = [0.0, 0.1, 0.2, 0.3]
WEAK_CANDIDATES = [round(0.05 * i, 2) for i in range(1, 7)]


def measured(condition: str, cases_path: Path, split: str | None) -> list[dict]:
    """(case id, source, correct, strength level, measure, whether the first voting report affirms the answer, its
    lead over the runner-up) of every case, answered by the product's pipeline for the
    evidence `condition` and graded as the benchmark grades (eval.diagnosis.grading, ICD criterion off)."""
    from assistant.rag.question import stated_diagnosis
    from assistant.rag.strength import measures
    from eval.diagnosis.benchmark import condition_pipeline
    from eval.diagnosis.grading import Grader
    from retriever.reports.splits import split_of

    cases, _, pipeline = condition_pipeline(condition, cases_path, split)  # the benchmark's own builder
    grader = Grader.default(icd=False)
    rows = []
    for case in cases:
        answer = pipeline.invoke(case.findings)
        measure, first_affirms, lead = measures(answer.evidence, answer.diagnosis or "")
        stated = stated_diagnosis(answer.diagnosis, answer.degraded_kind)
        rows.append(
            {
                "case_id": case.id,
                "source": case.source,
                "split": split_of(case.id),
                "correct": grader.grade(stated, case.references()).correct,
                "level": answer.strength.get("level", "none"),
                "measure": round(measure, 4),
                "first_affirms": first_affirms,
                "lead": lead,
                "unaffirmed": bool(answer.strength.get("unaffirmed")),
            }
        )
    return rows


def choose(rows: list[dict]) -> dict[str, float | None]:
    """The cut points by the decision records' rules (None when no candidate value meets them): strong, the (share,
    lead) pair that calls the most answers strong, ties to the larger share then lead."""
    from assistant.rag.strength import level_of

    def share(selected: list[dict]) -> float:
        return sum(r["correct"] for r in selected) / len(selected)

    strong = max(
        (
            (len(sel), t, m)
            for t in STRONG_CANDIDATES
            for m in LEAD_CANDIDATES
            if len(sel := [r for r in rows if level_of(r["measure"], r["first_affirms"], r["lead"], t, m) == "strong"])
            >= MIN_CASES
            and share(sel) >= 0.80
        ),
        default=None,
    )
    weak = next(
        (
            t
            for t in reversed(WEAK_CANDIDATES)
            if (strong is None or t < strong[1])
            and len(sel := [r for r in rows if r["measure"] < t]) >= MIN_CASES
            and share(sel) <= 0.30
        ),
        None,
    )
    return {"strong_from": strong and strong[1], "strong_lead": strong and strong[2], "weak_below": weak}


def _level(row: dict) -> str:
    from assistant.rag.strength import level_of

    return level_of(row["measure"], row["first_affirms"], row["lead"])


def table(rows: list[dict]) -> dict[str, dict]:
    """Accuracy by stated level (at today's cut points, from each answer's measure, first voting report and lead),
    strongest first."""
    bins = {
        level: [r for r in rows if (_level(r) if r["level"] != "none" else "none") == level]
        for level in ("strong", "moderate", "weak", "none")
    }
    return {level: _accuracy(selected) for level, selected in bins.items() if selected}


def by_statement(rows: list[dict]) -> dict[str, dict]:
    """Accuracy of the answers that state that no similar report affirms what the question describes, and of the
    other answers with a diagnosis (docs/decisions/2026-11-29-what-no-similar-report-affirms.md)."""
    bins = {
        key: [r for r in rows if r["level"] != "none" and r.get("unaffirmed", False) == wanted]
        for key, wanted in (("stated", True), ("not stated", False))
    }
    return {key: _accuracy(selected) for key, selected in bins.items() if selected}


def _accuracy(selected: list[dict]) -> dict:
    """How many of `selected` answers are right, with a Wilson 95% interval: one cell of a table."""
    k = sum(r["correct"] for r in selected)
    ci = wilson(k, len(selected))
    return {"n": len(selected), "correct": k, "accuracy": k / len(selected), "ci95": [ci.low, ci.high]}


def render(payload: dict) -> str:
    lines = [
        f"# Evidence strength calibration: {payload['name']}",
        "",
        f"Condition `{payload['condition']}`, {payload['n']} cases; written by `{payload['command']}`. Cut points "
        f"(assistant/rag/strength.py): strong from a share of {payload['strong_from']} when the first voting report "
        f"affirms it and it leads the runner-up by {payload['strong_lead']}; weak below {payload['weak_below']}.",
        "",
        "| stated strength | cases | right | top-1 % [95% CI] |",
        "|---|---:|---:|---|",
    ]
    lines += _rows(payload["levels"])
    if payload.get("levels_test"):
        lines += [
            "",
            "The test cases alone (the cut points were chosen on the dev cases, which the table above includes):",
            "",
            "| stated strength | cases | right | top-1 % [95% CI] |",
            "|---|---:|---:|---|",
            *_rows(payload["levels_test"]),
        ]
    if payload.get("unaffirmed"):
        lines += [
            "",
            'Answers whose strength line adds "none of the similar reports affirms X, which the question describes" '
            "(the question's findings affirm diagnoses or findings that no voting report affirms, in its conclusion "
            "or its findings), beside the other answers with a diagnosis:",
            "",
            "| statement | cases | right | top-1 % [95% CI] |",
            "|---|---:|---:|---|",
            *_rows(payload["unaffirmed"]),
        ]
    lines += ["", f"![accuracy by stated strength]({payload['plot']})", ""]
    return "\n".join(lines)


def _rows(levels: dict[str, dict]) -> list[str]:
    return [
        f"| {level} | {cell['n']} | {cell['correct']} | {100 * cell['accuracy']:.1f} [{100 * cell['ci95'][0]:.1f}, "
        f"{100 * cell['ci95'][1]:.1f}] |"
        for level, cell in levels.items()
    ]


def main(argv: list[str] | None = None) -> int:
    import sys

    from assistant.rag.strength import STRONG_FROM, STRONG_LEAD, WEAK_BELOW

    parser = argparse.ArgumentParser(prog="python -m eval.diagnosis.strength", description=__doc__)
    parser.add_argument("--condition", required=True, help="an evidence condition (eval.diagnosis.conditions)")
    parser.add_argument("--cases", type=Path, default=eval_home() / "cases" / "shared_heldout.jsonl")
    parser.add_argument("--split", choices=("dev", "test"), default=None)
    parser.add_argument("--choose", action="store_true", help="print the cut points the rule chooses")
    parser.add_argument("--name", default="diagnosis_strength")
    parser.add_argument("--rows", type=Path, default=None, help="answers measured before (JSON), else measured now")
    parser.add_argument("--save-rows", type=Path, default=None, help="keep the measured answers (outside the repo)")
    args = parser.parse_args(argv)
    if args.rows is not None:
        rows = [r for r in json.loads(args.rows.read_text()) if args.split is None or r["split"] == args.split]
    else:
        rows = measured(args.condition, args.cases, args.split)
    if args.save_rows is not None:
        args.save_rows.write_text(json.dumps(rows))
    if args.choose:
        print(choose(rows), table(rows))
        return 0
    levels = table(rows)
    plot = accuracy_bars(
        {f"{level} (n={c['n']})": (c["accuracy"], *c["ci95"]) for level, c in levels.items()},
        f"top-1 accuracy by stated evidence strength ({len(rows)} cases)",
        RESULTS / f"{args.name}_accuracy.png",
    )
    payload = {
        "name": args.name,
        "condition": args.condition,
        "command": " ".join(["python -m eval.diagnosis.strength", *(argv if argv is not None else sys.argv[1:])]),
        "n": len(rows),
        "strong_from": STRONG_FROM,
        "strong_lead": STRONG_LEAD,
        "weak_below": WEAK_BELOW,
        "levels": levels,
        "levels_test": table([r for r in rows if r["split"] == "test"]) if args.split is None else {},
        "unaffirmed": by_statement(rows) if all("unaffirmed" in r for r in rows) else None,
        "plot": plot.name,
        "cases": rows,
    }
    record = StrengthCalibration.from_json(payload)  # checked against the record before it is written
    print(write_results(RESULTS / args.name, record, lambda r: render(r.to_json())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
