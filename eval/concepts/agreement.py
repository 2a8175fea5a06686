"""How far two hand readings of the linker's impression items agree, scored as the linker is scored.

    python -m eval.concepts.agreement      # -> eval/results/concept_annotator_agreement.{json,md}

Why: the linker's targets (precision 0.97, recall 0.90) are measured against hand labels. They measure the linker
only where two careful readers of the same rules agree above them; below that, a linker can only reach them by
sharing one reader's conventions (docs/decisions/2026-11-29-linker-gold-read-twice.md).

Each reading's names go through the vocabulary's name table (eval.concepts.linker_benchmark.gold_ids) as (item,
concept) pairs, pooled over items. The second reading is scored against the first: its precision is agreed pairs /
the second's pairs, its recall agreed pairs / the first's (so each is the other's recall and precision), with the
share of items whose two sets are the same. Where the adjudicated labels exist, how often they are the first reading,
the second, or neither is counted too.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from eval.common.shared_data import RESULTS, add_out_option, write_results
from eval.concepts.linker_benchmark import gold_ids, pooled
from eval.concepts.results import AgreementScores, AnnotatorAgreement
from eval.concepts.sample_items import SOURCES, SPLITS, Item, load_items

READINGS = ("first", "second")
DEFINITION = (
    "pairs (item, concept) through the vocabulary's name table, pooled; the second reading against the first: "
    "precision = agreed / second's pairs, recall = agreed / first's pairs"
)


def agreement(items: Sequence[Item]) -> AgreementScores:
    """The pooled agreement of the items' first and second readings (and where the final labels side)."""
    readings = [(gold_ids(item.concepts or ()), gold_ids(item.second or ())) for item in items]
    sides = {"first": 0, "second": 0, "neither": 0}
    for item, (first, second) in zip(items, readings, strict=True):
        if item.final is not None and first != second:
            final = gold_ids(item.final)
            sides["first" if final == first else "second" if final == second else "neither"] += 1
    pairs = pooled(readings)  # the first reading as the gold side, the second as the predicted
    decided = [i for i in items if i.final is not None]
    return AgreementScores(
        items=len(items),
        same_items=sum(first == second for first, second in readings),
        first_pairs=pairs.gold,
        second_pairs=pairs.predicted,
        agreed_pairs=pairs.correct,
        precision=pairs.precision,
        recall=pairs.recall,
        adjudicated_as=sides if decided else None,
        against_final={r: _against_final(decided, r) for r in READINGS} if decided else None,
    )


def _against_final(items: Sequence[Item], reading: str) -> dict[str, float]:
    """One reading's pooled precision and recall against the final labels."""
    pairs = pooled((gold_ids(item.final or ()), gold_ids(item.gold(reading) or ())) for item in items)
    return {"precision": pairs.precision or 0.0, "recall": pairs.recall or 0.0}


def measure(items: Sequence[Item]) -> AnnotatorAgreement:
    """Agreement over every item read twice: all, per split, and per split and source."""
    read = [i for i in items if i.concepts is not None and i.second is not None]
    if not read:
        raise SystemExit("no item has a second reading yet (eval/concepts/readings.py second)")
    groups = {"all": agreement(read)}
    for split in SPLITS:
        groups[split] = agreement([i for i in read if i.split == split])
        for source in SOURCES:
            groups[f"{split} {source}"] = agreement([i for i in read if i.split == split and i.source == source])
    return AnnotatorAgreement(definition=DEFINITION, groups=groups)


def render(result: AnnotatorAgreement) -> str:
    lines = [
        "# Agreement of two blind hand readings of the linker's impression items",
        "",
        "Each reading's concept names through the vocabulary's name table as (item, concept) pairs, pooled; the",
        "second reading scored against the first (precision = agreed / second's pairs, recall = agreed / first's",
        "pairs). Adjudicated: of the items the readings differ on, whether the final labels are the first reading,",
        "the second, or neither. Written by `eval/concepts/agreement.py`",
        "(docs/decisions/2026-11-29-linker-gold-read-twice.md).",
        "",
        "| items | n | same sets | first's pairs | second's pairs | agreed | precision | recall | adjudicated as "
        "first / second / neither | first vs final P / R | second vs final P / R |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, g in result.groups.items():
        sides, final = g.adjudicated_as, g.against_final or {}
        sided = f"{sides['first']} / {sides['second']} / {sides['neither']}" if sides else "-"
        scored = [f"{_value(f['precision'])} / {_value(f['recall'])}" if (f := final.get(r)) else "-" for r in READINGS]
        lines.append(
            f"| {name} | {g.items} | {g.same_items} ({g.same_items / g.items:.0%}) | {g.first_pairs} | "
            f"{g.second_pairs} | {g.agreed_pairs} | {_value(g.precision)} | {_value(g.recall)} | {sided} | "
            f"{scored[0]} | {scored[1]} |"
        )
    lines += [
        "",
        "Against the final labels, the second reading is not an independent reader: it shaped most adjudications. The",
        "first reading's score is the nearer to what a careful reader of the rules reaches against them.",
    ]
    return "\n".join(lines) + "\n"


def _value(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_out_option(parser, RESULTS)
    args = parser.parse_args()
    print(write_results(args.out / "concept_annotator_agreement", measure(load_items()), render))


if __name__ == "__main__":
    main()
