"""Plain `pytest` is the fast tier and the README's `make test` still runs what it ran (issue 49): the marks are
read from pyproject.toml and the Makefile, so a change to either that widens the default or narrows CI fails here."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _addopts() -> list[str]:
    options = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    return list(options["addopts"])


def test_plain_pytest_runs_only_the_fast_tier_with_strict_markers() -> None:
    addopts = _addopts()
    assert "--strict-markers" in addopts
    assert addopts[addopts.index("-m") + 1] == "not slow and not models"


def test_make_test_runs_everything_in_ci_and_all_but_slow_otherwise() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    (marks,) = re.findall(r"^PYTEST_MARKS := (.*)$", makefile, flags=re.MULTILINE)
    assert marks == '$(if $(filter true 1,$(CI) $(RUN_SLOW)),-m "",-m "not slow")'
    assert "$(VENV)/bin/pytest $(PYTEST_MARKS)" in makefile
