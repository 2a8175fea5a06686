"""The second reading and the adjudication of the linker's hand-labelled items, into eval/datasets/concept_items.jsonl.

    python -m eval.concepts.readings first FILE...       # an unlabelled batch's first reading -> `concepts`
    python -m eval.concepts.readings second FILE...      # a second reading -> each item's `second`
    python -m eval.concepts.readings disagreements FILE  # the items whose readings differ, for a third reader
    python -m eval.concepts.readings final FILE...       # the third readers' labels -> each item's `final`

Why: docs/decisions/2026-11-29-linker-gold-read-twice.md. A second annotator reads every item blind (its id
and text only) and writes one JSON line per item, {"id", "concepts"} (a file per split and source). Items whose
two readings name the same concepts (through the vocabulary's name table) keep them as final; the others are
written, with their text and the two label sets in a seeded random order under the neutral names "X" and "Y", for a
third reader, whose {"id", "concepts"} lines become their final labels. Every step checks that no item is missing
or unknown: a gold standard with a silently dropped label would measure nothing. The files hold report text, so
they stay outside the repository.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import replace
from pathlib import Path

from eval.concepts.linker_benchmark import gold_ids
from eval.concepts.sample_items import ITEMS_FILE, Item, load_items, write_items

SEED = 2911


def read_labels(path: Path) -> dict[str, tuple[str, ...]]:
    """{"id", "concepts"} lines -> id -> names; ValueError naming the line that is not one."""
    labels: dict[str, tuple[str, ...]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            names = row["concepts"]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise TypeError("concepts is not a list of names")
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path} line {number}: not an {{id, concepts}} line ({error})") from error
        if row["id"] in labels:
            raise ValueError(f"{path} line {number}: {row['id']} is labelled twice")
        labels[row["id"]] = tuple(n.strip().lower() for n in names if n.strip())
    return labels


def _apply(items: list[Item], labels: dict[str, tuple[str, ...]], field: str, wanted: set[str]) -> list[Item]:
    """`items` with `field` set from `labels`, which must hold exactly the ids in `wanted`."""
    unknown = sorted(set(labels) - {i.id for i in items})
    missing = sorted(wanted - set(labels))
    if unknown or missing:
        raise SystemExit(f"labels for unknown items {unknown[:5]} / no labels for {len(missing)} items {missing[:5]}")
    return [replace(i, **{field: labels[i.id]}) if i.id in labels else i for i in items]


def read_all(paths: list[Path]) -> dict[str, tuple[str, ...]]:
    """The labels of several files; ValueError when two label one item."""
    labels: dict[str, tuple[str, ...]] = {}
    for path in paths:
        found = read_labels(path)
        if twice := sorted(set(found) & set(labels)):
            raise ValueError(f"{path}: {twice[0]} is labelled in an earlier file too")
        labels |= found
    return labels


def reading(items: list[Item], labels: dict[str, tuple[str, ...]], field: str) -> list[Item]:
    """`items` with the labels of one reading ("concepts": the first, or "second") set for the labelled ids; a first
    reading never replaces one already there."""
    if field == "concepts" and (labelled := sorted(i.id for i in items if i.id in labels and i.concepts is not None)):
        raise SystemExit(f"{len(labelled)} items already have a first reading (first: {labelled[0]})")
    return _apply(items, labels, field, set(labels))


def differ(item: Item) -> bool:
    """Whether the item's two readings name different concepts."""
    return gold_ids(item.concepts or ()) != gold_ids(item.second or ())


def disagreements(items: list[Item], seed: int = SEED) -> list[dict[str, object]]:
    """The undecided items (no final labels yet) whose readings differ: id, text and the two sets as X and Y, in a
    seeded random order."""
    undecided = [i for i in items if i.final is None]
    unread = [i.id for i in undecided if i.concepts is None or i.second is None]
    if unread:
        raise SystemExit(f"{len(unread)} items are not read twice yet (first: {unread[0]})")
    rng = random.Random(seed)
    rows = []
    for item in (i for i in undecided if differ(i)):
        pair = [list(item.concepts or ()), list(item.second or ())]
        rng.shuffle(pair)
        rows.append({"id": item.id, "source": item.source, "text": item.text, "X": pair[0], "Y": pair[1]})
    return rows


def final(items: list[Item], adjudicated: dict[str, tuple[str, ...]]) -> list[Item]:
    """Final labels of the undecided items: the adjudicated ones where the readings differ, the first reading's names
    where they agree. Items decided before keep theirs."""
    undecided = [i for i in items if i.final is None]
    disputed = {i.id for i in undecided if differ(i)}
    undisputed = sorted(set(adjudicated) - disputed)
    if undisputed:
        raise SystemExit(
            f"adjudicated labels for {len(undisputed)} items the readings agree on or decided before: {undisputed[:5]}"
        )
    agreed = {i.id: i.concepts or () for i in undecided if i.id not in disputed}
    return _apply(items, agreed | adjudicated, "final", {i.id for i in undecided})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("first", "second", "final"):
        commands.add_parser(name).add_argument("files", type=Path, nargs="+")
    out = commands.add_parser("disagreements")
    out.add_argument("file", type=Path)
    out.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    items = load_items()
    if args.command == "disagreements":
        rows = disagreements(items, args.seed)
        args.file.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        print(f"{args.file}: {len(rows)} of {len(items)} items read differently")
        return
    labels = read_all(args.files)
    if args.command == "final":
        items = final(items, labels)
    else:
        items = reading(items, labels, "concepts" if args.command == "first" else "second")
    write_items(items, ITEMS_FILE)
    print(f"{ITEMS_FILE}: {args.command} labels of {len(items)} items")


if __name__ == "__main__":
    main()
