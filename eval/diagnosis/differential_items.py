"""Differential quality (issue 48): are the items the default answer lists diagnoses or imaging findings?

    python -m eval.diagnosis.differential_items sample     # answer every held-out case, draw SAMPLE items to label
    python -m eval.diagnosis.differential_items score      # read the labels, write eval/results/differential_quality

`sample` answers each case with the product's default pipeline (the evidence alone, no model), takes the first five
names of each answer (the diagnosis, then its differential), counts the cases that list one concept twice, and draws
a seeded random sample of SAMPLE items into eval/datasets/differential_items.jsonl with an empty `label`. The items
are then labelled by hand, `diagnosis` (a diagnosis or an imaging finding a radiologist would accept in a
differential) or `not` (an exam, procedure, anatomy, adjective, measurement, sign-off...), reading only the item and
its case's findings, never the vocabulary's kind for it. `score` writes the share labelled `not`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from eval.common.shared_data import RESULTS, eval_home, write_results
from eval.diagnosis.results import DifferentialQuality

CONDITION = "evidence:hybrid-weighted:radsearch[report,k=40,weighting=similarity:0.5]"
ITEMS = Path(__file__).resolve().parents[1] / "datasets" / "differential_items.jsonl"
SAMPLE = 200
SEED = 48


def answered(condition: str, cases_path: Path) -> tuple[list[dict], int]:
    """Every case's first five names with their concept ids, and the number of cases listing a concept twice."""
    from eval.diagnosis.benchmark import condition_pipeline

    cases, _, pipeline = condition_pipeline(condition, cases_path, None)
    items, twice = [], 0
    for case in cases:
        answer = pipeline.invoke(case.findings)
        concepts = {c["diagnosis"]: c["concept"] for c in answer.evidence.get("candidates", [])}
        names = [n for n in [answer.diagnosis or "", *answer.differential] if n][:5]
        ids = [concepts.get(n, n) for n in names]
        twice += len(set(ids)) < len(ids)
        items += [{"case_id": case.id, "rank": r, "item": n, "label": ""} for r, n in enumerate(names, start=1)]
    return items, twice


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.diagnosis.differential_items", description=__doc__)
    parser.add_argument("action", choices=("sample", "score"))
    parser.add_argument("--cases", type=Path, default=eval_home() / "cases" / "shared_heldout.jsonl")
    parser.add_argument("--items", type=Path, default=ITEMS)
    args = parser.parse_args(argv)
    if args.action == "sample":
        items, twice = answered(CONDITION, args.cases)
        drawn = random.Random(SEED).sample(items, min(SAMPLE, len(items)))
        header = {"condition": CONDITION, "items": len(items), "cases_listing_a_concept_twice": twice}
        lines = [json.dumps(header), *(json.dumps(item) for item in drawn)]
        args.items.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{len(items)} items, {twice} cases list a concept twice; {len(drawn)} drawn into {args.items}")
        return 0
    header, *rows = [json.loads(line) for line in args.items.read_text(encoding="utf-8").splitlines()]
    unlabelled = [r for r in rows if r["label"] not in ("diagnosis", "not")]
    if unlabelled:
        print(f"{len(unlabelled)} items are not labelled 'diagnosis' or 'not' yet", file=sys.stderr)
        return 2
    record = DifferentialQuality(
        condition=header["condition"],
        items_listed=header["items"],
        cases_listing_a_concept_twice=header["cases_listing_a_concept_twice"],
        labelled=len(rows),
        not_diagnoses=[r["item"] for r in rows if r["label"] == "not"],
        command=" ".join(["python -m eval.diagnosis.differential_items", *(argv or sys.argv[1:])]),
    )
    print(write_results(RESULTS / "differential_quality", record, render))
    return 0


def render(record: DifferentialQuality) -> str:
    share = len(record.not_diagnoses) / record.labelled
    return "\n".join(
        [
            "# Differential quality: the default answer's first five items, labelled by hand",
            "",
            f"Condition `{record.condition}`; {record.items_listed} items listed over the held-out cases; "
            f"written by `{record.command}`.",
            "",
            f"- labelled items (seeded random sample): {record.labelled}",
            f"- not a diagnosis or imaging finding: {len(record.not_diagnoses)} ({100 * share:.1f}%; target <= 2%)",
            f"- cases listing one concept twice: {record.cases_listing_a_concept_twice} (target 0)",
            "",
            "Items labelled not a diagnosis: " + (", ".join(record.not_diagnoses) or "none"),
            "",
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
