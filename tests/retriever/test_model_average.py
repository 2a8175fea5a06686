"""Weight averaging of fine-tuned encoders (`assistant average`), on two real MiniLM fine-tunes trained here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_train import FAST, tiny_corpus

from retriever.training.average import average_encoders
from retriever.training.data import TrainingError
from retriever.training.train import CARD_FILE, TrainConfig, train_encoder


@pytest.fixture(scope="module")
def home(minilm, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A RADSEARCH_HOME holding two 2-step fine-tunes of the real MiniLM that differ only in their seed, and one
    trained at another sequence length."""
    root = tmp_path_factory.mktemp("average-home")
    for name, seed, length in (("seed1", 1, 32), ("seed2", 2, 32), ("short", 1, 24)):
        config = TrainConfig(
            **{
                **FAST.__dict__,
                "base": minilm.location,
                "max_steps": 2,
                "seed": seed,
                "max_seq_length": length,
                "inference_max_seq_length": length,
            }
        )
        train_encoder(tiny_corpus(), name, config, models_root=root / "models", progress=False)
    return root


@pytest.fixture
def models(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RADSEARCH_HOME", str(home))
    return home / "models"


def _weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(folder / "model.safetensors")


def test_the_average_is_the_mean_of_every_weight_and_its_card_names_the_parts(models: Path) -> None:
    result = average_encoders(["seed1", "seed2"], "soup", models_root=models)
    one, two, soup = _weights(models / "seed1"), _weights(models / "seed2"), _weights(result.path)
    assert soup.keys() == one.keys()
    assert any(not one[k].equal(two[k]) for k in one)  # the seeds gave different models
    for key, value in soup.items():
        assert value.float().allclose((one[key].float() + two[key].float()) / 2, atol=1e-6), key
    card = json.loads((result.path / CARD_FILE).read_text(encoding="utf-8"))
    assert [part["name"] for part in card["averaged_from"]] == ["seed1", "seed2"]
    assert [part["hyperparameters"]["seed"] for part in card["averaged_from"]] == [1, 2]
    assert card["max_seq_length"] == 32
    readme = (result.path / "README.md").read_text(encoding="utf-8")
    assert "| seed1 |" in readme and "tiny:" not in readme  # parts named, no report text

    from retriever.encoders.encoder import load_encoder

    vectors = load_encoder("soup").encode(["pleural effusion", "rib fractures"])
    assert vectors.shape == (2, 384)
    assert not list(models.glob(".soup.tmp-*"))  # written by an atomic rename


def test_what_cannot_be_averaged_is_refused_with_the_reason(models: Path) -> None:
    with pytest.raises(TrainingError, match="at least two"):
        average_encoders(["seed1"], "x", models_root=models)
    with pytest.raises(TrainingError, match="named twice"):
        average_encoders(["seed1", "seed1"], "x", models_root=models)
    with pytest.raises(TrainingError, match="--max-seq-length"):
        average_encoders(["seed1", "short"], "x", models_root=models)
    with pytest.raises(TrainingError, match="no training card"):
        average_encoders(["minilm", "seed1"], "x", models_root=models)
    with pytest.raises(TrainingError, match="already exists"):
        average_encoders(["seed1", "seed2"], "seed1", models_root=models)
    assert not (models / "x").exists()
    before = _weights(models / "seed1")
    for part in ("seed1", str(models / "seed1")):  # issue 39: --overwrite replaced a part with an average of itself
        with pytest.raises(TrainingError, match="is one of the parts"):
            average_encoders([part, "seed2"], "seed1", models_root=models, overwrite=True)
    assert all((w == before[k]).all() for k, w in _weights(models / "seed1").items())


def test_average_command_writes_the_model_and_refuses_a_bad_part(models: Path) -> None:
    from typer.testing import CliRunner

    from assistant.cli import app

    made = CliRunner().invoke(app, ["average", "seed1", "seed2", "--out", "cli-soup"])
    assert made.exit_code == 0, made.output
    assert (models / "cli-soup" / CARD_FILE).is_file()
    refused = CliRunner().invoke(app, ["average", "seed1", "no-such-model", "--out", "never"])
    assert refused.exit_code == 1, refused.output
    assert "no-such-model" in refused.output and not (models / "never").exists()
