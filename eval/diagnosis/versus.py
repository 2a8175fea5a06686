"""One condition of one diagnosis results file against one of another, on the cases both answered: top-1 of each,
the difference, McNemar's p and the discordant pairs. Why: the new default is compared with the committed answers
of the configuration it replaces (their cache and results file), which a new run would not reproduce (its rules
changed).

    python -m eval.diagnosis.versus eval/results/diagnosis_evidence.json "evidence:...[...]" \
        eval/results/diagnosis_evidence48.json "evidence:...[...]"
"""

from __future__ import annotations

import argparse
from pathlib import Path

from eval.common.stats import format_p, mcnemar
from eval.diagnosis.results import DiagnosisResults


def compare(a_path: Path, a: str, b_path: Path, b: str) -> dict:
    """Top-1 of `a` and `b` on their shared cases, and McNemar's test between them."""
    a_cases = {v.case_id: v.correct for v in DiagnosisResults.read(a_path).cases[a]}
    b_cases = {v.case_id: v.correct for v in DiagnosisResults.read(b_path).cases[b]}
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.diagnosis.versus", description=__doc__)
    parser.add_argument("a_results", type=Path)
    parser.add_argument("a")
    parser.add_argument("b_results", type=Path)
    parser.add_argument("b")
    args = parser.parse_args(argv)
    print(compare(args.a_results, args.a, args.b_results, args.b))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
