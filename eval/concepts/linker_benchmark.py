"""Precision and recall of the diagnosis linker (retriever.concepts) on the hand-labelled impression items.

Definition: every (item, concept) pair counts once. Gold pairs are the concepts an annotator named for the item
(eval/datasets/concept_items.md), each name read through the vocabulary's own name table (a preferred name or any
synonym of either layer, folded as the matcher folds text); a name the vocabulary lacks stays a gold pair no
prediction can match. Predicted pairs are the concepts retriever.concepts.affirmed_in(item) returns. Precision =
correct pairs / predicted pairs, recall = correct pairs / gold pairs, pooled over items (micro), overall and per
source. Items with no gold concept count too: anything linked there is a false pair.

    python -m eval.concepts.linker_benchmark --split dev   # while tuning: eval/results/concept_linker_dev.*
    python -m eval.concepts.linker_benchmark               # the test split, once: eval/results/concept_linker.*
    python -m eval.concepts.linker_benchmark --split dev --batch dev2 --name concept_linker_dev2_first
                                                           # one drawn batch alone (e.g. before tuning on it)
    python -m eval.concepts.linker_benchmark --gold first  # against the first annotator's reading alone

The gold is by default the adjudicated labels (`final`: two blind readings, their differences adjudicated,
docs/decisions/2026-11-29-linker-gold-read-twice.md); `--gold first` scores against the first reading, as every
result before that record was scored.

The Markdown lists each wrong item by id and concept names only (no report text: most sources may not be
redistributed).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from eval.common.shared_data import RESULTS, add_out_option, write_results
from eval.concepts.results import LinkerResults
from eval.concepts.sample_items import SOURCES, SPLITS, Item, load_items
from retriever.concepts import affirmed_in, default_vocabulary
from retriever.concepts.normalize import key

TARGET_PRECISION = 0.97
TARGET_RECALL = 0.90
#: What each reading's labels are, as the results say it.
GOLD_WORDS = {
    "first": "the first annotator's labels",
    "second": "the second annotator's blind labels",
    "final": "the adjudicated labels (two blind readings, their differences decided by a third reader)",
}


def gold_ids(names: Sequence[str]) -> set[str]:
    """Each labelled name as the concept id the vocabulary gives it, or "unknown:<name>"."""
    table = default_vocabulary().names()
    return {table.get(key(name), f"unknown:{name}") for name in names}


@dataclass(frozen=True)
class Pairs:
    """(item, concept) pairs pooled over items: those both sides name, the predicted side's and the gold side's."""

    correct: int
    predicted: int
    gold: int

    @property
    def precision(self) -> float | None:
        return round(self.correct / self.predicted, 4) if self.predicted else None

    @property
    def recall(self) -> float | None:
        return round(self.correct / self.gold, 4) if self.gold else None


def pooled(sides: Iterable[tuple[set[str], set[str]]]) -> Pairs:
    """The pooled pairs of (gold ids, predicted ids) per item: how the linker is scored, and how one hand reading is
    scored against another (eval/concepts/agreement.py)."""
    correct = predicted = gold = 0
    for expected, found in sides:
        correct, predicted, gold = correct + len(expected & found), predicted + len(found), gold + len(expected)
    return Pairs(correct, predicted, gold)


def score(items: list[Item], reading: str = "first") -> dict[str, Any]:
    """Pooled counts, precision and recall against the labels of `reading` (Item.gold), and the wrong items."""
    concepts = default_vocabulary().concepts
    sides = [(gold_ids(item.gold(reading) or ()), {c.id for c in affirmed_in(item.text)}) for item in items]
    name = lambda i: concepts[i].name if i in concepts else i  # noqa: E731
    errors = [
        {
            "id": item.id,
            "missed": sorted(name(i) for i in expected - found),
            "extra": sorted(name(i) for i in found - expected),
        }
        for item, (expected, found) in zip(items, sides, strict=True)
        if expected != found
    ]
    pairs = pooled(sides)
    return {
        "items": len(items),
        "gold_pairs": pairs.gold,
        "predicted_pairs": pairs.predicted,
        "correct_pairs": pairs.correct,
        "precision": pairs.precision,
        "recall": pairs.recall,
        "errors": errors,
    }


def run(split: str, batch: str | None = None, reading: str = "final") -> dict[str, Any]:
    """The split's items (only those of one drawn batch, ids "<source>-<batch>-NNN", when `batch` is given), scored
    against the labels of `reading`."""
    items = [i for i in load_items() if i.split == split and (batch is None or f"-{batch}-" in i.id)]
    if not items:
        raise SystemExit(f"no {split} items{f' of batch {batch}' if batch else ''} in the items file")
    unlabelled = [i.id for i in items if i.gold(reading) is None]
    if unlabelled:
        raise SystemExit(
            f"{len(unlabelled)} items have no {reading!r} labels yet (first: {unlabelled[0]}); "
            "`--gold first` scores against the first annotator's reading"
        )
    by_source = {s: score([i for i in items if i.source == s], reading) for s in SOURCES}
    return {
        "split": split if batch is None else f"{split}, batch {batch} only",
        "definition": "pairs (item, concept); precision = correct/predicted, recall = correct/gold, pooled",
        "targets": {"precision": TARGET_PRECISION, "recall": TARGET_RECALL},
        "gold": reading,
        "overall": score(items, reading),
        "by_source": by_source,
    }


def _met(value: float | None, target: float) -> str:
    return "n/a" if value is None else f"{value:.3f} ({'met' if value >= target else 'missed'})"


def render(result: dict[str, Any]) -> str:
    rows = [("all", result["overall"]), *result["by_source"].items()]
    lines = [
        f"# Diagnosis linker on hand-labelled impression items ({result['split']} split)",
        "",
        "Each (item, concept) pair counts once; precision = correct / predicted pairs, recall = correct / gold pairs,",
        f"pooled over items. Gold: {GOLD_WORDS[result.get('gold') or 'first']}, concept names read through the",
        "vocabulary's name table (eval/datasets/concept_items.md); predicted: `retriever.concepts.affirmed_in(item)`.",
        "Written by `eval/concepts/linker_benchmark.py`.",
        "",
        f"| source | items | gold pairs | predicted | correct | precision (target {TARGET_PRECISION}) "
        f"| recall (target {TARGET_RECALL}) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in rows:
        lines.append(
            f"| {name} | {s['items']} | {s['gold_pairs']} | {s['predicted_pairs']} | {s['correct_pairs']} "
            f"| {_met(s['precision'], TARGET_PRECISION)} | {_met(s['recall'], TARGET_RECALL)} |"
        )
    lines += ["", "## Items linked wrongly (id: missed / extra concepts)", ""]
    for error in result["overall"]["errors"]:
        lines.append(
            f"- {error['id']}: missed {', '.join(error['missed']) or '-'}; extra {', '.join(error['extra']) or '-'}"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=SPLITS, default="test")
    parser.add_argument("--batch", help="only the items of this drawn batch (e.g. dev2: ids <source>-dev2-NNN)")
    parser.add_argument("--gold", choices=sorted(GOLD_WORDS), default="final", help="whose labels (default: final)")
    parser.add_argument("--name", help="the results' file stem (default: concept_linker[_dev])")
    add_out_option(parser, RESULTS)
    args = parser.parse_args()
    # checked against the record before it is written
    result = LinkerResults.from_json(run(args.split, args.batch, args.gold))
    default = "concept_linker" if args.split == "test" else f"concept_linker_{args.split}"
    stem = args.name or (default if args.gold == "final" else f"{default}_{args.gold}")
    print(write_results(args.out / stem, result, lambda r: render(r.to_json())))


if __name__ == "__main__":
    main()
