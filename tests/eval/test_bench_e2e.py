"""A tiny end-to-end diagnosis benchmark with the embedded SmolLM2, so the script cannot rot.

Three cases x five conditions (no retrieval, BM25, MiniLM, MiniLM's top hit without an LLM, MiniLM's top two
impressions as ranked candidates) over a six-report corpus the tests write: checks the results files, that a case's
own report is never retrieved, that a second run (through `assistant bench`) answers everything from the
prediction cache, and that an answer cached with other retrieved reports than the index gives now is asked again.
"""

from __future__ import annotations

import csv
import json

import pytest
from llm_fixtures import REPORTS, require_embedded_smollm2
from typer.testing import CliRunner

from assistant.cli import app
from eval.diagnosis.benchmark import main
from eval.diagnosis.cases import Case, write_cases
from eval.diagnosis.results import DiagnosisResults

pytestmark = pytest.mark.models  # real CLI processes or a real model: not the fast tier

CASES = [
    Case("site:cxr-002", REPORTS[1].findings, "Pneumonia", ("right lower lobe pneumonia",), "fixture"),
    Case("new-1", "Meniscus sign at the left costophrenic angle.", "Pleural effusion", (), "fixture"),
    Case("new-2", "Cardiothoracic ratio 0.62 with cephalization.", "Cardiomegaly", ("enlarged heart",), "other"),
]


CONDITIONS = "none,bm25,minilm,tophit:minilm,minilm[k=2,prompt=diagnosis_candidates]"
NAMES = ["none", "bm25", "minilm", "tophit:minilm", "minilm[k=2,prompt=diagnosis_candidates]"]


@pytest.mark.integration
def test_tiny_benchmark_end_to_end_and_resume(tmp_path, monkeypatch, minilm) -> None:
    require_embedded_smollm2()
    monkeypatch.setenv("RADSEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RADSEARCH_LLM_CONTEXT", "2048")
    monkeypatch.setenv("RADSEARCH_LLM_STRUCTURED", "off")  # the JSON grammar is the slow part on a busy CPU
    monkeypatch.setenv("RADSEARCH_LLM_TIMEOUT", "600")
    corpus = tmp_path / "site.csv"
    with corpus.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "findings", "impression", "modality"])
        writer.writerows([r.id, r.findings, r.impression, r.modality] for r in REPORTS)
    cases = tmp_path / "cases.jsonl"
    write_cases(CASES, cases)
    cache = tmp_path / "predictions.jsonl"
    out = tmp_path / "results"
    common = [
        "--cases",
        str(cases),
        "--corpus",
        str(corpus),
        "--conditions",
        CONDITIONS,
        "--backend",
        "embedded",
        "--model",
        "smollm2",
        "--max-tokens",
        "24",
        "--cache",
        str(cache),
        "--out",
        str(out),
        "--name",
        "tiny",
    ]

    assert main([*common, "--icd", "off"]) == 0

    results = DiagnosisResults.read(out / "tiny.json")
    assert results.n_cases == 3 and results.conditions == NAMES
    assert results.meta.corpus_reports == len(REPORTS) - 1  # the case's own report was removed
    assert results.prompt_ids == ["diagnosis_candidates@1", "diagnosis_norag@1", "diagnosis_rag@1"]
    assert "smollm2" in (results.model_id or "").lower()
    for condition, verdicts in results.cases.items():
        assert [v.case_id for v in verdicts] == [c.id for c in CASES]
        assert not any(v.missing or v.own_report_retrieved for v in verdicts)
        most = {"none": 0, NAMES[-1]: 2}.get(condition, 1)
        assert all(len(v.retrieved) <= most for v in verdicts)
    assert results.cases["minilm"][0].retrieved  # dense retrieval always finds a nearest report
    cached = [json.loads(line) for line in cache.read_text().splitlines()]
    llm_rows = [row for row in cached if not row["condition"].startswith("tophit:")]
    assert llm_rows and all(row["configuration_hash"] for row in llm_rows)  # what produced each cached answer
    by_condition = {row["condition"]: row["configuration_hash"] for row in llm_rows}
    assert by_condition["none"] != by_condition["minilm"] != by_condition["bm25"]
    assert len(results.cases[NAMES[-1]][0].retrieved) == 2
    top_hit = results.cases["tophit:minilm"]
    # without an LLM the answer is the top hit's impression: for the pneumonia case, another report's impression
    assert all(v.prediction for v in top_hit)
    assert top_hit[0].retrieved == results.cases["minilm"][0].retrieved
    summary = results.summary
    assert summary.sources == ["fixture", "other"]
    assert len(summary.mcnemar) == 10  # every pair of conditions, Bonferroni-adjusted
    overall = summary.accuracy["none"].overall
    assert overall.n == 3 and 0 <= overall.ci95[0] <= overall.accuracy <= overall.ci95[1] <= 1
    assert "## Paired comparisons" in (out / "tiny.md").read_text()
    assert (out / "tiny_accuracy.png").read_bytes()[:4] == b"\x89PNG"
    lines = cache.read_text().splitlines()
    assert len(lines) == 12  # the LLM's answers; the top-hit baseline asks no model

    rerun = CliRunner().invoke(app, ["bench", *common, "--no-icd"])
    assert rerun.exit_code == 0, rerun.output
    assert "12 predictions cached, 0 to ask" in rerun.output
    assert cache.read_text().splitlines() == lines

    # An answer cached with other reports than the index returns now (a retrained encoder) is asked again.
    rows = [json.loads(line) for line in lines]
    moved = next(r for r in rows if r["condition"] == "minilm" and r["case_id"] == "new-1")
    with cache.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(moved | {"retrieved": [{"id": "elsewhere", "score": 0.9}]}) + "\n")
    again = CliRunner().invoke(app, ["bench", *common, "--no-icd"])
    assert again.exit_code == 0, again.output
    assert "11 predictions cached, 1 to ask" in again.output and "(1 cached with other retrieved" in again.output
    asked = json.loads(cache.read_text().splitlines()[-1])
    assert (asked["case_id"], asked["condition"], asked["retrieved"]) == ("new-1", "minilm", moved["retrieved"])


@pytest.mark.integration
def test_shards_fill_one_cache_and_the_run_without_shard_asks_nothing(tmp_path, monkeypatch) -> None:
    """Two `--shard` processes split the cases (every other one each) and write no results; the plain run then
    finds every answer in the cache."""
    require_embedded_smollm2()
    monkeypatch.setenv("RADSEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RADSEARCH_LLM_CONTEXT", "2048")
    monkeypatch.setenv("RADSEARCH_LLM_STRUCTURED", "off")
    cases = tmp_path / "cases.jsonl"
    write_cases(CASES, cases)
    cache = tmp_path / "predictions.jsonl"
    out = tmp_path / "results"
    common = [
        "--cases",
        str(cases),
        "--conditions",
        "none",
        "--backend",
        "embedded",
        "--model",
        "smollm2",
        "--max-tokens",
        "8",
        "--cache",
        str(cache),
        "--out",
        str(out),
        "--name",
        "sharded",
        "--icd",
        "off",
    ]

    assert main([*common, "--shard", "1/2"]) == 0
    assert [json.loads(line)["case_id"] for line in cache.read_text().splitlines()] == [CASES[1].id]
    assert not out.exists()
    assert main([*common, "--shard", "0/2"]) == 0
    assert sorted(json.loads(line)["case_id"] for line in cache.read_text().splitlines()) == sorted(c.id for c in CASES)
    lines = cache.read_text().splitlines()

    assert main(common) == 0
    assert cache.read_text().splitlines() == lines
    assert DiagnosisResults.read(out / "sharded.json").n_cases == 3


@pytest.mark.parametrize("bad", ["2/2", "1", "a/2", "-1/2"])
def test_a_shard_outside_its_count_is_refused(bad: str) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--shard", bad])
    assert stopped.value.code == 2
