"""An index is searched as it was configured when built or loaded (issue 49): no product or benchmark module sets a
search setting on an index afterwards. Why a guard: such assignments were how settings reached the index (the
second stage, the dense weight, the query expander), each caller in its own order, and an index is now slotted, so
an assignment left in a rarely run benchmark would fail only when that benchmark runs."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKED = ("assistant", "retriever", "models", "eval")
#: What an index was once given after load, and what now configures it (retriever/search/configuration.py).
SEARCH_ATTRIBUTES = {
    "reranker",
    "query_expander",
    "dense_weight",
    "tuning",
    "second_stage",
    "search_configuration",
    "_search",
}
#: The one place that sets a configuration: ReportIndex's own constructor and its `with_search` view.
OWNER = "retriever/index/report_index.py"


def assignments(source: str) -> list[tuple[int, str]]:
    """(line, `object.attribute`) of every assignment (plain, augmented, annotated or `setattr`) to a search
    attribute of an object other than `self`: a dataclass setting its own field is not an index's setting."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets for t in _flattened(target)]
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            name = node.args[1] if len(node.args) > 1 else None
            if isinstance(name, ast.Constant) and name.value in SEARCH_ATTRIBUTES:
                found.append((node.lineno, f"setattr(..., {name.value!r})"))
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr in SEARCH_ATTRIBUTES and not _is_self(target.value):
                found.append((node.lineno, ast.unparse(target)))
    return found


def _flattened(target: ast.expr) -> list[ast.expr]:
    return [t for e in target.elts for t in _flattened(e)] if isinstance(target, ast.Tuple | ast.List) else [target]


def _is_self(value: ast.expr) -> bool:
    return isinstance(value, ast.Name) and value.id in ("self", "cls")


def test_the_guard_sees_each_way_of_setting_an_index_after_load() -> None:
    source = (
        "index = ReportIndex.load(folder)\n"
        "index.reranker = stage\n"
        "index.dense_weight += 0.1\n"
        "a, idx.query_expander = 1, expander\n"
        "setattr(index, 'second_stage', None)\n"
        "self.reranker = stage\n"
    )
    assert [line for line, _ in assignments(source)] == [2, 3, 4, 5]


def test_no_module_sets_a_search_setting_on_an_index_after_load() -> None:
    offenders = [
        f"{path.relative_to(REPO).as_posix()}:{line}: {target}"
        for top in CHECKED
        for path in sorted((REPO / top).rglob("*.py"))
        if path.relative_to(REPO).as_posix() != OWNER
        for line, target in assignments(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "give the index its SearchConfiguration at load (or use with_search):\n" + "\n".join(
        offenders
    )
