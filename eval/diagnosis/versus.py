"""One condition of one diagnosis results file against one of another, on the cases both answered: top-1 of each,
the difference, McNemar's p and the discordant pairs. Why: the new default is compared with the committed answers
of the configuration it replaces (their cache and results file), which a new run would not reproduce (its rules
changed). With `--cases`, both sides' stored answers are graded again by today's grader against that cases file,
so a grader fix made since counts alike on both sides.

    python -m eval.diagnosis.versus eval/results/diagnosis_evidence.json "evidence:...[...]" \
        eval/results/diagnosis_evidence48.json "evidence:...[...]"
"""

from __future__ import annotations

import argparse
from pathlib import Path

from eval.common.stats import format_p, mcnemar
from eval.diagnosis.results import DiagnosisResults


def compare(a_path: Path, a: str, b_path: Path, b: str, cases: Path | None = None) -> dict:
    """Top-1 of `a` and `b` on their shared cases, and McNemar's test between them (`cases`: graded again)."""
    a_cases, b_cases = _verdicts(a_path, a, cases), _verdicts(b_path, b, cases)
    shared = sorted(a_cases.keys() & b_cases.keys())
    test = mcnemar([a_cases[c] for c in shared], [b_cases[c] for c in shared])
    a_top, b_top = (sum(d[c] for c in shared) / len(shared) for d in (a_cases, b_cases))
    return {
        "n": len(shared),
        "a": a,
        "b": b,
        "a_top1": a_top,
        "b_top1": b_top,
        "difference_points": 100 * (b_top - a_top),
        "only_a": sum(a_cases[c] and not b_cases[c] for c in shared),
        "only_b": sum(b_cases[c] and not a_cases[c] for c in shared),
        "p": test.p,
        "p_text": format_p(test.p),
    }


def _verdicts(path: Path, condition: str, cases: Path | None) -> dict[str, bool]:
    """Case id -> correct, as stored, or graded again by today's grader against `cases` (only the cases it holds)."""
    rows = DiagnosisResults.read(path).cases[condition]
    if cases is None:
        return {v.case_id: v.correct for v in rows}
    from eval.diagnosis.cases import read_cases
    from eval.diagnosis.grading import Grader

    references = {c.id: c.references() for c in read_cases(cases)}
    grader = Grader.default(icd=False)
    return {
        v.case_id: grader.grade(v.prediction, references[v.case_id]).correct for v in rows if v.case_id in references
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.diagnosis.versus", description=__doc__)
    parser.add_argument("a_results", type=Path)
    parser.add_argument("a")
    parser.add_argument("b_results", type=Path)
    parser.add_argument("b")
    parser.add_argument("--cases", type=Path, help="grade both sides' stored answers again against this cases file")
    args = parser.parse_args(argv)
    print(compare(args.a_results, args.a, args.b_results, args.b, args.cases))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
