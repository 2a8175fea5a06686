"""A fixed set of searches over the shared test split, written as ranked report ids: a refactor's behaviour check.

Issue 38 moves files and changes imports only, so the product must rank exactly as before. This runs the same
searches (hand-written queries with shorthand and negations, plus the dev split's first impressions and findings)
through `ReportIndex` with each available encoder and method, with and without the default second stage, and
writes what it found to JSON; two checkouts' outputs are compared with `cmp`.

    python -m eval.retrieval.search_snapshot --out /tmp/snapshot.json [--encoders bm25,minilm]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from eval.common.shared_data import SHARED_DATA, load_shared

QUERIES = (
    "pneumothorax",
    "no pneumothorax",
    "ggo RUL w/ PTX",
    "small left pleural effusion",
    "no pleural effusion",
    "cardiomegaly without edema",
    "lymphadenopathy",
    "no acute cardiopulmonary abnormality",
    "pulmonary nodule RLL",
    "r/o PE",
    "fracture of the left femur",
    "hepatic steatosis",
    "no evidence of intracranial hemorrhage",
    "atelectasis at the lung bases",
    "emphysema",
)
DEV_QUERIES = 20
K = 10


def searches(encoder_names: list[str], data: Path = SHARED_DATA) -> dict[str, object]:
    from retriever.encoders.encoder import Encoder, load_encoder
    from retriever.index.report_index import ReportIndex
    from retriever.reports.splits import split_reports
    from retriever.search.rerank import SecondStage
    from retriever.search.support import SupportCheck

    groups = split_reports(load_shared(data).reports)
    test, dev = groups["test"], groups["dev"]
    queries = list(QUERIES)
    queries += [r.impression for r in dev if r.impression][:DEV_QUERIES]
    queries += [r.findings for r in dev if r.findings][:DEV_QUERIES]
    out: dict[str, object] = {"test_reports": [r.id for r in test], "queries": queries, "runs": {}}
    runs: dict[str, list[list[str]]] = out["runs"]  # type: ignore[assignment]
    for name in encoder_names:
        if name == "bm25":
            from eval.retrieval.findings_impression import _NoVectors

            encoder, methods = Encoder("bm25", "bm25", _NoVectors()), ["bm25"]
        else:
            encoder, methods = load_encoder(name, backend="torch"), ["dense", "hybrid", "hybrid-weighted"]
        index = ReportIndex.build(test, encoder, batch_size=64)
        stages: dict[str, SecondStage | None] = {"none": None, "support": SupportCheck()}
        for stage_name, stage in stages.items():
            staged = index.with_search(second_stage=stage)
            for method in methods:
                for field in index.fields:
                    key = f"{name}/{method}/{field}/{stage_name}"
                    runs[key] = [[hit.report.id for hit in staged.search(q, field, K, method=method)] for q in queries]
                    print(key, "done", flush=True)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--encoders", default="bm25,minilm", help="comma-separated (default: bm25,minilm)")
    args = parser.parse_args(argv)
    result = searches(args.encoders.split(","))
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
