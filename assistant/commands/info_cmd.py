"""`assistant info`: the defaults in effect, where each came from (preset, environment, index), and the versions.

Why: the tuned defaults live in one preset (models/preset.json), but what a command really does also depends on the
environment and on the index it opens (search values belong to the encoder an index was built with). This prints
the result of all three, so a user can tell what `search`, `ask` and the chat will do before running them, and a
bug report can carry it. Loads no model.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Annotated, Any

import typer

from assistant.commands.shared import read_settings

#: Distributions whose versions decide results (printed, never imported).
PACKAGES = (
    "radsearch-assistant",
    "torch",
    "sentence-transformers",
    "transformers",
    "faiss-cpu",
    "onnxruntime",
    "llama-cpp-python",
    "gradio",
    "langchain-core",
)
Row = tuple[str, Any, str]


def info(
    index: Annotated[Path | None, typer.Option(help="Index to describe (default: the default index).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Show the defaults in effect, where each came from, and the versions of what produces results."""
    from rich.console import Console
    from rich.table import Table

    from assistant.commands.output import literal
    from retriever.index.output_paths import named_path

    err = Console(stderr=True)
    settings = read_settings(err)
    rows = defaults(settings, named_path(index or settings.paths.default_index))
    versions = installed_versions()
    if as_json:
        payload = {
            "defaults": {name: {"value": value, "from": origin} for name, value, origin in rows},
            "versions": versions,
        }
        typer.echo(json.dumps(payload, indent=2, default=str))
        return
    table = Table(title="Defaults in effect", show_lines=False)
    for column in ("setting", "value", "from"):
        table.add_column(column)
    for name, value, origin in rows:
        table.add_row(literal(name), literal(str(value)), literal(origin))
    console = Console()
    console.print(table)
    console.print(literal("versions: " + ", ".join(f"{name} {version}" for name, version in versions.items())))


def defaults(settings: Any, index_folder: Path) -> list[Row]:
    """(setting, value, origin) for everything a command decides without a flag."""
    from models.preset import PRESET
    from retriever.index.manifest import Manifest

    env = os.environ
    rows: list[Row] = [
        ("encoder for new indexes", PRESET.encoder, "preset"),
        (
            "encoder backend for new indexes",
            settings.encoder.backend,
            _origin(env, "RADSEARCH_ENCODER_BACKEND", "built-in (eval/results/performance.md)"),
        ),
        ("data folder", settings.paths.home, _origin(env, "RADSEARCH_HOME", "built-in")),
        ("default index", index_folder, _origin(env, "RADSEARCH_INDEX", "built-in")),
    ]
    try:
        manifest: Manifest | None = Manifest.read(index_folder)
        rows.append(("index encoder", manifest.encoder.name, "index manifest"))
        rows.append(("index diagnoses", concepts_state(manifest, index_folder), "index manifest"))
    except ValueError as exc:
        manifest = None
        rows.append(("index encoder", f"(no index: {exc})", "index manifest"))
    search = settings.search.values_for(manifest)
    origin = _search_origin(settings, manifest, search)
    rows += [
        ("search method", settings.search.method_for(search), origin),
        ("dense weight (hybrid-weighted)", search.dense_weight, origin),
        ("second stage", settings.search.stage_for(search) or "off", _origin(env, "RADSEARCH_RERANKER", origin)),
        ("second stage weight", search.second_stage_weight, origin),
        ("preset", settings.preset, _origin(env, "RADSEARCH_PRESET", "default")),
        ("answer: mode", settings.answer.mode, "preset"),
        ("answer: field matched", settings.answer.field, "preset"),
        ("answer: reports read (k)", settings.answer.k, "preset"),
        ("answer: prompt", settings.answer.prompt(settings.answer.mode) or "none (no model)", "preset"),
        (
            "LLM backend",
            settings.llm.backend,
            _origin(
                env,
                "RADSEARCH_LLM_BACKEND",
                "built-in" if not settings.llm.base_url else "environment (RADSEARCH_LLM_BASE_URL)",
            ),
        ),
        (
            "LLM model",
            settings.llm.model or "(server default)",
            next(
                (f"environment ({name})" for name in ("RADSEARCH_LLM_GGUF", "RADSEARCH_LLM_MODEL") if env.get(name)),
                "preset",
            ),
        ),
        ("LLM deadline (s)", settings.llm.timeout_s, _origin(env, "RADSEARCH_LLM_TIMEOUT", "built-in")),
    ]
    return rows


def concepts_state(manifest: Any, folder: Path) -> str:
    """Whether the index stores each report's diagnoses linked by this program's vocabulary (answers add them up,
    `search --diagnosis` filters by them) or answers must link at answer time, and what to run then."""
    from retriever.concepts.fingerprint import concept_rules

    if manifest.current_concepts:
        return f"stored, linked by this vocabulary ({manifest.concept_rules}): answers add them up"
    why = (
        "not stored (built before they were)"
        if not manifest.concept_rules
        else f"linked by another vocabulary ({manifest.concept_rules}; this program's is {concept_rules()})"
    )
    return (
        f"{why}: answers link at answer time (slower) and `search --diagnosis` is refused; "
        f"`assistant update --relink --index {folder}` links them"
    )


def _search_origin(settings: Any, manifest: Any, search: Any) -> str:
    """Where the search values come from: the index's manifest (its card), the named preset that writes over them,
    or the preset (no index, or one built before cards), naming the encoder they were measured for."""
    encoder = manifest.encoder.name if manifest is not None else search.measured_for
    measured = "" if search.measured_for == encoder else f", the default encoder's (none measured for {encoder})"
    if manifest is not None and manifest.search is not None:
        chosen = search.measured_for in settings.search.overlaid
        return (f"preset {settings.preset}" if chosen else "index manifest") + measured
    return "preset" + measured


def _origin(env: Any, variable: str, otherwise: str) -> str:
    return f"environment ({variable})" if env.get(variable) else otherwise


def installed_versions() -> dict[str, str]:
    """Python, the project's git commit (in a checkout) and the PACKAGES' versions, without importing them."""
    from importlib import metadata  # here: every command imports this module, and only `info` reads versions

    found = {"python": platform.python_version()}
    commit = _git_commit()
    if commit:
        found["commit"] = commit
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def _git_commit() -> str:
    """The checkout's commit (with `+changes` when the tree differs from it), "" outside a git checkout."""
    top = Path(__file__).resolve().parents[2]
    if not (top / ".git").exists():
        return ""
    try:
        head = subprocess.run(
            ["git", "-C", str(top), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(top), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return head + ("+changes" if dirty else "")
