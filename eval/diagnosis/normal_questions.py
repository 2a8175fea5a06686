"""How the question reader tells a normal study from an abnormal one, on real reports' findings.

Why: a question that describes nothing abnormal is answered "no abnormality described" (assistant/rag/question.py);
one read so wrongly gets a disease from the similar reports, and an abnormal one read so loses its answer. Every
usable report of the shared data (findings and impression) is a labelled question for free: its findings are the
question, and its impression says whether the study was normal: each of its items is normal to the rule the
benchmark's cases and the evidence use (retriever.reports.impression.positive_items) or a normal-study statement
to the benchmark's grader ("Unremarkable chest", "Thoracic CT examination within normal limits"). Reported per
source: of the normal studies, how many are read as purely negative (the higher the better); of the abnormal ones,
how many are (false "no abnormality" answers: the lower the better), with their report ids (no text: most sources
may not be redistributed). Rule and adoption: docs/decisions/2026-11-29-normal-studies.md. Beside them, the
reports whose findings are read as describing no finding at all ("hello", "N/A": answered "no finding described",
docs/decisions/2026-11-29-questions-without-findings.md): every report has findings, so each one so read is an error.

    python -m eval.diagnosis.normal_questions --split dev    # choose: eval/results/normal_questions_dev.*
    python -m eval.diagnosis.normal_questions --split train  # more reports to choose on (the reader is not trained)
"""

from __future__ import annotations

from collections import defaultdict

from eval.common.shared_data import SHARED_DATA, split_reading_main, split_reports
from eval.diagnosis.normalize import fold, is_normal_statement
from eval.diagnosis.results import NormalQuestions, Reading
from retriever.reports.impression import positive_items


def measure(split: str) -> NormalQuestions:
    """Read every usable report's findings of `split` as a question."""
    from assistant.rag.question import read_question  # the product's reader; heavy imports once the data is read

    groups: dict[str, list[tuple[str, bool, bool, bool]]] = defaultdict(list)
    for report in split_reports(SHARED_DATA, split):
        normal = all(is_normal_statement(fold(item)) for item in positive_items(report.impression))
        question = read_question(report.findings)
        groups[report.id.split(":")[0]].append(
            (report.id, normal, question.purely_negative, question.describes_nothing)
        )
    by_source = {source: _reading(rows) for source, rows in sorted(groups.items())}
    return NormalQuestions(split, _reading([r for rows in groups.values() for r in rows]), by_source)


def _reading(rows: list[tuple[str, bool, bool, bool]]) -> Reading:
    normal = [negative for _, is_normal, negative, _ in rows if is_normal]
    abnormal = [(report_id, negative) for report_id, is_normal, negative, _ in rows if not is_normal]
    nothing = sorted(report_id for report_id, _, _, describes_nothing in rows if describes_nothing)
    return Reading(
        normal=len(normal),
        normal_read_negative=sum(normal),
        abnormal=len(abnormal),
        abnormal_read_negative=sum(negative for _, negative in abnormal),
        false_negative_ids=sorted(report_id for report_id, negative in abnormal if negative),
        read_no_finding=len(nothing),
        no_finding_ids=nothing,
    )


def _share(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.1f}%)" if n else "-"


def render(result: NormalQuestions) -> str:
    lines = [
        f"# Normal studies read as normal ({result.split} split)",
        "",
        "Each usable report's findings read as a question by `assistant.rag.question.read_question`; a report whose",
        "impression states nothing abnormal is a normal study. Written by `eval/diagnosis/normal_questions.py`.",
        "",
        "| source | normal studies read 'no abnormality' (higher is better) "
        "| abnormal studies read so (lower is better) | read 'no finding described' (0 is right) |",
        "|---|---|---|---|",
    ]
    for name, r in [("all", result.overall), *result.by_source.items()]:
        total = r.normal + r.abnormal
        lines.append(
            f"| {name} | {_share(r.normal_read_negative, r.normal)} | {_share(r.abnormal_read_negative, r.abnormal)} "
            f"| {_share(r.read_no_finding, total) if r.read_no_finding is not None else '-'} |"
        )
    lines += ["", "Abnormal studies read as normal: " + (", ".join(result.overall.false_negative_ids) or "none")]
    lines += ["", "Read as describing no finding: " + (", ".join(result.overall.no_finding_ids or []) or "none"), ""]
    return "\n".join(lines)


def main() -> None:
    split_reading_main(__doc__, "normal_questions", measure, render, default="dev")


if __name__ == "__main__":
    main()
