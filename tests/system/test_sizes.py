"""No product module over 400 lines and no product function over 60 (issue 49): a reader opens a module and sees
one job, a function and sees one step."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("assistant", "retriever", "models", "prompts")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _modules() -> list[Path]:
    return [p for top in PRODUCT for p in sorted((REPO / top).rglob("*.py")) if "__pycache__" not in p.parts]


def long_functions(source: str) -> list[tuple[str, int]]:
    """(name, lines) of every function or method in `source` longer than MAX_FUNCTION_LINES (docstring included)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                found.append((node.name, lines))
    return found


def test_the_checker_finds_a_long_function() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(f"def f():\n{body}\n") == [("f", MAX_FUNCTION_LINES + 1)]


def test_no_product_module_is_over_400_lines() -> None:
    too_long = {
        path.relative_to(REPO).as_posix(): lines
        for path in _modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not too_long, too_long


def test_no_product_function_is_over_60_lines() -> None:
    too_long = {
        f"{path.relative_to(REPO).as_posix()}:{name}": lines
        for path in _modules()
        for name, lines in long_functions(path.read_text(encoding="utf-8"))
    }
    assert not too_long, too_long
