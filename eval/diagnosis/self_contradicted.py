"""Count self-contradicted answers in a committed prediction cache: answers whose diagnosis is ruled out by the
findings they answer or by every report they cite that mentions it (assistant/rag/grounding.py).

    python -m eval.diagnosis.self_contradicted eval/results/predictions/diagnosis_heldout_qwen1.5b_native.jsonl \\
        --condition "hybrid-weighted:radsearch-minilm-labelneg-2ep-256-avg2[report]"

Why apart from eval.diagnosis.benchmark: the diagnosis benchmark counts them for every condition it runs (the "Run"
table), but an earlier default's answers can only be re-read, not re-run, once the encoder that retrieved them is gone;
their cache holds the diagnosis and the cited report ids, and the shared data holds the findings and the impressions.
Writes eval/results/self_contradicted.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from eval.common.shared_data import RESULTS, SHARED_DATA, add_out_option, eval_home, load_shared, write_results
from eval.diagnosis.benchmark import self_contradicted
from eval.diagnosis.cases import read_cases
from eval.diagnosis.results import ContradictionCount, SelfContradicted


def count(rows: list[dict[str, Any]], findings: dict[str, str], impressions: dict[str, str]) -> dict[str, Any]:
    """How many of the answers are self-contradicted, overall and by source, with the case ids (the figures of a
    ContradictionCount)."""
    flagged = [r["case_id"] for r in rows if self_contradicted(r, findings[r["case_id"]], impressions)]
    return {
        "answers": len(rows),
        "self_contradicted": len(flagged),
        "by_source": dict(Counter(i.split(":")[0] for i in flagged)),
        "case_ids": flagged,
    }


def render(payload: SelfContradicted) -> str:
    lines = [
        "# Self-contradicted answers in committed predictions",
        "",
        f"Command: `{payload.command}`",
        "",
        "| cache | condition | answers | self-contradicted | by source |",
        "|---|---|---:|---:|---|",
    ]
    for row in payload.rows:
        lines.append(
            f"| {row.cache} | {row.condition} | {row.answers} | {row.self_contradicted} | {json.dumps(row.by_source)} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.diagnosis.self_contradicted",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("cache", type=Path)
    parser.add_argument("--condition", action="append", required=True, help="condition name (repeatable)")
    parser.add_argument("--cases", type=Path, default=eval_home() / "cases" / "shared_heldout.jsonl")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    add_out_option(parser, RESULTS / "self_contradicted")
    args = parser.parse_args(argv)
    if not args.data.is_dir() or not args.cases.is_file():
        print(f"skipped: needs the shared data ({args.data}) and the cases ({args.cases})")
        return 0
    findings = {c.id: c.findings for c in read_cases(args.cases)}
    impressions = {r.id: r.impression for r in load_shared(args.data).reports}
    rows = [json.loads(line) for line in args.cache.read_text(encoding="utf-8").splitlines() if line.strip()]
    payload = SelfContradicted(
        command="python -m eval.diagnosis.self_contradicted " + " ".join(argv if argv is not None else sys.argv[1:]),
        rows=[
            ContradictionCount(
                cache=args.cache.name,
                condition=condition,
                **count(
                    [r for r in rows if r["condition"] == condition and r["case_id"] in findings], findings, impressions
                ),
            )
            for condition in args.condition
        ],
    )
    print(write_results(args.out, payload, render))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
