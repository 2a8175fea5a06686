"""Resumable checkpoints: a run killed while saving must resume from its last complete checkpoint (CI once resumed
from a half-written one and failed reading its config.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retriever.training.data import TrainingError
from retriever.training.run import RUN_FILE, last_complete_checkpoint, prepare_checkpoints

KEY = {"data": "tiny", "lr": 1e-4}


def _checkpoint(folder: Path, step: int, *, complete: bool) -> Path:
    path = folder / f"checkpoint-{step}"
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}" if complete else '{"hidden_si', encoding="utf-8")
    if complete:
        (path / "trainer_state.json").write_text(json.dumps({"global_step": step}), encoding="utf-8")
    return path


def _run(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RUN_FILE).write_text(json.dumps(KEY), encoding="utf-8")


def test_resume_skips_and_removes_a_checkpoint_killed_while_saving(tmp_path: Path) -> None:
    _run(tmp_path)
    good = _checkpoint(tmp_path, 2, complete=True)
    _checkpoint(tmp_path, 1, complete=True)
    half = _checkpoint(tmp_path, 4, complete=False)
    assert prepare_checkpoints(tmp_path, KEY, resume=True, overwrite=False) == str(good)
    assert not half.exists() and good.exists() and (tmp_path / "checkpoint-1").exists()


def test_a_truncated_trainer_state_is_not_a_complete_checkpoint(tmp_path: Path) -> None:
    _checkpoint(tmp_path, 3, complete=True)
    _checkpoint(tmp_path, 6, complete=True)
    (tmp_path / "checkpoint-6" / "trainer_state.json").write_text('{"global_st', encoding="utf-8")
    assert last_complete_checkpoint(tmp_path) == tmp_path / "checkpoint-3"


def test_resume_with_only_half_written_checkpoints_says_so(tmp_path: Path) -> None:
    _run(tmp_path)
    _checkpoint(tmp_path, 2, complete=False)
    with pytest.raises(TrainingError, match="only checkpoints cut off while saving"):
        prepare_checkpoints(tmp_path, KEY, resume=True, overwrite=False)
    with pytest.raises(TrainingError, match="pass --resume"):
        prepare_checkpoints(tmp_path, KEY, resume=False, overwrite=False)  # not silently dropped either


def test_a_fresh_start_empties_the_folder_and_records_the_run(tmp_path: Path) -> None:
    _checkpoint(tmp_path, 2, complete=True)
    assert prepare_checkpoints(tmp_path, KEY, resume=False, overwrite=True) is None
    assert not list(tmp_path.glob("checkpoint-*"))
    assert json.loads((tmp_path / RUN_FILE).read_text(encoding="utf-8")) == KEY
