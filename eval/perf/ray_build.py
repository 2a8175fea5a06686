"""Building an index on Ray vs one process vs the shard command (issue 40), side by side in one run.

    python -m eval.perf.ray_build                  # 800 real reports (about 15 minutes on 2 busy cores)
    python -m eval.perf.ray_build --size 100 --quick

Every arm runs `assistant index` as a user would, on the same `--size` reports of the shared development data
(findings, impression and full text: the three fields a build encodes), with the default encoder and backend:
- single: one process (`assistant index CORPUS --out ...`; ONNX Runtime's own thread count, one per core);
- shards: `--shard 0/2` and `--shard 1/2` at once, one thread each, then `--merge-shards` (the wall time of both);
- ray1 / ray2: `--ray ADDRESS` on a local cluster of 1 and 2 node processes of one CPU each (eval/perf/ray_cluster.py,
  started before the arm is timed: a site's cluster is up before a build);
Reports per second are the kept reports over the command's whole wall time (reading, encoding, BM25, writing). Ray's
per-job overhead is the wall time of a `--ray` build of OVERHEAD_REPORTS reports on the 2-node cluster minus that of
the same build in one process: joining the cluster, starting the actors and loading the encoder in each. The load
average is recorded before and after each arm (the machine is shared). Results: eval/results/ray_build.{json,md}.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval.common.machine import load_average
from eval.common.shared_data import RESULTS
from eval.perf import results
from eval.perf.data import NoData, shared_reports
from eval.perf.ray_cluster import local_cluster
from eval.perf.sections import RayBuild

RESULTS_JSON = RESULTS / "ray_build.json"
REPO = Path(__file__).resolve().parents[2]
ASSISTANT = [sys.executable, "-m", "assistant.cli"]
OVERHEAD_REPORTS = 20


def write_corpus(folder: Path, size: int) -> Path:
    """`size` shared reports with findings and impression (what a build keeps), as a JSONL export."""
    reports = [r for r in shared_reports() if r.findings and r.impression][:size]
    path = folder / "site.jsonl"
    lines = [json.dumps({"id": r.id, "findings": r.findings, "impression": r.impression}) for r in reports]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def timed(commands: list[list[str]], env: dict[str, str]) -> float:
    """Wall time of `commands` run at once (each must succeed)."""
    start = time.perf_counter()
    running = [
        subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env) for c in commands
    ]
    for command, process in zip(commands, running, strict=True):
        _, err = process.communicate()
        if process.returncode:
            raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}): {err[-2000:]}")
    return time.perf_counter() - start


def arm(name: str, reports: int, seconds: float, before: list[float], **extra: Any) -> dict[str, Any]:
    row = {
        "arm": name,
        "reports": reports,
        "seconds": round(seconds, 1),
        "reports_per_s": round(reports / seconds, 2),
        "load_average_before": before,
        "load_average_after": load_average(),
        **extra,
    }
    print(row, flush=True)
    return row


def kept(corpus: Path) -> int:
    return sum(1 for line in corpus.read_text(encoding="utf-8").splitlines() if line)


def measure(size: int, work: Path) -> dict[str, Any]:
    corpus = write_corpus(work, size)
    reports = kept(corpus)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    one_thread = {**env, "OMP_NUM_THREADS": "1"}
    arms = []

    before = load_average()
    arms.append(
        arm("single", reports, timed([[*ASSISTANT, "index", str(corpus), "--out", str(work / "single")]], env), before)
    )

    before = load_average()
    shards = [[*ASSISTANT, "index", str(corpus), "--shard", f"{i}/2", "--out", str(work / f"shard{i}")] for i in (0, 1)]
    encode = timed(shards, one_thread)
    merged = [*ASSISTANT, "index", "--merge-shards", str(work / "shard0"), str(work / "shard1")]
    merge = timed([[*merged, "--out", str(work / "merged")]], env)
    arms.append(arm("shards (2 processes + merge)", reports, encode + merge, before, merge_s=round(merge, 1)))

    overhead: dict[str, Any] = {}
    for nodes in (1, 2):
        with local_cluster(nodes=nodes, code=REPO) as cluster:
            ray_env = cluster.driver_env(PYTHONPATH=str(REPO))
            before = load_average()
            build = [*ASSISTANT, "index", str(corpus), "--out", str(work / f"ray{nodes}"), "--ray", cluster.address]
            arms.append(arm(f"ray, {nodes} worker{'s' if nodes > 1 else ''}", reports, timed([build], ray_env), before))
            if nodes == 2:
                overhead = per_job_overhead(work, cluster.address, ray_env, env)
    return {"corpus_reports": reports, "arms": arms, "ray_overhead": overhead}


def per_job_overhead(work: Path, address: str, ray_env: dict[str, str], env: dict[str, str]) -> dict[str, Any]:
    """A tiny build on the cluster minus the same build in one process: what a --ray job costs before encoding."""
    tiny = work / "tiny"
    tiny.mkdir()
    corpus = tiny / "site.jsonl"
    lines = (work / "site.jsonl").read_text(encoding="utf-8").splitlines()[:OVERHEAD_REPORTS]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    local = timed([[*ASSISTANT, "index", str(corpus), "--out", str(tiny / "single")]], env)
    remote = timed([[*ASSISTANT, "index", str(corpus), "--out", str(tiny / "ray"), "--ray", address]], ray_env)
    return {
        "reports": OVERHEAD_REPORTS,
        "single_s": round(local, 1),
        "ray_s": round(remote, 1),
        "overhead_s": round(remote - local, 1),
        "load_average": load_average(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = results.parser(__doc__)
    parser.set_defaults(results=RESULTS_JSON)
    parser.add_argument("--size", type=int, default=800, help="reports in the corpus")
    args = parser.parse_args(argv)
    size = min(args.size, 100) if args.quick else args.size
    with tempfile.TemporaryDirectory(prefix="rs-bench-") as folder:
        try:
            data = {"load_average_at_start": load_average(), **measure(size, Path(folder))}
        except NoData as exc:
            print(f"skipped: {exc}")
            return 0
    data["measured"] = datetime.now(UTC).isoformat(timespec="seconds")
    results.store_run("ray_build", data, args, "eval.perf.ray_build", argv)
    write_markdown(results.sections_of(RayBuild, args.results), args.results.with_suffix(".md"))
    return 0


def write_markdown(sections: dict[str, RayBuild], path: Path) -> None:
    lines = [
        "# Building an index on Ray (issue 40)",
        "",
        "Generated by `eval/perf/ray_build.py`; numbers from ray_build.json. Each arm is `assistant index` on the",
        "same reports, timed whole (reading, encoding three fields, BM25, writing).",
        "",
    ]
    for name, run in sections.items():
        lines += [
            f"## {name}: {run.corpus_reports:,} reports, measured {run.measured}",
            "",
            f"`{run.command}`, load average {run.load_average_at_start} at start, {run.load_average_at_end} at end.",
            "",
            "| arm | seconds | reports/s | load average before | after |",
            "|---|---:|---:|---|---|",
            *(
                f"| {a.arm} | {a.seconds} | {a.reports_per_s} | {a.load_average_before} | {a.load_average_after} |"
                for a in run.arms
            ),
            "",
        ]
        if overhead := run.ray_overhead:
            lines += [
                f"Ray's per-job overhead: a build of {overhead.reports} reports took {overhead.ray_s} s on the "
                f"2-node cluster and {overhead.single_s} s in one process: **{overhead.overhead_s} s** to join "
                "the cluster, start the actors and load the encoder in each (load average "
                f"{overhead.load_average}).",
                "",
            ]
    path.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
