"""No product module over 400 lines (issue 18): one module, one job, readable in one sitting."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PRODUCT = ("assistant", "retriever", "models", "prompts")
MAX_LINES = 400


def _modules() -> list[Path]:
    return sorted(p for top in PRODUCT for p in (REPO / top).rglob("*.py"))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_module_is_at_most_400_lines(path: Path) -> None:
    name = path.relative_to(REPO).as_posix()
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines: split it along its jobs (at most {MAX_LINES})"
