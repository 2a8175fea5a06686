"""The retrieval benchmark's results file: typed records that read the committed file and every older version."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from eval.common.shared_data import RESULTS
from eval.retrieval.results import SCHEMA_VERSION, VERSION_1_BACKEND, RankerResult, RetrievalResults

COMMITTED = RESULTS / "retrieval.json"


def test_the_committed_file_reads_and_writes_back_unchanged() -> None:
    data = json.loads(COMMITTED.read_text(encoding="utf-8"))
    results = RetrievalResults.from_json(data)
    version = data.get("schema_version", 1)
    if version == 1:  # written before the version was recorded: torch, and nothing else is added
        assert results.encoder_backend == VERSION_1_BACKEND
        data |= {"schema_version": SCHEMA_VERSION, "encoder_backend": VERSION_1_BACKEND}
    assert results.to_json() == data
    assert RetrievalResults.from_json(results.to_json()) == results


def test_typed_fields_read_the_literature_names() -> None:
    results = RetrievalResults.read(COMMITTED)
    pooled = results.rankers["bm25"].pooled()
    raw = json.loads(COMMITTED.read_text(encoding="utf-8"))["rankers"]["bm25"]
    assert pooled.all["match@5"] == raw["findings_to_impression"]["overall"]["all"]["match@5"]
    label = results.rankers["bm25"].labels["openi"]["finding_label"]
    assert label.p_at_10 == raw["labels"]["openi"]["finding_label"]["p@10"]
    assert (
        label.per_query is not None
        and label.per_query.p_at_10 == raw["labels"]["openi"]["finding_label"]["per_query"]["p@10"]
    )


def _minimal() -> RetrievalResults:
    scores = {"n": 1, "match@1": 1.0, "match@5": 1.0, "match@10": 1.0, "mrr@10": 1.0}
    match = {
        "ranker": "bm25",
        "corpus_impressions": 1,
        "all": scores,
        "without_top20_impressions": scores,
        "abnormal": scores,
    }
    ranker = RankerResult.from_json({"findings_to_impression": {"openi": match}, "labels": {}})
    return RetrievalResults("r", "now", "cmd", "test", {"openi": 1}, "", "onnx-int8", {"bm25": ranker})


def test_absent_optional_parts_stay_absent_and_the_version_comes_first() -> None:
    data = _minimal().to_json()
    assert next(iter(data)) == "schema_version" and data["schema_version"] == SCHEMA_VERSION
    assert {"choice", "targets", "plot", "product_default"}.isdisjoint(data)
    assert {"free_text", "reused_from"}.isdisjoint(data["rankers"]["bm25"])
    assert "per_query" not in data["rankers"]["bm25"]["findings_to_impression"]["openi"]
    assert RetrievalResults.from_json(data) == _minimal()


def test_a_newer_or_broken_file_is_refused_with_a_message() -> None:
    data = _minimal().to_json()
    with pytest.raises(ValueError, match=f"reads versions 1 to {SCHEMA_VERSION}"):
        RetrievalResults.from_json(data | {"schema_version": SCHEMA_VERSION + 1})
    del data["rankers"]["bm25"]["findings_to_impression"]["openi"]["abnormal"]
    with pytest.raises(ValueError, match="MatchScores: missing abnormal"):
        RetrievalResults.from_json(data)


def test_reused_results_record_where_they_came_from() -> None:
    results = _minimal()
    results.rankers["bm25"] = replace(results.rankers["bm25"], reused_from="earlier")
    assert results.to_json()["rankers"]["bm25"]["reused_from"] == "earlier"
