"""How often a normal sentence of the findings rules out a concept the report's own impression affirms.

Why: a question that says "Heart size normal." is never answered "cardiomegaly" (assistant/rag/question.py
NORMAL_ORGAN_RULES_OUT): its normal sentences rule the concept out as a negation does. Every usable report of the
shared data is a labelled question for free: its findings are the question, and an impression that affirms the
concept says the rule would have ruled out a real finding. Per rule: the reports it applies to and those it errs on,
with their ids (no text: most sources may not be redistributed). Rule and adoption:
docs/decisions/2026-11-29-normal-organ-rules-out.md.

    python -m eval.diagnosis.normal_organs --split train  # eval/results/normal_organs_train.*
"""

from __future__ import annotations

from eval.common.shared_data import SHARED_DATA, split_reading_main, split_reports
from eval.diagnosis.results import NormalOrgans, OrganRule


def measure(split: str) -> NormalOrgans:
    """Apply each rule to every usable report's findings of `split` and read its impression."""
    from assistant.rag.question import NORMAL_ORGAN_RULES_OUT, normal_organs_rule_out
    from retriever.concepts import affirmed_concepts

    reports = split_reports(SHARED_DATA, split)
    applies: dict[frozenset[str], list[str]] = {ids: [] for _, ids in NORMAL_ORGAN_RULES_OUT}
    erred: dict[frozenset[str], list[str]] = {ids: [] for _, ids in NORMAL_ORGAN_RULES_OUT}
    for report in reports:
        ruled = normal_organs_rule_out(report.findings)
        affirmed = {c.id for c in affirmed_concepts(report.impression)}
        for ids in applies:
            if ids & ruled:
                applies[ids].append(report.id)
                if ids & affirmed:
                    erred[ids].append(report.id)
    rules = {
        ", ".join(sorted(ids)): OrganRule(sorted(ids), len(applies[ids]), len(erred[ids]), sorted(erred[ids]))
        for ids in applies
    }
    return NormalOrgans(split, len(reports), rules)


def render(result: NormalOrgans) -> str:
    lines = [
        f"# Normal sentences that rule a concept out, against the report's impression ({result.split} split)",
        "",
        f"{result.reports} usable reports; each one's findings read by",
        "`assistant.rag.question.normal_organs_rule_out`. A rule errs on a report whose impression affirms the concept",
        "it rules out (bar: at most 1%).",
        "Written by `eval/diagnosis/normal_organs.py`.",
        "",
        "| rules out | reports it applies to | impression affirms it | share | reports |",
        "|---|---|---|---|---|",
    ]
    for name, rule in result.rules.items():
        share = f"{100 * rule.contradicted / rule.applies:.2f}%" if rule.applies else "-"
        ids = ", ".join(rule.contradicted_ids) or "none"
        lines.append(f"| {name} | {rule.applies} | {rule.contradicted} | {share} | {ids} |")
    return "\n".join([*lines, ""])


def main() -> None:
    split_reading_main(__doc__, "normal_organs", measure, render, default="train")


if __name__ == "__main__":
    main()
