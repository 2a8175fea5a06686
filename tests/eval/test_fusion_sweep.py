"""The dev-split fusion sweep runs end to end on a corpus the test writes, with the real MiniLM."""

from __future__ import annotations

import csv
from pathlib import Path

from eval.retrieval import fusion_sweep

ROWS = [
    ("r1", "CT", "Airspace consolidation in the right lower lobe.", "Right lower lobe pneumonia.", "Pneumonia"),
    ("r2", "CT", "Fluid layering in the left pleural space.", "Small left pleural effusion.", "Effusion"),
    ("r3", "CT", "Enlarged cardiac silhouette and interstitial edema.", "Cardiomegaly with edema.", "Cardiomegaly"),
    ("r4", "CT", "A 9 mm nodule in the left upper lobe.", "Left upper lobe nodule.", "Nodule"),
    ("r5", "CT", "Right pleural fluid, moderate.", "Moderate right pleural effusion.", "Effusion"),
]


def test_sweep_scores_every_setting_and_picks_a_weight(tmp_path: Path) -> None:
    corpus = tmp_path / "reports.csv"
    with corpus.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "modality", "findings", "impression", "labels"])
        writer.writerows(ROWS)
    out = tmp_path / "results"
    command = ["--corpus", str(corpus), "--encoder", "minilm", "--encoder-backend", "torch", "--split", "all"]
    assert fusion_sweep.main([*command, "--out", str(out)]) == 0
    results = fusion_sweep.FusionSweep.read(out / "fusion_sweep.json")
    assert results.best_dense_weight in fusion_sweep.WEIGHTS
    assert {"dense", "bm25", "hybrid (RRF)"} <= set(results.rows)
    assert len(results.rows) == 3 + len(fusion_sweep.WEIGHTS)
    for row in results.rows.values():
        assert 0.0 <= row.mean <= 1.0 and row.metrics
    assert "Best dense weight" in (out / "fusion_sweep.md").read_text()
