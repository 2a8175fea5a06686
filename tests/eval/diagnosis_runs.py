"""Diagnosis results for tests, as eval.diagnosis.report builds them: verdicts by hand, the summary computed."""

from __future__ import annotations

from eval.diagnosis.report import summarize
from eval.diagnosis.results import Cell, ConditionSummary, DiagnosisResults, RunMeta, Summary, Verdict

META = RunMeta(
    command="x",
    cases_file="cases.jsonl",
    corpus=["reports.csv"],
    corpus_reports=9,
    backend="embedded",
    structured_output="off",
    llm_threads=1,
    encoders={},
    max_tokens=32,
    field="report",
    k=1,
    prompt="diagnosis_rag",
    wall_seconds=1.0,
    python="3",
)


def verdict(case_id: str, correct: bool, prediction: str = "answer", source: str = "openi") -> Verdict:
    """One graded case; the exact criterion agrees with the verdict."""
    return Verdict(
        case_id=case_id,
        source=source,
        screening=False,
        prediction=prediction,
        correct=correct,
        criteria={"exact": correct},
        matched_by=[],
        prediction_icd=None,
        missing=False,
        degraded=None,
        retrieved=[],
        own_report_retrieved=False,
        seconds=1.0,
    )


def diagnosis_run(cases: dict[str, list[Verdict]], model_id: str = "m", **fields: object) -> DiagnosisResults:
    """A run of these verdicts, summarized as the benchmark does."""
    n_cases = len(next(iter(cases.values())))
    return DiagnosisResults(
        name="t",
        created="now",
        model_id=model_id,
        prompt_ids=["p"],
        n_cases=n_cases,
        cases_by_source={"openi": n_cases},
        conditions=list(cases),
        meta=META,
        plot="t.png",
        summary=summarize([], cases, ["exact"]),
        cases=cases,
        **fields,  # type: ignore[arg-type]
    )


def accuracy_run(
    accuracies: dict[str, float], n_cases: int = 40, seconds: dict[str, float] | None = None
) -> DiagnosisResults:
    """A run whose conditions have these overall accuracies and seconds per case (and no verdicts): what a choice
    reads."""
    summary = Summary(
        sources=[],
        accuracy={
            name: ConditionSummary(
                overall=Cell(round(a * n_cases), n_cases, a, [a, a]),
                criteria={},
                mean_seconds_per_case=(seconds or {}).get(name),
                degraded={},
                own_report_retrieved=0,
            )
            for name, a in accuracies.items()
        },
        mcnemar=[],
    )
    return DiagnosisResults(
        name="t",
        created="now",
        model_id="m",
        prompt_ids=["p"],
        n_cases=n_cases,
        cases_by_source={"openi": n_cases},
        conditions=list(accuracies),
        meta=META,
        plot="t.png",
        summary=summary,
        cases={},
    )
