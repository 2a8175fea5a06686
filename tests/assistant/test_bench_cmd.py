"""`assistant bench` runs eval.diagnosis.benchmark from the checkout: same options (its old spellings too), exit codes,
output.

The full benchmark through the command is tests/eval/test_bench_e2e.py; a wheel without the benchmarks is
tests/system/test_architecture.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from assistant.cli import app
from assistant.commands.bench_cmd import eval_arguments

pytestmark = pytest.mark.models  # real CLI processes or a real model: not the fast tier


def test_old_spellings_become_eval_diagnosis_spellings() -> None:
    assert eval_arguments(["--no-icd", "--k", "2", "--name", "x"]) == ["--icd", "off", "-k", "2", "--name", "x"]
    assert eval_arguments(["--icd"]) == ["--icd", "on"]
    assert eval_arguments(["--icd", "--limit", "3"]) == ["--icd", "on", "--limit", "3"]
    assert eval_arguments(["--icd", "off", "--k=3", "-k", "4"]) == ["--icd", "off", "-k=3", "-k", "4"]


def test_bench_forwards_arguments_exit_code_and_output(tmp_path: Path) -> None:
    """A missing cases file is eval.diagnosis.benchmark's exit 2 with its message, seen through the command's own
    output."""
    missing = tmp_path / "none.jsonl"
    result = CliRunner().invoke(app, ["bench", "--cases", str(missing), "--no-icd", "--k", "2"])
    assert result.exit_code == 2, result.output
    assert f"no cases file at {missing}" in result.output


def test_bench_help_is_eval_diagnosis_help() -> None:
    result = CliRunner().invoke(app, ["bench", "--help"])
    assert result.exit_code == 0, result.output
    assert "--conditions CONDITIONS" in result.output and "--icd {on,off}" in result.output
