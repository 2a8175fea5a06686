"""The hand-labelled impression items that measure the diagnosis linker (retriever/concepts), and how they were drawn.

`python -m eval.concepts.sample_items` draws PER_SOURCE affirmed impression items (retriever.reports.impression.
positive_items: what the evidence reads) from each shared source (Open-i, CT-RATE, MTSamples, MedPix) with a fixed
seed, half from dev reports and half from test reports, and writes them to eval/datasets/concept_items.jsonl with
`concepts: null`; an annotator then fills `concepts` with the names of the diagnoses and imaging findings each item
affirms (eval/datasets/concept_items.md says how), before the linker is run on them.

The split is by report (SHA-256 of the report id, even = dev): the vocabulary is tuned on dev items only, and a test
item whose text also occurs in a dev report is left out. Like eval/datasets/negation_sentences.jsonl, the file holds
no report text except MTSamples' (CC0): an item is its report id, its index among the report's positive items and the
SHA-1 prefix of its text, rebuilt here from the shared data with the project's importers and checked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path

from eval.common.shared_data import DATASETS, SHARED_DATA, load_shared
from retriever.reports.impression import positive_items
from retriever.reports.record import Report

ITEMS_FILE = DATASETS / "concept_items.jsonl"
SOURCES = ("openi", "ctrate", "mtsamples", "medpix")
SPLITS = ("dev", "test")
PER_SOURCE = 130  # half dev, half test: 520 items in all
SEED = 48
#: Only MTSamples (CC0) may be redistributed: other sources' items are stored as offsets and a checksum.
TEXT_SOURCES = ("mtsamples",)


@dataclass(frozen=True)
class Item:
    """One affirmed impression item, its place, and its hand labels (None until labelled)."""

    id: str
    source: str
    split: str
    report_id: str
    index: int
    text: str
    concepts: tuple[str, ...] | None
    #: A second annotator's blind reading, and the adjudicated labels
    #: (docs/decisions/2026-11-29-linker-gold-read-twice.md).
    second: tuple[str, ...] | None = None
    final: tuple[str, ...] | None = None

    def gold(self, reading: str) -> tuple[str, ...] | None:
        """The labels of one reading: "first" (the first annotator's), "second" or "final" (adjudicated)."""
        return {"first": self.concepts, "second": self.second, "final": self.final}[reading]


def split_of(report_id: str) -> str:
    return SPLITS[int(hashlib.sha256(report_id.encode()).hexdigest(), 16) % 2]


def text_sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def source_of(report: Report) -> str:
    return report.id.split(":")[0]


def _candidates(reports: list[Report]) -> dict[tuple[str, str], list[tuple[str, int, str]]]:
    """(source, split) -> unique items (report id, index, text); a test item also written in a dev report is out."""
    found: dict[tuple[str, str], dict[str, tuple[str, int, str]]] = {}
    for report in sorted(reports, key=lambda r: r.id):
        for index, text in enumerate(positive_items(report.impression)):
            bucket = found.setdefault((source_of(report), split_of(report.id)), {})
            bucket.setdefault(text.lower(), (report.id, index, text))
    for source in SOURCES:
        dev = found.get((source, "dev"), {})
        test = found.get((source, "test"), {})
        found[(source, "test")] = {k: v for k, v in test.items() if k not in dev}
    return {k: sorted(v.values()) for k, v in found.items()}


def sample(reports: list[Report], per_source: int = PER_SOURCE, seed: int = SEED) -> list[Item]:
    """per_source items of each source, half dev and half test, drawn with `seed`."""
    rng = random.Random(seed)
    candidates = _candidates(reports)
    items = []
    for source in SOURCES:
        for split in SPLITS:
            pool = candidates.get((source, split), [])
            for n, (report_id, index, text) in enumerate(rng.sample(pool, min(per_source // 2, len(pool))), 1):
                items.append(Item(f"{source}-{split}-{n:03d}", source, split, report_id, index, text, None))
    return items


def sample_more(
    reports: list[Report], taken: list[Item], per_source: int, seed: int, batch: str, split: str = "dev"
) -> list[Item]:
    """per_source further items of each source, drawn with `seed` from the `split` items not yet in `taken` (same
    text, any case): a further sample that no tuning has seen, ids "<source>-<batch>-NNN" (a second dev sample to
    tune on, or a second test sample that makes the test split >= 500 items)."""
    rng = random.Random(seed)
    candidates = _candidates(reports)
    items = []
    for source in SOURCES:
        seen = {i.text.lower() for i in taken if i.source == source}
        pool = [c for c in candidates.get((source, split), []) if c[2].lower() not in seen]
        for n, (report_id, index, text) in enumerate(rng.sample(pool, min(per_source, len(pool))), 1):
            items.append(Item(f"{source}-{batch}-{n:03d}", source, split, report_id, index, text, None))
    return items


def _row(item: Item) -> dict[str, object]:
    row: dict[str, object] = {
        "id": item.id,
        "source": item.source,
        "split": item.split,
        "report_id": item.report_id,
        "index": item.index,
        "sha1": text_sha1(item.text),
    }
    if item.source in TEXT_SOURCES:
        row["text"] = item.text
    row["concepts"] = None if item.concepts is None else list(item.concepts)
    for name, labels in (("second", item.second), ("final", item.final)):
        if labels is not None:
            row[name] = list(labels)
    return row


def write_items(items: list[Item], path: Path = ITEMS_FILE) -> None:
    path.write_text("".join(json.dumps(_row(i)) + "\n" for i in items), encoding="utf-8")


def load_items(data_folder: Path | None = None, path: Path = ITEMS_FILE) -> list[Item]:
    """Every item with its text rebuilt from the shared reports. FileNotFoundError when the shared folder is absent
    (callers skip); ValueError naming the row when its report is gone or its text is no longer the labelled one."""
    folder = SHARED_DATA if data_folder is None else data_folder
    if not folder.is_dir():
        raise FileNotFoundError(f"shared data folder {folder} not found: the concept items are offsets into it")
    reports = {r.id: r for r in load_shared(folder).reports}
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        row = json.loads(line)
        where = f"{path.name} line {number} ({row['id']})"
        report = reports.get(row["report_id"])
        if report is None:
            raise ValueError(f"{where}: report {row['report_id']} is not among the shared reports")
        found = positive_items(report.impression)
        text = found[row["index"]] if row["index"] < len(found) else ""
        if text_sha1(text) != row["sha1"]:
            raise ValueError(f"{where}: item {row['index']} of the report is no longer the labelled text")
        labels = {k: None if row.get(k) is None else tuple(row[k]) for k in ("concepts", "second", "final")}
        items.append(Item(row["id"], row["source"], row["split"], row["report_id"], row["index"], text, **labels))
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ITEMS_FILE, help="where the unlabelled items are written")
    parser.add_argument(
        "--more",
        type=int,
        metavar="N",
        help="append N new items per source of --split to --out (not already in it) instead of drawing the file anew",
    )
    parser.add_argument("--split", choices=SPLITS, default="dev", help="the split --more draws from (default: dev)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--batch", default="dev2", help="id infix of the items --more appends (default: dev2)")
    args = parser.parse_args()
    reports = load_shared().reports
    if args.more:
        taken = load_items(path=args.out)
        items = taken + sample_more(reports, taken, args.more, args.seed, args.batch, args.split)
    else:
        items = sample(reports, seed=args.seed)
    write_items(items, args.out)
    print(f"{args.out}: {len(items)} items")


if __name__ == "__main__":
    main()
