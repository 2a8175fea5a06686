"""How far the evidence can reach: where the right diagnosis sits among the default answer's candidates, and what
the first five would be with a place for the closest report or for the model's own suggestions.

    python -m eval.diagnosis.evidence_coverage --split dev     # -> eval/results/evidence_coverage_dev.{json,md}

Why: issue 48 asks for the right diagnosis among the first five in >= 75% of the held-out cases and for every source
at or above the model alone. The evidence can only name what the similar reports affirm
(docs/decisions/2026-11-29-model-knowledge-in-the-differential.md, 2026-11-29-closest-report-in-the-differential.md):
this measures how many cases no candidate can answer, and the first five under each alternative, on dev only.

Each case is answered by the default evidence condition with the benchmark's own pipeline and grader (ICD criterion
off). The model's own answer and differential are the committed prediction cache's `none[tokens=64]` rows (the
no-retrieval prompt; no model is run here). Alternatives for the first five (the answer, then its differential):
- `closest report, one place`: the closest voting report's first candidate takes the fifth place when missing;
- `closest report, two places`: its first two candidates take the last places when missing;
- `weak: evidence 3 + model 2`: for answers of weak or no strength, the evidence's first three, then the model's two;
- `weak: the model's answer first`: for those answers, the model's two first (its answer is then the top-1);
- `every answer: evidence 3 + model 2`: the evidence's first three, then the model's two, for every answer.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

from eval.common.shared_data import RESULTS, add_out_option, eval_home, write_results
from eval.diagnosis.results import EvidenceCoverage

CONDITION = "evidence:hybrid-weighted:radsearch[report,k=40,weighting=similarity:0.5]"
MODEL_ALONE = "none[tokens=64]"
CACHE = RESULTS / "predictions" / "diagnosis_evidence_qwen1.5b.jsonl"
FIRST = 5


def model_answers(cache: Path, case_ids: set[str]) -> dict[str, list[str]]:
    """Case id -> the model alone's diagnosis, then its differential, from the prediction cache."""
    found: dict[str, list[str]] = {}
    for line in cache.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["condition"] == MODEL_ALONE and row["case_id"] in case_ids:
            found[row["case_id"]] = [d for d in [row.get("diagnosis"), *(row.get("differential") or [])] if d]
    return found


def measure(split: str, cases_path: Path, cache: Path) -> EvidenceCoverage:
    from assistant.rag.question import stated_diagnosis
    from eval.diagnosis.benchmark import condition_pipeline
    from eval.diagnosis.grading import Grader

    cases, _, pipeline = condition_pipeline(CONDITION, cases_path, split)
    model = model_answers(cache, {c.id for c in cases})
    grader = Grader.default(icd=False)
    positions: Counter[str] = Counter()
    top1: Counter[tuple[str, str]] = Counter()
    first5: Counter[tuple[str, str]] = Counter()
    sources: Counter[str] = Counter()
    for case in cases:
        answer = pipeline.invoke(case.findings)
        right = partial(_right, grader, case.references())
        stated = stated_diagnosis(answer.diagnosis, answer.degraded_kind)
        listed = list(dict.fromkeys(d for d in [stated, *(answer.differential or [])] if d))
        evidence = answer.evidence or {}
        candidates = [c["diagnosis"] for c in evidence.get("candidates", [])]
        voter = evidence.get("first_voter")
        closest = [c["diagnosis"] for c in evidence.get("candidates", []) if voter in c["report_ids"]]
        mine = model.get(case.id, [])
        weak = answer.strength.get("level") in ("weak", None) or not answer.diagnosis
        at = next((i for i, d in enumerate(candidates) if right(d)), None)
        positions["none" if at is None else str(at + 1)] += 1
        sources[case.source] += 1
        for name, answered, shown in (
            ("the evidence (today)", stated, listed),
            ("closest report, one place", stated, _placed(listed, closest[:1])),
            ("closest report, two places", stated, _placed(listed, closest[:2])),
            ("weak: evidence 3 + model 2", stated, listed[:3] + mine[:2] if weak else listed),
            (
                "weak: the model's answer first",
                (mine or [stated])[0] if weak else stated,
                mine[:2] + listed[:3] if weak else listed,
            ),
            ("every answer: evidence 3 + model 2", stated, listed[:3] + mine[:2]),
            ("the model alone", mine[0] if mine else None, mine),
        ):
            top1[(name, case.source)] += right(answered)
            first5[(name, case.source)] += any(right(d) for d in shown[:FIRST])
    names = list(dict.fromkeys(name for name, _ in top1))
    return EvidenceCoverage(
        split=split,
        condition=CONDITION,
        cases=len(cases),
        by_source=dict(sources),
        right_candidate_at=dict(sorted(positions.items())),
        top1={n: {s: top1[(n, s)] for s in sources} for n in names},
        first5={n: {s: first5[(n, s)] for s in sources} for n in names},
    )


def _right(grader: Any, references: Any, diagnosis: str | None) -> bool:
    return bool(diagnosis) and grader.grade(diagnosis, references).correct


def _placed(listed: list[str], wanted: list[str]) -> list[str]:
    """`listed` with `wanted` in its last places among the first five where they are not there already."""
    missing = [d for d in wanted if d not in listed[:FIRST]]
    return listed[: FIRST - len(missing)] + missing if missing else listed


def render(result: EvidenceCoverage) -> str:
    sources = list(result.by_source)
    lines = [
        f"# How far the evidence reaches ({result.split} split, {result.cases} cases)",
        "",
        f"The default answer `{result.condition}`; the model alone is the committed prediction cache's",
        f"`{MODEL_ALONE}` rows. Written by `eval/diagnosis/evidence_coverage.py`.",
        "",
        "Where the first right candidate of the evidence sits (`none`: no candidate is right):",
        "",
        "| place | " + " | ".join(result.right_candidate_at) + " |",
        "|---|" + "---|" * len(result.right_candidate_at),
        "| cases | " + " | ".join(str(n) for n in result.right_candidate_at.values()) + " |",
        "",
        "Right at first place / among the first five, by the first five shown:",
        "",
        "| first five | top-1 | first five | "
        + " | ".join(f"{s} first five (of {result.by_source[s]})" for s in sources)
        + " |",
        "|---|---|---|" + "---|" * len(sources),
    ]
    for name, by_source in result.first5.items():
        lines.append(
            f"| {name} | {sum(result.top1[name].values())} | {sum(by_source.values())} | "
            + " | ".join(str(by_source[s]) for s in sources)
            + " |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--cases", type=Path, default=None, help="the held-out cases file (build_cases)")
    parser.add_argument("--cache", type=Path, default=CACHE)
    add_out_option(parser, RESULTS)
    args = parser.parse_args()
    cases = args.cases or eval_home() / "cases" / "shared_heldout.jsonl"
    result = measure(args.split, cases, args.cache)
    print(write_results(args.out / f"evidence_coverage_{args.split}", result, render))


if __name__ == "__main__":
    main()
