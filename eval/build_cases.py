"""Build diagnosis cases from the shared development data (never committed: they hold report text).

    python -m eval.build_cases                       # -> <data home>/eval/cases/shared_test.jsonl
    python -m eval.build_cases --splits dev,test --max-per-source 80 --out cases.jsonl

Two kinds of case, both from reports the encoders were not trained on (the held-out split of
`retriever.splits`, by report id):
- MedPix teaching cases: findings -> the case diagnosis. `accept` adds the case title when it names a diagnosis,
  parenthesised aliases ("Ledderhose disease" in "Plantar fibromatosis (Ledderhose disease)") and each item of a
  numbered multi-diagnosis. The differential list is NOT accepted: it names the alternatives that were excluded.
- Open-i chest X-rays with an abnormal NegBio label: findings -> impression. `accept` adds each positive
  impression sentence and the NegBio labels in words ("Effusion" -> "pleural effusion"), because a one-line
  answer naming the main finding is what a resident would be expected to give.
The case id is the report id, so the benchmark can keep the case's own report out of the retrieval corpus.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from itertools import zip_longest
from pathlib import Path

from eval.cases import Case, write_cases
from eval.shared_data import SHARED_DATA, eval_home, load_shared
from retriever.report import Report
from retriever.splits import split_of

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
_NORMAL = re.compile(
    r"^\W*(?:\d+\.\s*)?(?:no |normal |negative |clear |otherwise|stable (?:chest|exam)|technically)"
    r"|\bno (?:acute|active|evidence)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[a-z)])\.\s+")
_ALIAS = re.compile(r"^(?:[A-Z][A-Za-z0-9]{1,5}|\S+(?:\s+\S+)+)$")  # an acronym (LAM) or a name of 2+ words
_NUMBERED = re.compile(r"(?:^|\s)\d+[.)]\s+")
_PAREN = re.compile(r"\(([^()]+)\)")
_TITLE_NOT_DIAGNOSIS = re.compile(r"\b(case|year[- ]old|presents?|patient|history)\b", re.IGNORECASE)


def _clean(text: str) -> str:
    """One line without bullets, de-identification marks or trailing punctuation."""
    return " ".join(text.replace("•", " ").replace("XXXX", " ").split()).strip(" .;:-,")


def _items(text: str) -> list[str]:
    """Numbered items ("1. A 2. B") split into sentences, or the whole text as one item."""
    parts = [_clean(s) for p in _NUMBERED.split(" " + text) for s in _SENTENCE.split(p)]
    return [p for p in parts if p]


def _aliases(text: str) -> list[str]:
    """The text, the text without its parenthesis and each parenthesised alias that is an acronym or a name
    ("LAM", "Ledderhose disease"; not a qualifier such as "sporadic")."""
    out = [text]
    inner = _PAREN.findall(text)
    if inner:
        out.append(_clean(_PAREN.sub(" ", text)))
        out += [_clean(i) for i in inner if _ALIAS.match(i.strip())]
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
    items = _items(report.impression)
    if not items:
        return None
    accept: list[str] = []
    for item in items:
        accept += _aliases(item)
    title = _clean(report.meta.get("title", ""))
    if title and not _TITLE_NOT_DIAGNOSIS.search(title):
        accept += _aliases(title)
    diagnosis = items[0]
    return Case(report.id, report.findings, diagnosis, _distinct(accept, diagnosis), "medpix")


def openi_case(report: Report) -> Case | None:
    """Abnormal findings -> impression, or None for a normal study or one without a NegBio finding label."""
    positive = [NEGBIO_WORDS[label] for label in report.labels if label in NEGBIO_WORDS]
    if not positive or "normal" in report.labels or not report.findings or not report.impression:
        return None
    if _NORMAL.match(report.impression):  # the impression opens with "no acute ...": not an abnormal case
        return None
    accept = [s for s in _items(report.impression) if not _NORMAL.search(s)] + positive
    diagnosis = _clean(report.impression)
    return Case(report.id, report.findings, diagnosis, _distinct(accept, diagnosis), "openi")


BUILDERS = {"medpix": medpix_case, "openi": openi_case}


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--out", type=Path, default=None, help="default: <data home>/eval/cases/shared_<splits>.jsonl")
    parser.add_argument("--splits", default="test", help="comma-separated: train, dev, test")
    parser.add_argument("--max-per-source", type=int, default=60)
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"skipped: shared data folder {args.data} is absent")
        return 0
    splits = {s.strip() for s in args.splits.split(",") if s.strip()}
    out = args.out or eval_home() / "cases" / f"shared_{'_'.join(sorted(splits))}.jsonl"
    cases = build(load_shared(args.data).reports, splits, args.max_per_source)
    write_cases(cases, out)
    by_source = {s: sum(c.source == s for c in cases) for s in BUILDERS}
    print(f"wrote {len(cases)} cases {by_source} to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
