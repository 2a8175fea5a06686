"""Choose the default encoder recipe on the DEV split, by a rule fixed before the candidates' numbers were seen.

    python -m eval.retrieval.benchmark --split dev --name retrieval_dev --rankers ...,hybrid-weighted:M
    python -m eval.robustness --split dev --name robustness_dev --parts queries,errors \\
        --rankers hybrid-weighted:M+expand,...
    python -m eval.negation.real_pairs --encoders M ... --pair-sets "real dev" \\
        --out eval/results/negation_real_pairs_dev
    python -m eval.training.encoder_choice \
        --candidates radsearch-minilm-negmargin-2ep-256,radsearch-minilm-labelneg-2ep-256-avg2

Why a rule: the encoder recipe trades targets against each other (negation hard negatives with a margin separated
"effusion" from "no effusion" and cost a little plain retrieval), and picking by eye on the test split would tune
the product to it. Every candidate is scored as users get it: the product's search method over the model
(`hybrid-weighted:M`), with the shipped query expansion where the benchmark has it (`+expand`).

Rule: the candidate meeting the most dev targets wins, where the targets are the retrieval benchmark's target rows
(beat BM25 and mpnet on every source, eval.retrieval.benchmark.check_targets), real-pair negation Δcos >= 0.45
(issue 17), error discrimination >= 0.85 and an abbreviated-query match@5 drop <= 0.02 (issue 20). Ties are broken
by the mean of three dev scores in [0, 1] (pooled findings -> impression match@5, error discrimination, abbreviated
match@5), then by keeping the current default. Only recipes of at most MAX_TRAINING_RUNS training runs compete
(2026-11-27, docs/decisions/2026-11-27-shipped-encoder.md): the default ships in the repository and `make encoder`
rebuilds and re-checks it on the project's 2-core machine next to the measurements that depend on it, where one run
of the recipes measured here takes about 45 minutes and an average of N runs (`-avgN`) N times that.
Writes eval/results/encoder_choice_dev.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

from eval.common.records import Record, ResultsFile, optional
from eval.common.shared_data import RESULTS, add_out_option, write_results
from eval.negation.results import RealPairs
from eval.retrieval.benchmark import CHOICE_RESULTS, DEFAULT_MODEL, check_targets, product_default
from eval.retrieval.results import RetrievalResults
from eval.robustness.report import Scores, shipped
from eval.robustness.results import RobustnessResults

NEGATION_TARGET = 0.45  # issue 17 (eval.negation.real_pairs.TARGET)
ERRORS_TARGET = 0.85  # issue 20
ABBREVIATED_DROP = 0.02  # issue 20
ROBUSTNESS_DEV = RESULTS / "robustness_dev.json"
NEGATION_DEV = RESULTS / "negation_real_pairs_dev.json"
NEGATION_DEV_PAIRS = "real dev"
#: Training runs a shipped recipe may take (module docstring).
MAX_TRAINING_RUNS = 1


def training_runs(model: str) -> int:
    """How many training runs a candidate's recipe takes: N for a weight average of N runs (`NAME-avgN`), else 1."""
    found = re.search(r"-avg(\d+)$", model)
    return int(found.group(1)) if found else 1


def shipped_source() -> str:
    """The trained model the shipped encoder was packaged from (its card), "" before one was shipped."""
    from models.preset import PRESET
    from models.registry import ENCODERS
    from models.resolve import shipped_folder

    card = shipped_folder(ENCODERS[PRESET.encoder]) / "card.json"
    return json.loads(card.read_text(encoding="utf-8")).get("trained_from", "") if card.is_file() else ""


@dataclass(frozen=True)
class Scored(Record):
    """One candidate's dev scores and targets met."""

    model: str
    retrieval_rows_passed: int
    retrieval_rows: int
    negation_delta_cos: float
    error_discrimination: float
    abbreviated_drop: float
    match_at_5: float
    abbreviated_match_at_5: float

    @property
    def targets_met(self) -> int:
        return (
            self.retrieval_rows_passed
            + (self.negation_delta_cos >= NEGATION_TARGET)
            + (self.error_discrimination >= ERRORS_TARGET)
            + (self.abbreviated_drop <= ABBREVIATED_DROP)
        )

    @property
    def targets(self) -> int:
        return self.retrieval_rows + 3

    @property
    def tie_break(self) -> float:
        return (self.match_at_5 + self.error_discrimination + self.abbreviated_match_at_5) / 3


@dataclass
class EncoderChoice(ResultsFile):
    """The choice among the candidates (eval/results/encoder_choice_dev.json)."""

    KIND = "encoder choice results"

    chosen: str
    #: The trained model the shipped encoder was packaged from when the choice was made ("" before one was).
    current_default: str
    candidates: list[Scored]
    #: The three dev results files the scores were read from.
    inputs: list[str]
    #: Files written before these were recorded name the defaults of then.
    shipped_as: str | None = optional()
    max_training_runs: int | None = optional()


def _robustness_row(rankers: dict[str, Scores], model: str) -> Scores:
    """The model's row as users search (with the shipped query expansion where measured)."""
    _, row = shipped(rankers, product_default(model))
    if row is None:
        raise KeyError(f"{product_default(model)} has no dev robustness results: run eval.robustness --split dev")
    return row


def score(model: str, retrieval: RetrievalResults, robustness: RobustnessResults, negation: RealPairs) -> Scored:
    """One candidate's dev scores from the three dev results files."""
    ranker = product_default(model)
    if ranker not in retrieval.rankers:
        raise KeyError(f"{ranker} is not in the dev retrieval results: run eval.retrieval.benchmark --split dev")
    rows = check_targets(retrieval.rankers, ranker).rows
    negation_row = next(
        (r for r in negation.results if r.encoder == model and r.pairs_from == NEGATION_DEV_PAIRS), None
    )
    if negation_row is None:
        raise KeyError(f"{model} has no {NEGATION_DEV_PAIRS!r} negation pairs result: run eval.negation.real_pairs")
    abbreviated = _robustness_row(robustness.queries.rankers if robustness.queries else {}, model).variants[
        "abbreviated"
    ]
    errors = _robustness_row(robustness.errors.rankers if robustness.errors else {}, model)
    return Scored(
        model=model,
        retrieval_rows_passed=sum(r.passed for r in rows),
        retrieval_rows=len(rows),
        negation_delta_cos=negation_row.delta_cos,
        error_discrimination=errors.all.value,
        abbreviated_drop=abbreviated.drop_at_5,
        match_at_5=retrieval.rankers[ranker].pooled().all["match@5"],
        abbreviated_match_at_5=abbreviated.match_at_5,
    )


def choose(scored: list[Scored], current: str = "", max_runs: int = MAX_TRAINING_RUNS) -> Scored:
    """The rule of the module docstring (`current`: the default now, which wins a full tie)."""
    eligible = [s for s in scored if training_runs(s.model) <= max_runs]
    if not eligible:
        raise ValueError(f"no candidate trains in at most {max_runs} run(s): {', '.join(s.model for s in scored)}")
    return max(eligible, key=lambda s: (s.targets_met, round(s.tie_break, 6), s.model == current))


def render(payload: EncoderChoice) -> str:
    lines = [
        "# Default encoder recipe: chosen on the dev split",
        "",
        "Rule (`eval/training/encoder_choice.py`): most dev targets met "
        "(the retrieval benchmark's target rows, real-pair "
        f"negation Δcos >= {NEGATION_TARGET}, error discrimination >= {ERRORS_TARGET}, abbreviated match@5 drop <= "
        f"{ABBREVIATED_DROP}); ties broken by the mean of pooled match@5, error discrimination and abbreviated "
        "match@5, then by keeping the current default; only recipes of at most "
        f"{payload.max_training_runs or MAX_TRAINING_RUNS} training run(s) compete (the shipped default must be "
        "rebuildable by `make encoder` in one session). Each candidate measured as users search: "
        f"`{product_default('MODEL')}` with the shipped query expansion.",
        "",
        "| candidate | training runs | targets met | retrieval rows | negation Δcos (dev pairs) | "
        "error discrimination | abbreviated drop | pooled match@5 | abbreviated match@5 | tie-break mean |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in payload.candidates:
        mark = "**" if c.model == payload.chosen else ""
        lines.append(
            f"| {mark}{c.model}{mark} | {training_runs(c.model)} | {c.targets_met} / {c.targets} | "
            f"{c.retrieval_rows_passed} / {c.retrieval_rows} "
            f"| {c.negation_delta_cos:.3f} | {c.error_discrimination:.3f} | {c.abbreviated_drop:+.3f} | "
            f"{c.match_at_5:.3f} | {c.abbreviated_match_at_5:.3f} | {c.tie_break:.4f} |"
        )
    same = "is" if payload.chosen == payload.current_default else "is NOT"
    lines += [
        "",
        f"Chosen: `{payload.chosen}`. The shipped encoder (`{payload.shipped_as or DEFAULT_MODEL}`, "
        f"models/radsearch/) was packaged from `{payload.current_default or 'nothing yet'}`, which {same} the "
        "chosen one.",
        "",
        f"Inputs: {', '.join(f'`{Path(p).name}`' for p in payload.inputs)}.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", required=True, help="comma-separated fine-tuned encoder names")
    parser.add_argument("--retrieval", type=Path, default=CHOICE_RESULTS)
    parser.add_argument("--robustness", type=Path, default=ROBUSTNESS_DEV)
    parser.add_argument("--negation", type=Path, default=NEGATION_DEV)
    parser.add_argument("--name", default="encoder_choice_dev")
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv)
    retrieval = RetrievalResults.read(args.retrieval)
    robustness = RobustnessResults.read(args.robustness)
    negation = RealPairs.read(args.negation)
    for name, split in (("retrieval", retrieval.split), ("robustness", robustness.split)):
        if split != "dev":
            parser.error(f"the {name} results are of the {split} split: the choice is made on dev only")
    models = [m.strip() for m in args.candidates.split(",") if m.strip()]
    try:
        scored = [score(m, retrieval, robustness, negation) for m in models]
    except KeyError as missing:
        parser.error(str(missing.args[0]))
    current = shipped_source()
    chosen = choose(scored, current)
    payload = EncoderChoice(
        chosen=chosen.model,
        current_default=current,
        shipped_as=DEFAULT_MODEL,
        max_training_runs=MAX_TRAINING_RUNS,
        candidates=scored,
        inputs=[str(args.retrieval), str(args.robustness), str(args.negation)],
    )
    print(write_results(args.out / args.name, payload, render))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
