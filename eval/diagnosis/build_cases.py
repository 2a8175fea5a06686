"""Build diagnosis cases from the shared development data (never committed: they hold report text).

    python -m eval.diagnosis.build_cases        # -> <data home>/eval/cases/shared_heldout.jsonl and shared_screen.jsonl
    python -m eval.diagnosis.build_cases --splits dev,test --screen-per-source 12

Cases come only from reports the encoders were not trained on (the dev and test splits of `retriever.reports.splits`, by
report id), from all four collections, one kind per collection:
- MedPix teaching cases: findings -> the case diagnosis. `accept` adds the case title when it names a diagnosis,
  parenthesised aliases ("Ledderhose disease" in "Plantar fibromatosis (Ledderhose disease)") and each item of a
  numbered multi-diagnosis. The differential list is NOT accepted: it names the alternatives that were excluded.
- Open-i chest X-rays with a positive NegBio label (gold, negation resolved): findings -> the impression's positive
  sentences, or the labels in words when the impression itself says nothing abnormal ("No acute disease." over a
  nodule the findings describe). `accept` adds each positive sentence and the labels in words ("Effusion" ->
  "pleural effusion"): a one-line answer naming the main finding is what a resident would be expected to give.
- CT-RATE chest CTs and MTSamples imaging notes: findings -> the first positive impression sentence; `accept`
  adds the other positive sentences (and CT-RATE's labels in words, which a classifier predicted). Studies whose
  impression has no positive sentence (normal studies) are not cases: there is nothing to diagnose.
The case id is the report id, so the benchmark can keep the case's own report out of the retrieval corpus.

Two files: a small *screening* set (the first `--screen-per-source` dev cases of each source in a stable hashed
order), on which prompt, k, field and model are chosen, and the *held-out* set of every case, on which the chosen
configuration is confirmed once. The shared data holds too few diagnosable unseen reports for 300 held-out cases
beside a screening set, so the screening cases stay in the held-out set, marked (`meta.screening`), and the
benchmark report gives accuracy on the cases never screened beside the total. `eval.common.stats.mcnemar_sample_size`
says how many cases a 10-point paired difference needs; the command prints it beside the count.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from collections import Counter
from dataclasses import replace
from itertools import zip_longest
from pathlib import Path

from eval.common.shared_data import SHARED_DATA, eval_home, load_shared
from eval.common.stats import mcnemar_sample_size
from eval.diagnosis.cases import SCREENING, Case, write_cases
from retriever.reports.impression import clean_item, impression_items, positive_items
from retriever.reports.record import Report
from retriever.reports.splits import split_of

#: Planned share of cases answered right under exactly one of two conditions (the earlier 100-case run: 24% between
#: no retrieval and the fine-tuned retriever), for the sample-size statement.
DISCORDANT_PLANNED = 0.25
#: NegBio's 14 Open-i labels (minus `normal`) as a resident would name them.
NEGBIO_WORDS = {
    "Atelectasis": "atelectasis",
    "Cardiomegaly": "cardiomegaly",
    "Effusion": "pleural effusion",
    "Infiltration": "pulmonary infiltrate",
    "Mass": "lung mass",
    "Nodule": "pulmonary nodule",
    "Pneumonia": "pneumonia",
    "Pneumothorax": "pneumothorax",
    "Consolidation": "consolidation",
    "Edema": "pulmonary edema",
    "Emphysema": "emphysema",
    "Fibrosis": "pulmonary fibrosis",
    "Pleural_Thickening": "pleural thickening",
    "Hernia": "hiatal hernia",
}
_ALIAS = re.compile(r"^(?:[A-Z][A-Za-z0-9]{1,5}|\S+(?:\s+\S+)+)$")  # an acronym (LAM) or a name of 2+ words
_PAREN = re.compile(r"\(([^()]+)\)")
_TITLE_NOT_DIAGNOSIS = re.compile(r"\b(case|year[- ]old|presents?|patient|history)\b", re.IGNORECASE)


def _aliases(text: str) -> list[str]:
    """The text, the text without its parenthesis and each parenthesised alias that is an acronym or a name
    ("LAM", "Ledderhose disease"; not a qualifier such as "sporadic")."""
    out = [text]
    inner = _PAREN.findall(text)
    if inner:
        out.append(clean_item(_PAREN.sub(" ", text)))
        out += [clean_item(i) for i in inner if _ALIAS.match(i.strip())]
    return out


def _distinct(answers: list[str], diagnosis: str) -> tuple[str, ...]:
    """Non-empty answers without case-insensitive repeats of each other or of the diagnosis."""
    seen = {diagnosis.lower()}
    out: list[str] = []
    for answer in answers:
        if answer and answer.lower() not in seen:
            seen.add(answer.lower())
            out.append(answer)
    return tuple(out)


def medpix_case(report: Report) -> Case | None:
    """Findings -> case diagnosis, or None when either is missing."""
    if not report.findings or not report.impression:
        return None
    items = impression_items(report.impression)
    if not items:
        return None
    accept: list[str] = []
    for item in items:
        accept += _aliases(item)
    title = clean_item(report.meta.get("title", ""))
    if title and not _TITLE_NOT_DIAGNOSIS.search(title):
        accept += _aliases(title)
    diagnosis = items[0]
    return Case(report.id, report.findings, diagnosis, _distinct(accept, diagnosis), "medpix")


def openi_case(report: Report) -> Case | None:
    """Abnormal findings -> positive impression sentences (else the labels), or None for a normal study or one
    without a NegBio finding label."""
    positive = [NEGBIO_WORDS[label] for label in report.labels if label in NEGBIO_WORDS]
    if not positive or "normal" in report.labels or not report.findings or not report.impression:
        return None
    items = positive_items(report.impression)
    diagnosis = "; ".join(items) if items else ", ".join(positive)
    return Case(report.id, report.findings, diagnosis, _distinct(items + positive, diagnosis), "openi")


def first_positive_item(impression: str) -> str:
    """The first sentence or item of an impression that states something abnormal ("" when none does)."""
    return next(iter(positive_items(impression)), "")


def impression_case(report: Report) -> Case | None:
    """Findings -> the first positive impression sentence (CT-RATE, MTSamples), or None for a normal study."""
    if not report.findings or not report.impression:
        return None
    items = positive_items(report.impression)
    if not items:
        return None
    labels = [label.lower().replace("_", " ") for label in report.labels]
    return Case(report.id, report.findings, items[0], _distinct(items[1:] + labels, items[0]), report.source)


BUILDERS = {"medpix": medpix_case, "openi": openi_case, "ctrate": impression_case, "mtsamples": impression_case}


def _stable_order(report_id: str) -> str:
    return hashlib.sha256(report_id.encode()).hexdigest()


def build(reports: list[Report], splits: set[str], max_per_source: int) -> list[Case]:
    """Cases from the reports of the given splits, at most `max_per_source` per source in a stable hashed order
    (so a larger limit only adds cases), alternating between sources."""
    per_source: list[list[Case]] = []
    for source, builder in BUILDERS.items():
        chosen = sorted(
            (r for r in reports if r.source == source and split_of(r.id) in splits), key=lambda r: _stable_order(r.id)
        )
        per_source.append([c for c in map(builder, chosen) if c is not None][:max_per_source])
    # Sources interleaved, so the first N cases of a run stopped early (or --limit N) still cover every source.
    return [case for group in zip_longest(*per_source) for case in group if case is not None]


def mark_screening(cases: list[Case], per_source: int) -> list[Case]:
    """The cases, the first `per_source` dev-split cases of each source marked `meta.screening` (configurations are
    chosen on them, so the report also scores the cases without them)."""
    taken: Counter[str] = Counter()
    marked: list[Case] = []
    for case in cases:
        if split_of(case.id) == "dev" and taken[case.source] < per_source:
            taken[case.source] += 1
            case = replace(case, meta={**case.meta, SCREENING: "yes"})
        marked.append(case)
    return marked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--out", type=Path, default=None, help="folder (default: <data home>/eval/cases)")
    parser.add_argument("--splits", default="dev,test", help="comma-separated: train, dev, test")
    parser.add_argument("--max-per-source", type=int, default=1000)
    parser.add_argument("--screen-per-source", type=int, default=12, help="dev cases per source for screening")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"skipped: shared data folder {args.data} is absent")
        return 0
    splits = {s.strip() for s in args.splits.split(",") if s.strip()}
    out = args.out or eval_home() / "cases"
    cases = build(load_shared(args.data).reports, splits, args.max_per_source)
    held_out = mark_screening(cases, args.screen_per_source)
    screening = [c for c in held_out if SCREENING in c.meta]
    for name, subset in (("screen", screening), ("heldout", held_out)):
        write_cases(subset, out / f"shared_{name}.jsonl")
        print(f"wrote {len(subset)} {name} cases {dict(Counter(c.source for c in subset))} to {out}")
    needed = {alpha: mcnemar_sample_size(0.10, DISCORDANT_PLANNED, alpha) for alpha in (0.05, 0.01)}
    print(
        f"power: a 10-point paired difference with {DISCORDANT_PLANNED:.0%} discordant cases needs "
        f"{needed[0.05]} cases at alpha 0.05 and {needed[0.01]} at alpha 0.01 (power 0.8); held out: {len(held_out)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
