"""The preset is the single source of every tuned default (issue 42): no product module defines one of its own, the
modules that expose them read the preset, and an index built with an encoder no rule measured says so."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from models.preset import PRESET, PRESET_FILE, load_preset, parse_preset

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("assistant", "retriever", "models", "prompts")
#: Where a tuned value or a model name must not be written either (issue 49): the benchmarks.
CHECKED = (*PRODUCT, "eval")
#: Module-level names that hold a tuned default, and the preset value each must be.
TUNED = {
    "DEFAULT_METHOD": PRESET.default_search.method,
    "DEFAULT_SECOND_STAGE": PRESET.default_search.second_stage,
    "DENSE_WEIGHT": PRESET.default_search.dense_weight,
    "WEIGHT": PRESET.default_search.second_stage_weight,
    "K": PRESET.answer.k,
    "FIELD": PRESET.answer.field,
    "MODE": PRESET.answer.mode,
    "NORAG_PROMPT": PRESET.answer.prompts["no-retrieval"],
    "RERANK_WEIGHT": PRESET.rerank_weight,
    "INDEX_BACKEND": PRESET.index_backend,
    "DEFAULT_GGUF": PRESET.answer.llm,
    "WEIGHTING": PRESET.answer.evidence_weighting,
    "APPEARANCE": PRESET.answer.evidence_appearance_weight,
}


def literal_tuned_assignments(source: str) -> list[str]:
    """Module-level assignments of a literal to a TUNED name (`X = 0.7`, `X: float = 0.7`)."""
    found = []
    for node in ast.parse(source).body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign) and node.value is not None
            else []
        )
        value = getattr(node, "value", None)
        for target in targets:
            if isinstance(target, ast.Name) and target.id in TUNED and isinstance(value, ast.Constant):
                found.append(f"{target.id} = {value.value!r} (line {node.lineno})")
    return found


def test_the_checker_finds_a_tuned_default_written_as_a_literal() -> None:
    assert literal_tuned_assignments("DENSE_WEIGHT = 0.7\nK: int = 1\nOTHER = 3\nFIELD = PRESET.answer.field\n") == [
        "DENSE_WEIGHT = 0.7 (line 1)",
        "K = 1 (line 2)",
    ]


def test_no_product_module_defines_a_tuned_default_outside_the_preset() -> None:
    offenders = {
        path.relative_to(REPO).as_posix(): found
        for top in PRODUCT
        for path in sorted((REPO / top).rglob("*.py"))
        if (found := literal_tuned_assignments(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}, "tuned defaults belong in models/preset.json; read them from models.preset.PRESET"


def test_the_modules_that_expose_tuned_defaults_read_them_from_the_preset() -> None:
    from assistant import settings
    from assistant.commands.index_cmd import index
    from assistant.rag import answer_defaults, evidence
    from eval.retrieval.benchmark import DEFAULT_MODEL
    from retriever.encoders import backends
    from retriever.search import fusion, methods, rerank, support

    exposed = {
        "DEFAULT_METHOD": methods.DEFAULT_METHOD,
        "DEFAULT_SECOND_STAGE": methods.DEFAULT_SECOND_STAGE,
        "DENSE_WEIGHT": fusion.DENSE_WEIGHT,
        "WEIGHT": support.WEIGHT,
        "K": answer_defaults.K,
        "FIELD": answer_defaults.FIELD,
        "MODE": answer_defaults.MODE,
        "NORAG_PROMPT": answer_defaults.NORAG_PROMPT,
        "RERANK_WEIGHT": rerank.RERANK_WEIGHT,
        "INDEX_BACKEND": backends.INDEX_BACKEND,
        "DEFAULT_GGUF": settings.DEFAULT_GGUF,
        "WEIGHTING": evidence.WEIGHTING,
        "APPEARANCE": evidence.APPEARANCE,
    }
    assert exposed == TUNED
    import inspect

    assert inspect.signature(index).parameters["encoder"].default == PRESET.encoder == DEFAULT_MODEL


def test_the_committed_preset_names_a_shipped_encoder_with_search_values() -> None:
    from models.registry import ENCODERS

    assert ENCODERS[PRESET.encoder].shipped
    assert PRESET.search_for(PRESET.encoder) == PRESET.default_search
    assert PRESET.search_for("no-such-encoder") is None


def test_a_malformed_preset_names_its_file(tmp_path: Path) -> None:
    raw = json.loads(PRESET_FILE.read_text(encoding="utf-8"))
    del raw["answer"]["k"]
    broken = tmp_path / "preset.json"
    broken.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(ValueError, match="preset.json: not a valid preset"):
        load_preset(broken)
    with pytest.raises(ValueError, match="schema_version"):
        parse_preset(raw | {"schema_version": 99}, broken)


def test_a_written_preset_reads_back_equal(tmp_path: Path) -> None:
    from models.preset import write_preset

    target = tmp_path / "preset.json"
    write_preset(PRESET, target)
    assert load_preset(target) == PRESET


def test_an_index_of_an_unmeasured_encoder_says_it_is_searched_with_the_default_encoders_values(
    tmp_path: Path, minilm
) -> None:
    from llm_fixtures import build_index

    from retriever.index.report_index import ReportIndex

    folder = build_index(tmp_path / "minilm-index", minilm)
    index = ReportIndex.load(folder, minilm)
    assert index.card.measured_for == PRESET.encoder != index.manifest.encoder.name
    assert index.search_configuration.dense_weight == PRESET.default_search.dense_weight
    notes = index.notices(folder, "hybrid-weighted")
    assert any("no search values were measured" in n and "'minilm'" in n for n in notes)
    assert not any("no search values" in n for n in index.notices(folder, "bm25"))


def test_a_rule_adopts_its_choice_for_one_encoder_only(tmp_path: Path) -> None:
    from models.preset import adopt_search, write_preset

    target = tmp_path / "preset.json"
    write_preset(PRESET, target)
    updated = adopt_search("my-site", "eval/results/fusion_sweep_site.json", target, dense_weight=0.4)
    assert updated.search_for("my-site").dense_weight == 0.4
    assert updated.search_for("my-site").method == PRESET.default_search.method
    assert updated.search_for("my-site").chosen_by == ("eval/results/fusion_sweep_site.json",)
    assert updated.default_search == PRESET.default_search and load_preset(target) == updated


def model_name_defaults(source: str, names: set[str]) -> list[str]:
    """Where a model's name is written as a value: assigned (`X = "qwen1.5b"`), a parameter's default or an
    argparse/typer `default=` (help text and docstrings may name models; a default must come from the preset)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        values: list[ast.expr | None] = []
        if isinstance(node, ast.Assign | ast.AnnAssign):
            values = [node.value]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            values = [*node.args.defaults, *node.args.kw_defaults]
        elif isinstance(node, ast.keyword) and node.arg == "default":
            values = [node.value]
        found += [
            f"{value.value!r} (line {value.lineno})"
            for value in values
            if isinstance(value, ast.Constant) and value.value in names
        ]
    return found


def test_the_model_checker_finds_a_default_model_name() -> None:
    source = 'M = "qwen1.5b"\ndef f(m="smollm2"): ...\np.add_argument("--model", default="qwen1.5b", help="qwen1.5b")\n'
    assert model_name_defaults(source, {"qwen1.5b", "smollm2"}) == [
        "'qwen1.5b' (line 1)",
        "'smollm2' (line 2)",
        "'qwen1.5b' (line 3)",
    ]


def test_no_module_or_makefile_names_a_default_model_outside_the_preset() -> None:
    """The embedded LLM is named once, in the preset (models/gguf.py registers what each name is)."""
    import re

    from models.gguf import MODELS

    names = set(MODELS)
    offenders = {
        path.relative_to(REPO).as_posix(): found
        for top in CHECKED
        for path in sorted((REPO / top).rglob("*.py"))
        if path.relative_to(REPO).as_posix() != "models/gguf.py"
        and (found := model_name_defaults(path.read_text(encoding="utf-8"), names))
    }
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    if written := sorted(n for n in names if re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w.-])", makefile)):
        offenders["Makefile"] = written
    assert offenders == {}, "name the default model in models/preset.json (answer.llm) and read it from there"
