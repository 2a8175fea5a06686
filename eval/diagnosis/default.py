"""The answer configuration `assistant ask` and the chat use, chosen by rule from committed dev results.

    python -m eval.diagnosis.default                      # the choice among the answer arms, on the dev split's cases
    python -m eval.diagnosis.default --adopt              # ... and write it into models/preset.json

Since 2026-11-27 (issue 37) the choice is among answer *arms* measured side by side on the held-out cases whose
report is in the dev split (136 of the 306): the model choosing among the evidence differential under a constrained
schema (`prompt=diagnosis_evidence`), the evidence differential alone with no model (`evidence:`), and the free-text
prompt that was the default until then (its answers from eval/results/diagnosis_native.json, the committed run of
that configuration). Rule: the highest top-1 accuracy on the dev cases wins; ties go to the cheaper arm (no model,
then a constrained choice of a few tokens, then free text; then fewer reports, then the product's default field, then
the earlier weighting). Later the same evening the evidence differential was swept over how many reports it reads
(k = 20 to 100) and how it weighs them by rank (1/rank, 1/sqrt(rank), uniform), and the model's choice was measured
again over the sweep's winner (`diagnosis_dev_evidence`, `diagnosis_dev_choice`; the same rule reads all four files):

    D=hybrid-weighted:radsearch C=""
    for w in rank uniform sqrt; do for k in 20 30 40 50 75 100; do C="$C,evidence:$D[report,k=$k,weighting=$w]"; done
    done
    python -m eval.diagnosis.benchmark --split dev --icd off --name diagnosis_dev_evidence --conditions "${C#,}"
The run that measures the new arms (resumable, cache committed):

    D=hybrid-weighted:radsearch
    python -m eval.diagnosis.benchmark --split dev --icd off \
      --conditions "evidence:$D[report,k=20],$D[report,k=20,prompt=diagnosis_evidence]" --name diagnosis_dev_arms \
      --cache eval/results/predictions/diagnosis_evidence_qwen1.5b.jsonl

Before, the configuration was chosen from the screening run below by the rule of `choose` (kept: it documents how the
free-text configuration was picked):

The screening run that writes it (the 44 dev cases `python -m eval.diagnosis.build_cases` marks; resumable, its
prediction cache is committed; query abbreviation expansion, added to the product after the screen started, stays off so
every condition searched alike; `$D[report,$P]`, the top report's impression alone, was added later as the cheapest
prompt, whose short question would meet the time-to-first-token target):

    D=hybrid-weighted:radsearch-minilm-hardneg-2ep P=prompt=diagnosis_candidates
    RADSEARCH_ABBREVIATION_EXPANSION=off RADSEARCH_LLM_THREADS=1 RADSEARCH_LLM_STRUCTURED=off \
    RADSEARCH_LLM_TIMEOUT=600 python -m eval.diagnosis.benchmark \
      --cases ~/.local/share/radsearch/eval/cases/shared_screen.jsonl \
      --conditions "none,$D,$D[report],$D[k=3,$P],$D[findings,k=3,$P],$D[report,k=3,$P],$D[k=5,$P],$D[report,k=5,$P],\
    $D[report,$P],tophit:$D,tophit:$D[findings],tophit:$D[report]" \
      --cache eval/results/predictions/diagnosis_qwen1.5b.jsonl --name diagnosis_screen --icd off

Rule: among the screened conditions that ask the LLM with the product's default search method, the highest overall
accuracy on the screening cases wins; ties go to the cheaper prompt (fewer references k, then impressions before
whole reports as references, then matching on the impression, the product's default field). The choice sets how
many reports the model is shown (k), the field the finding is matched against and the prompt; tests keep
assistant/rag/answer_defaults.py equal to it, as the search method follows eval/results/retrieval.json. The held-out
confirmation run (eval.diagnosis.benchmark on the 306 held-out cases) then measures the chosen configuration once,
against no retrieval, BM25 and mpnet (the generalist stand-in), with the product's default encoder; resumable, its cache
is committed:

    O="[report]"   # the chosen configuration's options (python -m eval.diagnosis.default --condition)
    H=hybrid-weighted:radsearch-minilm-labelneg-2ep-256-avg2
    run() { RADSEARCH_LLM_THREADS=1 RADSEARCH_LLM_STRUCTURED=off RADSEARCH_LLM_TIMEOUT=600 \
      python -m eval.diagnosis.benchmark \
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

from eval.common.shared_data import RESULTS
from eval.diagnosis.conditions import EVIDENCE, FIELDS, parse_conditions
from eval.diagnosis.results import DiagnosisResults
from retriever.search.methods import DEFAULT_METHOD

SCREEN_RESULTS = RESULTS / "diagnosis_screen.json"
#: The answer arms measured on the dev cases, the committed run of the free-text default they are compared with, the
#: evidence differential's sweep over k and weighting, and the model's choice among the evidence the sweep chose.
DEV_ARMS = (RESULTS / "diagnosis_dev_weighting.json",)
#: Until 2026-11-28 the arms of these files competed; since issue 48's region and negation rules changed what every
#: evidence arm reads, only the run under today's rules does (docs/decisions/2026-11-28-evidence-weighting.md).
EARLIER_DEV_ARMS = (
    RESULTS / "diagnosis_dev_arms.json",
    RESULTS / "diagnosis_native.json",
    RESULTS / "diagnosis_dev_evidence.json",
    RESULTS / "diagnosis_dev_choice3.json",
)
#: The evidence weighting of conditions named without `weighting=` in DEV_ARMS: they were run when 1/rank was the
#: only weighting (before 2026-11-27's sweep); ties between weightings also go to it, the earlier default.
LEGACY_WEIGHTING = "rank"
#: Ties between weightings: since 2026-11-28 to sqrt (the default before), then rank and uniform.
WEIGHTING_ORDER = ("sqrt", "rank", "uniform")
#: Prompts by the length of what they show the model: references as impressions first.
PROMPT_COST = {"diagnosis_candidates": 0, "diagnosis_rag": 1}
#: Arms by what an answer costs: no model, a constrained choice (a few tokens), free text (a whole answer).
ARM_COST = {"evidence": 0, "diagnosis_evidence": 1, "diagnosis_candidates": 2, "diagnosis_rag": 3}


def choose(results: DiagnosisResults) -> dict[str, Any]:
    """The winning condition of a diagnosis result file (see the module docstring), with the figures it won on."""
    accuracy = {name: row.overall.accuracy for name, row in results.summary.accuracy.items()}
    candidates = [
        c
        for c in parse_conditions(",".join(results.conditions))
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
        "n_cases": results.n_cases,
    }


def read_choice(path: Path = SCREEN_RESULTS) -> dict[str, Any]:
    return choose(DiagnosisResults.read(path))


def dev_accuracy(paths: tuple[Path, ...] = DEV_ARMS) -> tuple[dict[str, float], int]:
    """Top-1 accuracy of every condition of the result files on the cases whose report is in the dev split (the same
    cases in every file, else ValueError), and how many cases that is."""
    from retriever.reports.splits import split_of

    accuracy: dict[str, float] = {}
    cases: set[str] | None = None
    for path in paths:
        for condition, verdicts in DiagnosisResults.read(path).cases.items():
            dev = [v for v in verdicts if split_of(v.case_id) == "dev"]
            ids = {v.case_id for v in dev}
            if cases is not None and ids != cases:
                raise ValueError(f"{path.name}: {condition} was run on other dev cases than the other arms")
            cases = ids
            accuracy[condition] = sum(v.correct for v in dev) / len(dev) if dev else 0.0
    return accuracy, len(cases or ())


def choose_arm(accuracy: dict[str, float], n_cases: int) -> dict[str, Any]:
    """The winning answer arm (module docstring) among conditions searching with the product's default method."""
    parsed = {name: parse_conditions(name)[0] for name in accuracy}  # each alone: names hold commas
    arms = {
        name: c
        for name, c in parsed.items()
        if c.retrieval and c.method == DEFAULT_METHOD and (c.uses_llm or c.spec.startswith(EVIDENCE))
    }
    if not arms:
        raise ValueError(f"no answer arm with the default method {DEFAULT_METHOD} in these results")

    def cost(c: Any) -> int:
        return ARM_COST["evidence"] if not c.uses_llm else ARM_COST.get(c.prompt, len(ARM_COST))

    def weighting(c: Any) -> str:
        return c.weighting or LEGACY_WEIGHTING

    def weighting_order(c: Any) -> tuple:
        """The earlier default first, then the similarity weightings from the gentlest (largest T)."""
        name = weighting(c)
        if name in WEIGHTING_ORDER:
            return (0, WEIGHTING_ORDER.index(name))
        return (1, -float(name.partition(":")[2]))

    def order(name: str) -> tuple:
        c = arms[name]
        return (-round(accuracy[name], 9), cost(c), c.k, FIELDS.index(c.field), weighting_order(c))

    ranked = sorted(arms, key=order)
    best = arms[ranked[0]]
    return {
        "condition": ranked[0],
        "k": best.k,
        "field": best.field,
        "prompt": best.prompt if best.uses_llm else "evidence",
        "weighting": weighting(best),
        "accuracy": accuracy[ranked[0]],
        "arms": {name: round(accuracy[name], 4) for name in ranked},
        "no_retrieval_accuracy": accuracy.get("none"),
        "n_cases": n_cases,
    }


def adopt(choice: dict[str, Any], source: str) -> None:
    """Write the chosen arm's answer mode (and its prompt, when it asks a model), field, k and evidence weighting into
    models/preset.json, naming `source`."""
    from dataclasses import replace

    from assistant.rag.modes import mode_of_prompt
    from models.preset import load_preset, write_preset

    preset = load_preset()
    mode = mode_of_prompt(choice["prompt"])
    prompts = preset.answer.prompts | ({mode.value: choice["prompt"]} if mode.asks_model else {})
    answer = replace(preset.answer, mode=mode.value, field=choice["field"], k=choice["k"], prompts=prompts)
    write_preset(replace(preset, answer=replace(answer, evidence_weighting=choice["weighting"], chosen_by=source)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.diagnosis.default",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--screen", action="store_true", help="the earlier rule, on the screening run")
    parser.add_argument("--condition", action="store_true", help="print only the chosen condition's name")
    parser.add_argument("--adopt", action="store_true", help="write the choice into models/preset.json")
    args = parser.parse_args(argv)
    choice = read_choice() if args.screen else choose_arm(*dev_accuracy())
    print(choice["condition"] if args.condition else json.dumps(choice, indent=2))
    if args.adopt and not args.screen:
        adopt(choice, ", ".join(path.relative_to(RESULTS.parents[1]).as_posix() for path in DEV_ARMS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
