"""eval/perf/ingest.py's measuring parts on tiny synthetic data (the committed numbers come from a full run)."""

from __future__ import annotations

import numpy as np
import pytest

from eval.perf.ingest import vectors_section, whole_pipeline
from eval.perf.synthetic import normalize


def test_adding_to_an_exact_index_finds_what_a_rebuild_finds() -> None:
    real = normalize(np.random.default_rng(0).standard_normal((300, 32)).astype(np.float32))
    row = vectors_section(real, 2000, 0.01, 20)
    assert (row["kind"], row["added"], row["removed"]) == ("flat", 20, 2)
    assert row["recall@10_after_add"] == row["recall@10_rebuilt"] == 1.0


def test_the_whole_pipeline_counts_encoding_for_three_fields() -> None:
    data = {
        "vectors": {"added": 10, "add_s": 1.0, "rebuild_s": 5.0},
        "encode_ms_per_text": 100.0,
        "bm25": {"build_s": 2.0},
    }
    costs = whole_pipeline(data, 1000)
    assert costs == {"update_s": 3 * (1.0 + 1.0) + 6.0, "rebuild_s": 3 * (101.0 + 5.0) + 6.0, "update_share": 0.037}


def test_the_drift_measurement_separates_a_drifted_batch() -> None:
    from eval.perf.ingest import drift_section
    from retriever.index.drift import DRIFT_WARN

    real = normalize(np.random.default_rng(0).standard_normal((300, 32)).astype(np.float32))
    row = drift_section(real, 3000, 0.05, 20, [0.0, 1.0])
    same, drifted = row["levels"]
    assert row["batch"] == 150 and abs(same["ratio"] - 1) < 0.15 and drifted["ratio"] > DRIFT_WARN
    assert 0 <= drifted["recall@10_after_add_scaled_nprobe"] <= 1


@pytest.mark.models
def test_the_streaming_part_kills_a_build_and_checks_the_resumed_one() -> None:
    import pytest

    from eval.perf.data import NoData
    from eval.perf.ingest import report_texts, streaming_section

    try:
        report_texts(1)  # the reports are the shared data's, cycled
    except NoData as exc:
        pytest.skip(str(exc))
    real = normalize(np.random.default_rng(0).standard_normal((300, 32)).astype(np.float32))
    row = streaming_section(3000, real)  # 3 chunks of 1,024 reports
    assert row["reports"] == 3000 and row["peak_rss_mb"] > 0
    assert row["resumed_equals_uninterrupted"] is True
    assert row["resumed_chunks_encoded"] == 3 - row["killed_with_chunks"]  # done chunks are not encoded again
