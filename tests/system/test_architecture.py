"""The product stands apart from its benchmarks (issue 18), its packages are layered (issue 38): what the code
imports and what the wheel holds.

Imports are read from the source (every `import`, module-level and inside functions), not from a running
interpreter, so an import that only one code path reaches counts too.

The layers (LAYERS) are the dependency rule: a package may import packages of its own layer or below, never above,
and no two packages import each other. They are checked over packages, not modules: one concept per sub-package
(`retriever/index/`, `assistant/llm/`), so a module moved to the wrong package, or a helper a low package borrows
from a high one (models/ once used retriever's atomic write), fails here.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("assistant", "retriever", "models", "prompts")
BENCHMARKS = "eval"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def product_modules() -> dict[str, Path]:
    return {module_name(p): p for top in PRODUCT for p in sorted((REPO / top).rglob("*.py"))}


def all_modules() -> dict[str, Path]:
    """The product's modules and the benchmarks'."""
    return {module_name(p): p for top in (*PRODUCT, BENCHMARKS) for p in sorted((REPO / top).rglob("*.py"))}


#: The packages, lowest layer first: a package may import only packages of its own layer or below. Every folder with an
#: __init__.py, at any depth and in eval/ too, is a package of its own (test_every_package_has_a_layer), so a nested
#: package and its parent importing each other is a cycle like any other. A module belongs to the longest name here
#: that holds it. A few single modules are layers of their own where their package's other modules sit below them:
#: `retriever.reports.ingest` (ingestion reads every importer in `sources/`, which build on the report record and the
#: section parser), `assistant.cli` (the CLI, above the commands it registers) and `assistant.__main__` (the console
#: script, which hands `ask` to a warm server before it loads the CLI). `retriever` and `assistant` alone are their
#: packages' own modules: retriever/__init__.py (the offline lock-down); assistant's settings, text and llm_factory.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("prompts", "models"),
    ("retriever",),
    ("retriever.reports",),
    ("retriever.reports.sources",),
    ("retriever.reports.ingest",),
    ("retriever.negation",),
    ("retriever.concepts",),
    ("retriever.encoders.onnx",),
    ("retriever.encoders",),
    ("retriever.encoders.cluster",),
    ("retriever.search",),
    ("retriever.index",),
    ("retriever.training",),
    ("assistant.llm",),
    ("assistant",),
    ("assistant.rag",),
    ("assistant.feedback",),
    ("assistant.chat", "assistant.warm"),
    ("assistant.commands",),
    ("assistant.cli",),
    ("assistant.__main__",),
    (BENCHMARKS,),
    ("eval.common",),
    ("eval.retrieval",),
    ("eval.diagnosis",),
    ("eval.negation", "eval.robustness", "eval.concepts"),
    ("eval.training",),
    ("eval.perf",),
)


def layer_of(layers: tuple[tuple[str, ...], ...]) -> dict[str, int]:
    return {package: level for level, members in enumerate(layers) for package in members}


def package_of(module: str, packages: Iterable[str]) -> str | None:
    """The longest of `packages` that is `module` or holds it; None when none does."""
    holding = [p for p in packages if module == p or module.startswith(p + ".")]
    return max(holding, key=len) if holding else None


def package_graph(graph: dict[str, set[str]], packages: Iterable[str]) -> dict[str, set[str]]:
    """The module graph folded onto packages: package -> the other packages its modules import."""
    packages = tuple(packages)
    folded: dict[str, set[str]] = {p: set() for p in packages}
    for module, targets in graph.items():
        source = package_of(module, packages)
        if source is None:
            continue
        for target in targets:
            to = package_of(target, packages)
            if to is not None and to != source:
                folded[source].add(to)
    return folded


def layer_violations(graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...]) -> list[str]:
    """Every import of a module into a package of a higher layer than its own, as `a (pkg, layer) -> b (pkg, layer)`."""
    level = layer_of(layers)
    found = []
    for module, targets in sorted(graph.items()):
        source = package_of(module, level)
        if source is None:
            continue
        for target in sorted(targets):
            to = package_of(target, level)
            if to is not None and level[to] > level[source]:
                found.append(f"{module} ({source}, layer {level[source]}) -> {target} ({to}, layer {level[to]})")
    return found


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_names(path: Path, name: str) -> set[str]:
    """Every module `path` (module `name`) imports at run time, as dotted names (`from a import b` gives `a.b` and
    `a`: whether b is a module or an attribute is decided against the project's modules). Imports under
    `if TYPE_CHECKING:` never run, so they make no cycle."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (an imported name that is not a module counts as its module)."""
    graph = {}
    for name, path in modules.items():
        targets = set()
        for imported in imported_names(path, name):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_product_code_imports_nothing_from_the_benchmarks() -> None:
    offenders = {
        name: sorted(i for i in imported_names(path, name) if i.split(".")[0] == BENCHMARKS)
        for name, path in product_modules().items()
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_no_import_cycle_among_product_modules() -> None:
    found = cycles(import_graph(product_modules()))
    assert found == [], "import cycles (each a set of modules importing one another):\n" + "\n".join(map(str, found))


def packages_on_disk() -> set[str]:
    """Every package of the product and the benchmarks: each folder with an __init__.py, at any depth."""
    return {module_name(init) for top in (*PRODUCT, BENCHMARKS) for init in (REPO / top).rglob("__init__.py")}


def test_every_package_has_a_layer() -> None:
    """A new package (a folder with an __init__.py anywhere under a product package or eval/) is placed in LAYERS,
    not silently folded into its parent; and every name in LAYERS exists."""
    declared = set(layer_of(LAYERS))
    assert sorted(packages_on_disk() - declared) == []
    assert (
        sorted(
            p
            for p in declared
            if not (REPO / p.replace(".", "/")).exists() and not (REPO / (p.replace(".", "/") + ".py")).exists()
        )
        == []
    )


def test_packages_import_only_their_layer_or_below() -> None:
    found = layer_violations(import_graph(all_modules()), LAYERS)
    assert found == [], "imports of a higher layer (LAYERS, lowest first):\n" + "\n".join(found)


def test_no_import_cycle_among_packages() -> None:
    found = cycles(package_graph(import_graph(all_modules()), layer_of(LAYERS)))
    assert found == [], "package cycles (each a set of packages importing one another):\n" + "\n".join(map(str, found))


def test_the_layer_check_reports_a_lower_package_importing_a_higher_one() -> None:
    """The checks above are only as good as the checker: a low package reaching up, and two packages importing each
    other, are reported (the shape the tree had before issue 38: models.file_hash used retriever.atomic, retriever
    used models)."""
    layers = (("models",), ("retriever",), ("retriever.index",), ("app",))
    graph = {
        "models.file_hash": {"retriever.atomic", "models.paths"},
        "models.paths": set(),
        "retriever.atomic": set(),
        "retriever.index.store": {"models.paths", "retriever.atomic"},
        "retriever.encoder": {"models.file_hash"},
        "app.cli": {"retriever.index.store", "models.paths"},
    }
    reported = "models.file_hash (models, layer 0) -> retriever.atomic (retriever, layer 1)"
    assert layer_violations(graph, layers) == [reported]
    folded = package_graph(graph, layer_of(layers))
    assert folded == {
        "models": {"retriever"},
        "retriever": {"models"},
        "retriever.index": {"models", "retriever"},
        "app": {"retriever.index", "models"},
    }
    assert cycles(folded) == [["models", "retriever"]]
    graph["models.file_hash"] = {"models.paths"}  # the helper moved down: nothing to report
    assert layer_violations(graph, layers) == [] and cycles(package_graph(graph, layer_of(layers))) == []
    assert package_of("retriever.index.store", ("retriever", "retriever.index")) == "retriever.index"
    assert package_of("retrieverx.a", ("retriever",)) is None


def test_a_nested_package_and_its_parent_importing_each_other_is_a_cycle() -> None:
    """Folded into its parent, a sub-package's cycle with that parent vanishes (the tree before 2026-11-28 hid
    retriever.reports <-> retriever.reports.sources, retriever.encoders <-> retriever.encoders.onnx and eval.diagnosis
    <-> eval.perf <-> eval.robustness so); with every package named it is reported, and a module that is a layer of
    its own (retriever.reports.ingest) breaks it honestly: the importer is above both."""
    graph = {
        "retriever.reports.record": set(),
        "retriever.reports.ingest": {"retriever.reports.sources.tabular"},
        "retriever.reports.sources.tabular": {"retriever.reports.record"},
    }
    folded = package_graph(graph, ("retriever.reports",))
    assert cycles(folded) == []
    nested = ("retriever.reports", "retriever.reports.sources")
    assert cycles(package_graph(graph, nested)) == [["retriever.reports", "retriever.reports.sources"]]
    layers = (("retriever.reports",), ("retriever.reports.sources",), ("retriever.reports.ingest",))
    assert cycles(package_graph(graph, layer_of(layers))) == [] and layer_violations(graph, layers) == []


def test_the_graph_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    """The checks above are only as good as the import reader: a cycle hidden in a function is still a cycle."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from pkg import b\n")
    (package / "b.py").write_text("from . import c\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nimport pkg.a\nif TYPE_CHECKING:\n    import pkg.b\n"  # type-only: no edge
    )
    graph = import_graph({"pkg": package / "__init__.py", **{f"pkg.{m}": package / f"{m}.py" for m in "abc"}})
    assert graph == {"pkg": set(), "pkg.a": {"pkg", "pkg.b"}, "pkg.b": {"pkg", "pkg.c"}, "pkg.c": {"pkg.a"}}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The product's wheel as `pip wheel` builds it (no network: no isolation, no deps), from a copy of the checkout:
    setuptools reuses an in-tree build/ folder, so a file once built (a benchmark, a removed module) would stay."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for top in (*PRODUCT, BENCHMARKS):
        shutil.copytree(REPO / top, source / top, ignore=shutil.ignore_patterns("__pycache__"))
    build = ["wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)]
    subprocess.run([sys.executable, "-m", "pip", *build], check=True, capture_output=True, timeout=300)
    (built,) = out.glob("*.whl")
    return built


def test_wheel_holds_the_product_and_no_benchmarks(wheel: Path) -> None:
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist() if "/" in name}
    assert {top for top in tops if not top.endswith(".dist-info")} == set(PRODUCT)
    assert "assistant/commands/bench_cmd.py" in zipfile.ZipFile(wheel).namelist()


def test_installed_wheel_bench_says_how_to_run_the_benchmarks(wheel: Path, tmp_path: Path) -> None:
    """Installed without a checkout, `assistant bench` cannot find eval and says so (exit 2), not a traceback."""
    site = tmp_path / "site"
    install = ["install", "--no-deps", "--no-index", "-q", "--target", str(site), str(wheel)]
    subprocess.run([sys.executable, "-m", "pip", *install], check=True, capture_output=True, timeout=300)
    # -P: not the working directory on sys.path; the wheel's packages come first (PYTHONPATH precedes site-packages).
    run = [sys.executable, "-P", "-m", "assistant.cli", "bench", "--limit", "1"]
    done = subprocess.run(run, cwd=tmp_path, env={"PYTHONPATH": str(site), "PATH": ""}, capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert "python -m eval.diagnosis.benchmark" in done.stderr and "Traceback" not in done.stderr
