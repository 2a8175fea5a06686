"""`assistant bench`: the diagnosis benchmark (eval.diagnosis) from the console script.

Same options and files as `python -m eval.diagnosis`; predictions are cached, so rerunning after an interruption
only asks for what is missing and then regrades.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Annotated

import typer


def bench(
    cases: Annotated[
        Path | None, typer.Option(help="Cases JSONL (id, findings, diagnosis, accept, source); default: shared data cases.")
    ] = None,
    corpus: Annotated[
        list[str] | None, typer.Option(help="Report corpus to retrieve from (repeatable); default: the shared data.")
    ] = None,
    conditions: Annotated[
        str | None,
        typer.Option(help="Comma-separated: none, bm25, encoders (default: none,mpnet,radsearch-minilm)."),
    ] = None,
    field: Annotated[str, typer.Option(help="Field retrieved reports are matched on.")] = "impression",
    k: Annotated[int, typer.Option("-k", "--k", min=1, max=20, help="Reports given to the LLM (1 = the paper).")] = 1,
    backend: Annotated[str | None, typer.Option(help="embedded or openai (default: RADSEARCH_LLM_* settings).")] = None,
    model: Annotated[str | None, typer.Option(help="embedded: qwen1.5b, smollm2 or a .gguf; openai: model name.")] = None,
    max_tokens: Annotated[int | None, typer.Option(min=8, help="Answer tokens (default 32; the diagnosis comes first).")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Concurrent requests to a server backend.")] = 4,
    limit: Annotated[int, typer.Option(min=0, help="Only the first N cases (0 = all).")] = 0,
    cache: Annotated[Path | None, typer.Option(help="Prediction cache JSONL (default: in the data folder).")] = None,
    out: Annotated[Path | None, typer.Option(help="Results folder (default: eval/results).")] = None,
    name: Annotated[str, typer.Option(help="Stem of the result files.")] = "diagnosis",
    icd: Annotated[bool, typer.Option(help="Grade ICD-10-CM category agreement too.")] = True,
) -> None:
    """Benchmark diagnosis accuracy: cases x retrieval conditions x one LLM, with CIs and McNemar tests."""
    import sys

    from eval.conditions import DEFAULT_PROMPT
    from eval.diagnosis import DEFAULT_CONDITIONS, DEFAULT_MAX_TOKENS, run
    from eval.shared_data import RESULTS, SHARED_DATA, eval_home

    args = argparse.Namespace(
        cases=cases or eval_home() / "cases" / "shared_heldout.jsonl",
        corpus=corpus or [],
        data=SHARED_DATA,
        conditions=conditions or DEFAULT_CONDITIONS,
        field=field,
        k=k,
        prompt=DEFAULT_PROMPT,
        backend=backend,
        model=model,
        max_tokens=max_tokens or DEFAULT_MAX_TOKENS,
        workers=workers,
        limit=limit,
        cache=cache or eval_home() / "predictions.jsonl",
        out=out or RESULTS,
        name=name,
        icd="on" if icd else "off",
    )
    code = run(args, " ".join(["assistant", *sys.argv[1:]]))
    if code:
        raise typer.Exit(code)
