"""Contrastive training on a tiny corpus the test writes itself, with the real MiniLM, and every bad input."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from retriever.reports.record import Report
from retriever.reports.splits import SplitSpec, split_of, split_reports
from retriever.training.data import TrainingError, build_pairs
from retriever.training.train import CARD_FILE, TrainConfig, train_encoder

REPO = Path(__file__).resolve().parents[2]
_FINDINGS = [
    ("a small pleural effusion blunting the costophrenic angle", "pleural effusion"),
    ("patchy airspace consolidation with air bronchograms", "pneumonia"),
    ("a spiculated 2 cm nodule", "suspicious pulmonary nodule"),
    ("a visceral pleural line without peripheral lung markings", "pneumothorax"),
    ("linear opacities with volume loss", "subsegmental atelectasis"),
    ("a rounded mass with internal air-fluid level", "lung abscess"),
    ("reticular opacities with honeycombing", "pulmonary fibrosis"),
    ("multiple displaced rib fractures", "rib fractures"),
    ("a cavitating lesion with surrounding nodules", "possible tuberculosis"),
    ("hyperlucent lung with flattened diaphragm", "emphysema"),
]
_ZONES = ["left upper", "left lower", "right upper", "right lower"]


def tiny_corpus() -> list[Report]:
    """40 synthetic findings -> impression pairs, all impressions different."""
    return [
        Report(
            f"tiny:{n}:{z}",
            findings=f"There is {finding} in the {zone} zone.",
            impression=f"{zone.capitalize()} {diagnosis}.",
            source="tiny",
        )
        for n, (finding, diagnosis) in enumerate(_FINDINGS)
        for z, zone in enumerate(_ZONES)
    ]


FAST = TrainConfig(batch_size=8, lr=1e-4, max_seq_length=32, checkpoint_steps=1000, log_steps=1)


@pytest.fixture(scope="module")
def base(minilm) -> str:
    """Folder of the real MiniLM (the `minilm` fixture skips when its package is missing)."""
    return minilm.location


def test_split_is_deterministic_by_report_and_never_mixes(tmp_path: Path) -> None:
    reports = tiny_corpus() * 1 + [Report(f"x:{i}", "f", f"i{i}") for i in range(2000)]
    groups = split_reports(reports)
    assert sum(map(len, groups.values())) == len(reports)
    ids = {name: {r.id for r in group} for name, group in groups.items()}
    assert not (ids["train"] & ids["dev"] or ids["train"] & ids["test"] or ids["dev"] & ids["test"])
    assert split_reports(list(reversed(reports)))["test"] == list(reversed(groups["test"]))  # order-free
    share = Counter(split_of(f"x:{i}") for i in range(2000))
    assert 0.75 < share["train"] / 2000 < 0.85 and 0.07 < share["test"] / 2000 < 0.13
    assert split_of("x:1", SplitSpec(salt="other")) in ("train", "dev", "test")
    with pytest.raises(ValueError):
        SplitSpec(dev=0.5, test=0.5)


def test_loss_falls_and_the_saved_model_reloads(base: str, tmp_path: Path) -> None:
    from retriever.encoders.encoder import load_encoder

    config = TrainConfig(**{**FAST.__dict__, "base": base, "epochs": 3})
    result = train_encoder(tiny_corpus(), "tiny", config, models_root=tmp_path, progress=False)
    losses = [row["loss"] for row in result.card["train_loss"]]
    assert len(losses) >= 8
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3, losses
    assert result.path == tmp_path / "tiny" and not list(tmp_path.glob(".tiny.tmp-*"))
    assert not (tmp_path / ".checkpoints" / "tiny").exists()  # removed once the model is saved

    card = json.loads((result.path / CARD_FILE).read_text())
    assert sum(card["data"]["pairs"].values()) == 40
    assert card["hyperparameters"]["lr"] == 1e-4 and card["loss"] == "MNRL"
    assert set(card["dev_metrics"]["after"]) == {"match@1", "match@5", "match@10", "mrr@10"}
    assert len(card["dev_metrics"]["per_epoch"]) == 3 and len(card["train_seconds_per_epoch"]) == 3
    readme = (result.path / "README.md").read_text()
    assert "match@5" in readme and "costophrenic" not in readme  # counts and metrics, never report text

    reloaded = load_encoder(str(result.path))
    vectors = reloaded.encode(["Left upper pleural effusion.", "There is a pleural effusion."])
    assert vectors.shape == (2, 384)


def test_fewer_pairs_than_batch_size_shrinks_the_batch_and_skips_are_counted(
    base: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    reports = tiny_corpus()[:12] + [
        Report("gap:1", findings="Only findings here."),
        Report("gap:2", impression="Only an impression."),
        Report("gap:3", full_text="No sections at all."),
    ]
    config = TrainConfig(**{**FAST.__dict__, "base": base, "batch_size": 32, "max_steps": 1})
    with caplog.at_level("WARNING"):
        result = train_encoder(
            reports, "small", config, models_root=tmp_path, progress=False, skipped=Counter({"duplicate findings": 2})
        )
    train_pairs = result.card["data"]["pairs"]["train"]
    assert result.card["hyperparameters"]["batch_size_used"] == train_pairs < 32
    assert "batch size reduced from 32" in caplog.text
    assert result.card["data"]["skipped_by_reason"] == {
        "missing impression": 1,
        "missing findings": 1,
        "missing findings and impression": 1,
        "duplicate findings": 2,
    }
    assert result.card["data"]["reports"] == len(reports) + 2


def test_missing_sections_are_skipped_and_counted() -> None:
    pairs = build_pairs(
        [
            Report("a", "Findings.", "Impression."),
            Report("b", "Findings only."),
            Report("c", "", "Impression only."),
            Report("d", "   ", "  "),
        ]
    )
    assert (pairs.anchors, pairs.positives, pairs.ids) == (["Findings."], ["Impression."], ["a"])
    assert pairs.skipped == Counter(
        {"missing impression": 1, "missing findings": 1, "missing findings and impression": 1}
    )


def test_all_impressions_identical_is_a_clear_error(tmp_path: Path) -> None:
    reports = [Report(f"n:{i}", f"Normal chest number {i}.", "No acute abnormality.") for i in range(50)]
    with pytest.raises(TrainingError, match="identical: nothing to contrast"):
        train_encoder(reports, "normals", FAST, models_root=tmp_path)


def test_no_pairs_at_all_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TrainingError, match="no findings -> impression pairs"):
        train_encoder([Report("a", "Findings only.")], "none", FAST, models_root=tmp_path)


def test_existing_output_name_is_refused_without_overwrite(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(TrainingError, match="already exists.*--overwrite"):
        train_encoder(tiny_corpus(), "taken", FAST, models_root=tmp_path)
    for bad in ("../escape", ".hidden", ""):
        with pytest.raises(TrainingError, match="plain model name"):
            train_encoder(tiny_corpus(), bad, FAST, models_root=tmp_path)


def test_resume_without_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TrainingError, match="no checkpoint"):
        train_encoder(tiny_corpus(), "fresh", FAST, models_root=tmp_path, resume=True)


_CHILD = """
import json, sys
from pathlib import Path
from retriever.reports.record import Report
from retriever.training.train import TrainConfig, train_encoder
job = json.loads(Path(sys.argv[1]).read_text())
reports = [Report(**r) for r in job["reports"]]
train_encoder(reports, "resumable", TrainConfig(**job["config"]), models_root=Path(job["root"]), progress=False)
"""


def interrupted_config(base: str) -> TrainConfig:
    """4 epochs of 5 steps: the run is still going when the test kills it right after its first checkpoint."""
    return TrainConfig(**{**FAST.__dict__, "base": base, "epochs": 4, "checkpoint_steps": 2})


@pytest.mark.slow
def test_interrupted_training_resumes_from_the_last_checkpoint(base: str, tmp_path: Path) -> None:
    checkpoints = tmp_path / ".checkpoints" / "resumable"
    job = tmp_path / "job.json"
    reports = [{"id": r.id, "findings": r.findings, "impression": r.impression} for r in tiny_corpus()]
    job.write_text(json.dumps({"reports": reports, "config": interrupted_config(base).__dict__, "root": str(tmp_path)}))
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(job)], cwd=REPO, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not list(checkpoints.glob("checkpoint-*/trainer_state.json")):
            assert child.poll() is None, "training ended before its first checkpoint"
            assert time.monotonic() < deadline, "no checkpoint within 2 minutes"
            time.sleep(0.05)
        time.sleep(0.5)  # let the checkpoint finish writing, as a real interruption at any moment might not
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert not (tmp_path / "resumable").exists()
    done = {int(p.parent.name.split("-")[1]) for p in checkpoints.glob("checkpoint-*/trainer_state.json")}
    last = max(done)

    config = interrupted_config(base)
    with pytest.raises(TrainingError, match="--resume to continue"):
        train_encoder(tiny_corpus(), "resumable", config, models_root=tmp_path)
    other = TrainConfig(**{**config.__dict__, "lr": 5e-5})
    with pytest.raises(TrainingError, match="other data or settings"):
        train_encoder(tiny_corpus(), "resumable", other, models_root=tmp_path, resume=True)

    result = train_encoder(tiny_corpus(), "resumable", config, models_root=tmp_path, resume=True, progress=False)
    steps = result.card["steps"]
    assert steps["resumed"] and steps["total"] == 4 * math.ceil(result.card["data"]["pairs"]["train"] / 8)
    assert steps["first"] == last + 1 and steps["this_run"] == steps["total"] - last  # went on after the checkpoint
    assert (tmp_path / "resumable" / CARD_FILE).is_file()


def test_training_with_bm25_and_negation_negatives_runs_and_is_recorded(base: str, tmp_path: Path) -> None:
    config = TrainConfig(
        **{**FAST.__dict__, "base": base, "max_steps": 2, "bm25_negatives": True, "negation_negatives": True}
    )
    result = train_encoder(tiny_corpus(), "tiny-neg", config, models_root=tmp_path, progress=False)
    card = result.card
    assert card["loss"] == "MNRL + BM25 hard negatives + negation hard negatives"
    assert sum(card["data"]["training_sets"].values()) >= card["data"]["pairs"]["train"]
    assert card["steps"]["total"] == 2
    assert set(card["loss_per_set"].values()) == {"MultipleNegativesRankingLoss"}  # no margin asked


def test_detail_negatives_train_and_are_recorded(base: str, tmp_path: Path) -> None:
    config = TrainConfig(**{**FAST.__dict__, "base": base, "max_steps": 2, "detail_negatives": True})
    result = train_encoder(tiny_corpus(), "tiny-detail", config, models_root=tmp_path, progress=False)
    assert result.card["loss"] == "MNRL + side/severity/size hard negatives"
    assert result.card["data"]["training_sets"] == {"reports+1neg": result.card["data"]["pairs"]["train"]}


def test_near_duplicate_mask_with_hard_negatives_is_refused(base: str, tmp_path: Path) -> None:
    config = TrainConfig(**{**FAST.__dict__, "base": base, "mask_near_duplicates": True, "bm25_negatives": True})
    with pytest.raises(TrainingError, match="cannot be combined with hard negatives"):
        train_encoder(tiny_corpus(), "x", config, models_root=tmp_path, progress=False)


def test_train_refuses_a_missing_corpus_before_reading_anything(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from assistant.cli import app

    real = tmp_path / "reports.csv"
    real.write_text("id,findings,impression\n1,Blunted angle.,Effusion.\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(real), str(tmp_path / "typo.csv"), "--out", "never-made"])
    assert result.exit_code == 2, result.output
    assert "typo.csv" in result.output and "records read" not in result.output


def test_every_train_option_named_as_a_config_field_reaches_the_config() -> None:
    """`assistant train` builds its TrainConfig from the options CONFIG_OPTIONS names: an option added for a new
    field must be named there, or it would be parsed and silently ignored; the options' defaults are the config's."""
    import inspect
    from dataclasses import fields

    from assistant.commands.train_cmd import CONFIG_OPTIONS, train
    from retriever.training.config import DEFAULT_CONFIG

    options = inspect.signature(train).parameters
    assert set(CONFIG_OPTIONS) == set(options) & {f.name for f in fields(TrainConfig)}
    assert TrainConfig(**{name: options[name].default for name in CONFIG_OPTIONS}) == DEFAULT_CONFIG


def test_negation_margin_trains_the_term_triplets_with_the_margin_loss(base: str, tmp_path: Path) -> None:
    config = TrainConfig(
        **{**FAST.__dict__, "base": base, "max_steps": 2, "negation_negatives": True, "negation_margin": 0.5}
    )
    result = train_encoder(tiny_corpus(), "tiny-margin", config, models_root=tmp_path, progress=False)
    assert result.card["loss"] == "MNRL + negation hard negatives (term triplets: cosine margin 0.5)"
    assert result.card["data"]["training_sets"]["negation-terms"] > 0
    assert result.card["hyperparameters"]["negation_margin"] == 0.5
    losses = result.card["loss_per_set"]
    assert losses.pop("negation-terms") == "MarginTermLoss"
    assert set(losses.values()) == {"MultipleNegativesRankingLoss"}


def test_margin_term_loss_is_ranking_plus_triplet_margin(base: str) -> None:
    from sentence_transformers import SentenceTransformer

    from retriever.training.losses import MarginTermLoss

    model = SentenceTransformer(base, device="cpu").eval()  # no dropout: one pass and two passes agree
    columns = [
        ["pleural effusion", "pneumothorax"],
        ["Small left pleural effusion.", "Large right pneumothorax."],
        ["No pleural effusion.", "No pneumothorax."],
    ]
    features = [model.tokenize(texts) for texts in columns]
    loss = MarginTermLoss(model, margin=0.5)
    expected = loss.ranking(features, None) + loss.triplet(features, None)
    assert float(loss(features, None)) == pytest.approx(float(expected), abs=1e-5)
    assert float(loss.triplet(features, None)) > 0  # untuned MiniLM: the negated sentence is not 0.5 further
