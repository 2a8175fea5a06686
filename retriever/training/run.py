"""Bookkeeping shared by the encoder and re-ranker trainers: the output name, resumable checkpoints, epoch times and
the loss history (retriever/training/train.py, retriever/training/reranker.py)."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from models.atomic import write_atomic
from retriever.training.data import TrainingError

RUN_FILE = "radsearch_run.json"
CHECKPOINTS = ".checkpoints"


@dataclass
class TrainResult:
    """Where the model went and the card written beside it (data counts, hyperparameters, metrics, times)."""

    path: Path
    card: dict[str, Any] = field(default_factory=dict)


def output_path(root: Path, name: str, overwrite: bool) -> Path:
    """models_root/name, refusing names that are paths and existing models (unless overwriting)."""
    if not name or name.startswith(".") or "/" in name or "\\" in name:
        raise TrainingError(f"--out must be a plain model name (letters, digits, - _), not {name!r}")
    target = root / name
    if target.exists() and not overwrite:
        raise TrainingError(f"model {name!r} already exists in {root}: pass --overwrite to replace it")
    return target


def prepare_checkpoints(folder: Path, run_key: dict[str, Any], *, resume: bool, overwrite: bool) -> str | None:
    """The checkpoint to resume from (None: start afresh in an emptied `folder`); refuses to mix up runs or drop one
    silently.

    A run killed while saving leaves a checkpoint folder without its trainer state (the Trainer writes that file
    last); the Trainer's own choice, the highest-numbered folder, would then load half-written weights. We resume
    from the last complete checkpoint and delete the incomplete ones after it, which hold nothing usable.
    """
    run_file = folder / RUN_FILE
    has_checkpoint = any(folder.glob("checkpoint-*"))
    if resume:
        complete = last_complete_checkpoint(folder)
        if complete is None:
            if has_checkpoint:
                raise TrainingError(
                    f"--resume: only checkpoints cut off while saving in {folder}; pass --overwrite (without "
                    "--resume) to start afresh"
                )
            raise TrainingError(f"--resume: no checkpoint in {folder}; run without --resume to start afresh")
        recorded = json.loads(run_file.read_text(encoding="utf-8")) if run_file.is_file() else None
        if recorded != json.loads(json.dumps(run_key)):
            raise TrainingError(
                f"--resume: the checkpoints in {folder} come from a run with other data or settings; use the "
                "same corpus and options, or pass --overwrite (without --resume) to start over"
            )
        for later in _checkpoints(folder):
            if _step(later) > _step(complete):
                shutil.rmtree(later)
        return str(complete)
    if has_checkpoint and not overwrite:
        raise TrainingError(
            f"an interrupted run left checkpoints in {folder}: pass --resume to continue it, or "
            "--overwrite to start over"
        )
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    run_file.write_text(json.dumps(run_key, indent=1), encoding="utf-8")
    return None


def last_complete_checkpoint(folder: Path) -> Path | None:
    """The highest-numbered checkpoint whose trainer state (saved after weights, optimizer and RNG) reads back."""
    for checkpoint in sorted(_checkpoints(folder), key=_step, reverse=True):
        try:
            json.loads((checkpoint / "trainer_state.json").read_text(encoding="utf-8"))["global_step"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        return checkpoint
    return None


def _checkpoints(folder: Path) -> list[Path]:
    return [p for p in folder.glob("checkpoint-*") if p.is_dir() and p.name.split("-", 1)[1].isdigit()]


def _step(checkpoint: Path) -> int:
    return int(checkpoint.name.split("-", 1)[1])


def loss_history(history: list[dict[str, Any]]) -> list[dict[str, float]]:
    return [{"step": row["step"], "loss": round(row["loss"], 4)} for row in history if "loss" in row]


class EpochTimer(TrainerCallback):
    """Wall-clock seconds of each training epoch (dev evaluation excluded: it runs after `on_epoch_end`), and
    the optimizer steps this process ran and where it started (a resumed run starts after its checkpoint)."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.steps_run = 0
        self.first_step: int | None = None
        self._started = time.perf_counter()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.steps_run += 1
        if self.first_step is None:
            self.first_step = state.global_step

    def on_epoch_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._started = time.perf_counter()

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.seconds.append(round(time.perf_counter() - self._started, 1))


def save_model(model: Any, target: Path, files: dict[str, str], *, overwrite: bool) -> None:
    """The model's weights and tokenizer plus our own `files` (name -> text) to a temporary folder beside `target`,
    renamed into place, so a crash never leaves a half-written model under its name.

    The README sentence-transformers generates is removed (a README of our own may be among `files`): it quotes
    training examples, i.e. report text, which must not travel with a model that may be shared.
    """

    def write(tmp: Path) -> None:
        model.save_pretrained(str(tmp))
        (tmp / "README.md").unlink(missing_ok=True)
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        if target.exists():
            if not overwrite:
                raise TrainingError(f"{target} appeared while training; pass --overwrite to replace it")
            shutil.rmtree(target)

    write_atomic(target, write)
