"""The answer configuration `assistant ask` and the chat use, chosen by rule from the committed screening run.

    python -m eval.diagnosis_default                      # reads eval/results/diagnosis_screen.json, prints the choice

The screening run that writes it (the 44 dev cases `python -m eval.build_cases` marks; resumable, its prediction
cache is committed; query abbreviation expansion, added to the product after the screen started, stays off so
every condition searched alike; `$D[report,$P]`, the top report's impression alone, was added later as the
cheapest prompt, whose short question would meet the time-to-first-token target):

    D=hybrid-weighted:radsearch-minilm-hardneg-2ep P=prompt=diagnosis_candidates
    RADSEARCH_ABBREVIATION_EXPANSION=off RADSEARCH_LLM_THREADS=1 RADSEARCH_LLM_STRUCTURED=off \
    RADSEARCH_LLM_TIMEOUT=600 python -m eval.diagnosis \
      --cases ~/.local/share/radsearch/eval/cases/shared_screen.jsonl \
      --conditions "none,$D,$D[report],$D[k=3,$P],$D[findings,k=3,$P],$D[report,k=3,$P],$D[k=5,$P],$D[report,k=5,$P],\
    $D[report,$P],tophit:$D,tophit:$D[findings],tophit:$D[report]" \
      --cache eval/results/predictions/diagnosis_qwen1.5b.jsonl --name diagnosis_screen --icd off

Rule: among the screened conditions that ask the LLM with the product's default search method, the highest overall
accuracy on the screening cases wins; ties go to the cheaper prompt (fewer references k, then impressions before
whole reports as references, then matching on the impression, the product's default field). The choice sets how
many reports the model is shown (k), the field the finding is matched against and the prompt; tests keep
assistant/rag/answer_defaults.py equal to it, as the search method follows eval/results/retrieval.json. The held-out
confirmation run (eval.diagnosis on the 306 held-out cases) then measures the chosen configuration once, against no
retrieval, BM25 and mpnet (the generalist stand-in), with the product's default encoder; resumable, its cache is
committed:

    O="[report]"   # the chosen configuration's options (python -m eval.diagnosis_default --condition)
    H=hybrid-weighted:radsearch-minilm-labelneg-2ep-256-avg2
    run() { RADSEARCH_LLM_THREADS=1 RADSEARCH_LLM_STRUCTURED=off RADSEARCH_LLM_TIMEOUT=600 python -m eval.diagnosis \
      --conditions "none,bm25$O,mpnet$O,$H$O,tophit:$H$O" \
      --cache eval/results/predictions/diagnosis_heldout_qwen1.5b.jsonl --name diagnosis "$@"; }
    run --shard 0/2 & run --shard 1/2 & wait   # one 1-thread process per core fill the cache
    run                                         # then every answer comes from the cache: writes the results

On a machine without the cached indexes (a fresh one, or after retraining the encoder) both shards would build the
same index folders at once; start the second only after the first has logged "N predictions cached" (its indexes
are then saved), or give the shards only the conditions still to answer.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from eval.conditions import FIELDS, parse_conditions
from eval.shared_data import RESULTS
from retriever.search.methods import DEFAULT_METHOD

SCREEN_RESULTS = RESULTS / "diagnosis_screen.json"
#: Prompts by the length of what they show the model: references as impressions first.
PROMPT_COST = {"diagnosis_candidates": 0, "diagnosis_rag": 1}


def choose(results: dict[str, Any]) -> dict[str, Any]:
    """The winning condition of a diagnosis result file (see the module docstring), with the figures it won on."""
    accuracy = {name: row["overall"]["accuracy"] for name, row in results["summary"]["accuracy"].items()}
    candidates = [
        c for c in parse_conditions(",".join(results["conditions"]))
        if c.retrieval and c.uses_llm and c.method == DEFAULT_METHOD and c.name in accuracy
    ]
    if not candidates:
        raise ValueError(f"no LLM condition with the default method {DEFAULT_METHOD} in these results")

    def order(c: Any) -> tuple:
        return (-accuracy[c.name], c.k, PROMPT_COST.get(c.prompt, len(PROMPT_COST)), FIELDS.index(c.field))

    best, *rest = sorted(candidates, key=order)
    return {
        "condition": best.name,
        "k": best.k,
        "field": best.field,
        "prompt": best.prompt,
        "accuracy": accuracy[best.name],
        "runner_up": {"condition": rest[0].name, "accuracy": accuracy[rest[0].name]} if rest else None,
        "no_retrieval_accuracy": accuracy.get("none"),
        "n_cases": results["n_cases"],
    }


def read_choice(path: Path = SCREEN_RESULTS) -> dict[str, Any]:
    return choose(json.loads(path.read_text(encoding="utf-8")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.diagnosis_default", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=SCREEN_RESULTS, help="a diagnosis result JSON")
    parser.add_argument("--condition", action="store_true", help="print only the chosen condition's name")
    args = parser.parse_args(argv)
    choice = read_choice(args.results)
    print(choice["condition"] if args.condition else json.dumps(choice, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
