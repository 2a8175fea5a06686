"""A benchmark stopped part-way resumes from its finished measures (eval/common/resumable.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.common.resumable import run_resumable


class Stop(Exception):
    """Stands for the run being killed in the middle of a measure."""


def jobs(calls: list[str], stop_at: str | None = None) -> dict:
    def measure(name: str, value: int):
        def run() -> int:
            calls.append(name)
            if name == stop_at:
                raise Stop(name)
            return value

        return run

    return {
        "without": {"a": measure("without/a", 1), "b": measure("without/b", 2)},
        "with": {"a": measure("with/a", 3), "b": measure("with/b", 4)},
    }


def test_a_stopped_run_resumes_with_only_the_measures_not_yet_finished(tmp_path: Path) -> None:
    progress = tmp_path / "run.partial.json"
    first: list[str] = []
    with pytest.raises(Stop):
        run_resumable(jobs(first, stop_at="with/a"), {"split": "dev"}, progress, log=lambda _: None)
    assert first == ["without/a", "without/b", "with/a"]
    assert json.loads(progress.read_text())["done"] == {"without": {"a": 1, "b": 2}}

    second: list[str] = []
    done = run_resumable(jobs(second), {"split": "dev"}, progress, log=lambda _: None)
    assert second == ["with/a", "with/b"]
    assert done == {"without": {"a": 1, "b": 2}, "with": {"a": 3, "b": 4}}


def test_another_key_starts_over(tmp_path: Path) -> None:
    progress = tmp_path / "run.partial.json"
    run_resumable(jobs([]), {"weights": "old"}, progress, log=lambda _: None)
    calls: list[str] = []
    run_resumable(jobs(calls), {"weights": "retrained"}, progress, log=lambda _: None)
    assert calls == ["without/a", "without/b", "with/a", "with/b"]


def test_without_a_progress_file_every_measure_runs_and_nothing_is_written(tmp_path: Path) -> None:
    calls: list[str] = []
    assert run_resumable(jobs(calls), {}, None, log=lambda _: None)["with"] == {"a": 3, "b": 4}
    assert len(calls) == 4 and not list(tmp_path.iterdir())


def test_a_key_or_result_with_tuples_resumes_and_returns_the_same_as_a_fresh_run(tmp_path: Path) -> None:
    progress = tmp_path / "run.partial.json"
    key = {"refs": ("without", "with")}
    fresh = run_resumable({"g": {"m": lambda: {"ci95": (0.1, 0.2)}}}, key, progress, log=lambda _: None)
    calls: list[str] = []
    resumed = run_resumable({"g": {"m": lambda: calls.append("m")}}, key, progress, log=lambda _: None)
    assert calls == [] and resumed == fresh == {"g": {"m": {"ci95": [0.1, 0.2]}}}
