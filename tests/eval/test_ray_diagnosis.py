"""The diagnosis benchmark's model calls on a real Ray cluster (issue 40, `--ray ADDRESS`): a local cluster of two
node processes (one CPU each) answers the same cases as one process does, with the same predictions, into a cache a
rerun answers everything from; an address nobody listens at is a clear error (exit 3) before anything is asked.

The embedded SmolLM2 answers (one llama.cpp thread in both runs, so their greedy answers are the same). No part of
Ray is mocked. Marked slow: the cluster and two model loads take minutes on 2 cores (CI runs it).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_fixtures import REPORTS, require_embedded_smollm2

from eval.diagnosis.cases import Case, write_cases
from eval.diagnosis.results import DiagnosisResults
from eval.perf.ray_cluster import LocalCluster, free_port, local_cluster

REPO = Path(__file__).resolve().parents[2]
CASES = [
    Case("new-1", "Meniscus sign at the left costophrenic angle.", "Pleural effusion", (), "fixture"),
    Case("new-2", "Cardiothoracic ratio 0.62 with cephalization.", "Cardiomegaly", ("enlarged heart",), "other"),
    Case("new-3", "Patchy right lower lobe opacity with air bronchograms.", "Pneumonia", (), "fixture"),
]
SETTINGS = {
    "RADSEARCH_LLM_BACKEND": "embedded",
    "RADSEARCH_LLM_GGUF": "smollm2",
    "RADSEARCH_LLM_THREADS": "1",
    "RADSEARCH_LLM_CONTEXT": "2048",
    "RADSEARCH_LLM_STRUCTURED": "off",
    "RADSEARCH_LLM_TIMEOUT": "600",
}


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    pytest.importorskip("ray", reason="Ray is not installed: pip install '.[ray]' (make test installs it)")
    require_embedded_smollm2()
    with local_cluster(nodes=2, code=REPO) as found:
        yield found


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ray-diagnosis")
    with (folder / "site.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "findings", "impression", "modality"])
        writer.writerows([r.id, r.findings, r.impression, r.modality] for r in REPORTS)
    write_cases(CASES, folder / "cases.jsonl")
    return folder


def _benchmark(folder: Path, name: str, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    command = [
        *(sys.executable, "-m", "eval.diagnosis.benchmark"),
        *("--cases", str(folder / "cases.jsonl"), "--corpus", str(folder / "site.csv")),
        *("--conditions", "none,bm25", "--max-tokens", "24", "--icd", "off"),
        *("--cache", str(folder / f"{name}.jsonl"), "--out", str(folder / "results"), "--name", name),
        *extra,
    ]
    return subprocess.run(command, capture_output=True, text=True, env={**env, **SETTINGS}, cwd=REPO, timeout=1800)


def _predictions(folder: Path, name: str) -> dict[tuple[str, str], str]:
    rows = [json.loads(line) for line in (folder / f"{name}.jsonl").read_text().splitlines()]
    return {(r["case_id"], r["condition"]): r["diagnosis"] for r in rows}


@pytest.mark.slow
@pytest.mark.models
def test_a_ray_cluster_answers_as_one_process_and_its_cache_resumes(cluster: LocalCluster, inputs: Path) -> None:
    alone = _benchmark(inputs, "alone", cluster.driver_env())
    assert alone.returncode == 0, alone.stderr
    on_ray = _benchmark(inputs, "ray", cluster.driver_env(), "--ray", cluster.address)
    assert on_ray.returncode == 0, on_ray.stderr + on_ray.stdout
    assert "0 predictions cached, 6 to ask" in on_ray.stdout
    assert _predictions(inputs, "ray") == _predictions(inputs, "alone")
    assert len(_predictions(inputs, "ray")) == len(CASES) * 2
    meta = DiagnosisResults.read(inputs / "results" / "ray.json").meta
    assert meta.ray == cluster.address and meta.llm_threads == 1

    again = _benchmark(inputs, "ray", cluster.driver_env(), "--ray", cluster.address)
    assert again.returncode == 0, again.stderr
    assert "6 predictions cached, 0 to ask" in again.stdout


@pytest.mark.models
def test_an_unreachable_cluster_is_exit_3_before_any_question(inputs: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed: pip install '.[ray]' (make test installs it)")
    import os

    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    done = _benchmark(inputs, "nowhere", dict(os.environ), "--ray", address)
    assert done.returncode == 3, done.stderr
    assert f"the Ray cluster at {address} cannot be reached" in done.stderr and "Traceback" not in done.stderr
    assert not (inputs / "nowhere.jsonl").exists()
