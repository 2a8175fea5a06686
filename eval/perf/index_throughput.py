"""Indexing throughput (issue 48: storing each report's diagnoses must keep it >= 80% of what it was): `assistant index`
of this checkout against a baseline commit's, side by side in one run.

    python -m eval.perf.index_throughput --baseline a3b4a67    # 400 shared reports, 3 rounds per arm (~5 min)
    python -m eval.perf.index_throughput --quick                # smoke run: 40 reports, 1 round, no baseline

Each arm runs `assistant index CORPUS --out ...` as a user would, with the shipped encoder and backend (reading,
encoding three fields, BM25, the store with its concepts, the manifest), on the same `--size` reports of the shared
development data (findings and impression, as a RIS export gives them). The arms alternate round by round
(baseline, this checkout, baseline, ...) so a change of load on the shared machine hits both alike; an arm's
reports/s is its median round, and the ratio this checkout's over the baseline's. The baseline is the commit's tree
(`git archive`) run first on PYTHONPATH with the same interpreter, packages and models. The linking alone is timed
too, in this process with cold caches: reading the vocabulary (once per build) and `stored_form` of every report's
conclusion, what a build now adds.
The load average is recorded before and after every round. Results: eval/results/index_throughput.{json,md}, or
the `index_throughput` section of performance.json when `python -m eval.perf` runs it (against the commit before
stored concepts, a3b4a67).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from eval.common.machine import load_average
from eval.common.shared_data import RESULTS
from eval.perf import results
from eval.perf.data import NoData, shared_reports

REPO = Path(__file__).resolve().parents[2]
RESULTS_JSON = RESULTS / "index_throughput.json"
THIS = "this checkout"


def write_corpus(folder: Path, size: int) -> tuple[Path, list[str]]:
    """`size` shared reports with findings and impression as a JSONL export, and their conclusions."""
    reports = [r for r in shared_reports() if r.findings and r.impression][:size]
    path = folder / "site.jsonl"
    lines = [json.dumps({"id": r.id, "findings": r.findings, "impression": r.impression}) for r in reports]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, [r.conclusion for r in reports]


def baseline_tree(ref: str, folder: Path) -> Path:
    """The tree of commit `ref` exported into `folder` (the code `assistant index` of that commit runs)."""
    folder.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def timed_build(tree: Path, corpus: Path, out: Path) -> float:
    """Wall time of `assistant index CORPUS --out OUT` run from `tree`'s code."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "assistant.cli", "index", str(corpus), "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    seconds = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"assistant index from {tree} failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds


def linking_cost(conclusions: list[str]) -> tuple[float, float]:
    """Seconds to read the vocabulary (once per build) and milliseconds per report of linking its conclusion as a
    build does, caches cold (this process links nothing before)."""
    from retriever.concepts.conclusion import stored_form
    from retriever.concepts.vocabulary import default_vocabulary

    start = time.perf_counter()
    default_vocabulary()
    loaded = time.perf_counter()
    for conclusion in conclusions:
        stored_form(conclusion)
    per_report = 1000 * (time.perf_counter() - loaded) / max(len(conclusions), 1)
    return round(loaded - start, 3), round(per_report, 3)


def measure(size: int, rounds: int, baseline: str | None, work: Path) -> dict[str, Any]:
    corpus, conclusions = write_corpus(work, size)
    trees = {THIS: REPO}
    if baseline:
        trees = {f"baseline {baseline}": baseline_tree(baseline, work / "baseline"), **trees}
    vocabulary_s, linked = linking_cost(conclusions)
    rows = []
    for number in range(rounds):
        for arm, tree in trees.items():
            before = load_average()
            seconds = timed_build(tree, corpus, work / f"index-{len(rows)}")
            rows.append(
                {
                    "arm": arm,
                    "round": number + 1,
                    "seconds": round(seconds, 2),
                    "reports_per_s": round(len(conclusions) / seconds, 2),
                    "load_average_before": before,
                    "load_average_after": load_average(),
                }
            )
            print(rows[-1], flush=True)
    medians = {arm: statistics.median(r["reports_per_s"] for r in rows if r["arm"] == arm) for arm in trees}
    data: dict[str, Any] = {
        "load_average_at_start": rows[0]["load_average_before"],
        "corpus_reports": len(conclusions),
        "baseline": baseline or "",
        "rounds": rows,
        "reports_per_s": {arm: round(value, 2) for arm, value in medians.items()},
        "linking_ms_per_report": linked,
        "vocabulary_s": vocabulary_s,
    }
    if baseline:
        data["ratio"] = round(medians[THIS] / medians[f"baseline {baseline}"], 3)
    return data


def main(argv: list[str] | None = None) -> int:
    parser = results.parser(__doc__)
    parser.set_defaults(results=RESULTS_JSON)
    parser.add_argument("--size", type=int, default=400, help="reports in the corpus")
    parser.add_argument("--rounds", type=int, default=3, help="builds per arm, interleaved")
    parser.add_argument("--baseline", help="git commit to compare with (default: none, this checkout only)")
    args = parser.parse_args(argv)
    size, rounds = (min(args.size, 40), 1) if args.quick else (args.size, args.rounds)
    with tempfile.TemporaryDirectory(prefix="rs-index-throughput-") as folder:
        try:
            data = measure(size, rounds, args.baseline, Path(folder))
        except NoData as exc:
            print(f"skipped: {exc}")
            return 0
    results.store_run("index_throughput", data, args, "eval.perf.index_throughput", argv)
    from eval.perf import report

    print(f"wrote {report.write(args.results)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
