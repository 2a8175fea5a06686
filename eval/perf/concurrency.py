"""Diagnosis-benchmark throughput against a server backend: cases/minute sequential vs concurrent.

    python -m eval.perf.concurrency                   # vLLM CPU server (SmolLM2), 12 cases, 1 vs 4 workers

Runs the benchmark's own prediction loop (eval.diagnosis.benchmark.predict, which sends a server backend's requests from
a thread pool) twice on the same held-out cases with an empty prediction cache each time: once one request at a time,
once with N workers. Condition `none` (the LLM alone) keeps retrieval out of the measurement: this is about how well the
server's continuous batching absorbs parallel requests.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from eval.perf import results
from eval.perf.data import NoData, shared_reports, test_split


def cases_from_test_split(count: int) -> list[Any]:
    """Held-out reports as cases: findings in, the report's impression as the reference."""
    from eval.diagnosis.cases import Case

    reports = [r for r in test_split(shared_reports()) if r.findings.strip() and r.impression.strip()]
    return [Case(r.id, r.findings, r.impression, source=r.source) for r in reports[:count]]


def cases_per_minute(llm: Any, cases: list[Any], workers: int, cache: Path, max_tokens: int) -> dict[str, float]:
    """One pass over `cases` with `workers` concurrent requests (1 = sequential)."""
    from eval.diagnosis.benchmark import RunConfig, predict
    from eval.diagnosis.conditions import parse_conditions

    config = RunConfig(cases, parse_conditions("none"), [], max_tokens, workers, cache)
    start = time.perf_counter()
    rows = predict(config, llm, concurrent=workers > 1, log=lambda _: None)
    wall = time.perf_counter() - start
    answered = sum(1 for r in rows if r["degraded_kind"] not in ("backend_unavailable", "timeout"))
    return {"workers": workers, "cases": len(rows), "answered": answered, "wall_s": round(wall, 2),
            "cases_per_minute": round(len(rows) / wall * 60, 1)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = results.parser(__doc__)
    parser.add_argument("--cases", type=int, default=12)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=32, help="as the diagnosis benchmark's default")
    args = results.parse_args(parser, argv)
    from assistant.llm.openai_backend import OpenAIBackend
    from eval.perf.vllm_server import SERVED_NAME, vllm_server

    try:
        cases = cases_from_test_split(args.cases)
    except NoData as exc:
        print(f"skipped: {exc}")
        return 0
    with tempfile.TemporaryDirectory(prefix="radsearch-perf-") as tmp:
        cores = ",".join(str(c) for c in range(args.threads))
        with vllm_server(Path(tmp) / "vllm.log", cores=cores) as (url, ready_s):
            llm = OpenAIBackend(url, SERVED_NAME, structured="vllm")
            runs = [
                cases_per_minute(llm, cases, workers, Path(tmp) / f"cache-{workers}.jsonl", args.max_tokens)
                for workers in (1, args.workers)
            ]
    data = {
        "backend": f"vLLM CPU, {SERVED_NAME}",
        "server_start_s": round(ready_s, 1),
        "condition": "none",
        "max_tokens": args.max_tokens,
        "runs": runs,
        "speedup": round(runs[1]["cases_per_minute"] / runs[0]["cases_per_minute"], 2),
    }
    print(data)
    results.store_run("concurrency", data, args, "eval.perf.concurrency", argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
