"""Do two runs of the diagnosis benchmark that differ only in how llama.cpp was compiled give the same answers?

    python -m eval.diagnosis.build_agreement eval/results/diagnosis.json eval/results/diagnosis_native_build.json \
        --labels portable,native --name diagnosis_build_agreement

Greedy decoding is deterministic for one build, but kernels for other SIMD instructions round differently, and
where two tokens are nearly tied the answers part. So a committed accuracy is re-measured with the other build on
the same cases, prompts and conditions: per condition both accuracies with Wilson intervals, the paired McNemar test
between the builds, and the share of cases whose answer text is identical; and, where both runs have the no-retrieval
condition, the retrieval gain under each build. Writes eval/results/<name>.{json,md}.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from eval.common.shared_data import RESULTS, add_out_option, write_results
from eval.common.stats import format_p, mcnemar, share
from eval.diagnosis.results import BuildAgreement, BuildAgreementRow, Counted, DiagnosisResults, Verdict

BASELINE = "none"


def _by_case(run: DiagnosisResults, condition: str) -> dict[str, Verdict]:
    return {case.case_id: case for case in run.cases[condition]}


def compare(a: DiagnosisResults, b: DiagnosisResults, labels: tuple[str, str], command: str) -> BuildAgreement:
    """Per condition both runs share: accuracy of each, McNemar between them, identical answers (on the cases both
    answered); plus the gain over no retrieval under each build."""
    conditions = [c for c in a.cases if c in b.cases]
    if not conditions:
        raise ValueError("the two runs share no condition")
    rows: dict[str, BuildAgreementRow] = {}
    for condition in conditions:
        first, second = _by_case(a, condition), _by_case(b, condition)
        cases = sorted(set(first) & set(second))
        right = [[first[c].correct for c in cases], [second[c].correct for c in cases]]
        same = [_answer(first[c]) == _answer(second[c]) for c in cases]
        test = mcnemar(*right)
        rows[condition] = BuildAgreementRow(
            cases=len(cases),
            builds={label: _counted(r) for label, r in zip(labels, right, strict=True)},
            mcnemar_p=test.p,
            only_first_right=test.b or 0,
            only_second_right=test.c or 0,
            identical_answers=_counted(same),
        )
    gains = {}
    if BASELINE in rows:
        for condition in (c for c in rows if c != BASELINE):
            gains[condition] = {
                label: round(rows[condition].builds[label].value - rows[BASELINE].builds[label].value, 4)
                for label in labels
            }
    return BuildAgreement(
        labels=list(labels),
        model_id=a.model_id,
        conditions=rows,
        gain_over_none=gains,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        command=command,
    )


def _answer(verdict: Verdict) -> str:
    return (verdict.prediction or "").strip().lower()


def _counted(flags: list[bool]) -> Counted:
    """eval.common.stats.share with the count beside it (the report gives discordant counts)."""
    return Counted.from_json(share(flags) | {"k": sum(flags)})


def render(result: BuildAgreement) -> str:
    first, second = result.labels
    lines = [f"# Diagnosis answers by llama.cpp build: {first} vs {second}", "",
             f"Run {result.created} (`{result.command}`). Model `{result.model_id}`; same cases, prompts, "
             "conditions and retrieval; only the compiled kernels differ. Accuracy in % [95% Wilson CI]; McNemar "
             "between the builds on the same cases.", "",
             f"| condition | cases | {first} | {second} | only {first} right | only {second} right | McNemar p | "
             "identical answers |", "|---|---:|---|---|---:|---:|---:|---:|"]  # fmt: skip
    for condition, row in result.conditions.items():
        builds = [row.builds[label] for label in (first, second)]
        cells = [f"{100 * c.value:.1f} [{100 * c.ci95[0]:.1f}, {100 * c.ci95[1]:.1f}]" for c in builds]
        lines.append(f"| {condition} | {row.cases} | {cells[0]} | {cells[1]} | {row.only_first_right} | "
                     f"{row.only_second_right} | {format_p(row.mcnemar_p)} | "
                     f"{100 * row.identical_answers.value:.1f}% |")  # fmt: skip
    if result.gain_over_none:
        lines += ["", "Gain over no retrieval, points:", ""]
        lines += [f"- {condition}: {first} {100 * gain[first]:+.1f}, {second} {100 * gain[second]:+.1f}"
                  for condition, gain in result.gain_over_none.items()]  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first", type=Path, help="a diagnosis result file (eval.diagnosis.benchmark's JSON)")
    parser.add_argument("second", type=Path, help="the same benchmark run with the other build")
    parser.add_argument("--labels", default="first,second", help="names of the two builds, comma-separated")
    parser.add_argument("--name", default="diagnosis_build_agreement", help="stem of the result files")
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    labels = tuple(part.strip() for part in args.labels.split(","))
    if len(labels) != 2 or labels[0] == labels[1]:
        parser.error("--labels takes two different names, e.g. portable,native")
    command = " ".join(["python -m eval.diagnosis.build_agreement", *(argv if argv is not None else sys.argv[1:])])
    result = compare(DiagnosisResults.read(args.first), DiagnosisResults.read(args.second), labels, command)
    print(write_results(args.out / args.name, result, render))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
