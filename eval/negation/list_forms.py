"""Candidate sentences for the list and colon negation forms of the hand-labelled set (issue 50).

    python -m eval.negation.list_forms --per-source 8 --out /tmp/list_form_candidates.jsonl

Why: reports negate whole lists ("No focal consolidation, pneumothorax, or pleural effusion"), put the negation in
an idiom ("clear of", "negative for", "no evidence of any"), write it after a colon ("Adnexa: Not seen") and negate
plurals ("pneumothoraces"). Sentences of those forms were picked from every source by this script, then labelled by
hand (concept, ruled out / present / uncertain) without running the detector; see eval/datasets/negation_sentences.md.

The script only proposes: every sentence of the findings and impression fields of the shared reports (split as the
set's sentences were: at runs of . ! ? ; before whitespace or the end, and at newlines) is given the first form
whose pattern it matches (FORMS, in order), sentences already in the set are skipped, and up to `--per-source` per
(form, source) are kept, in a fixed order (by the sentence's SHA-1), so the draw is reproducible. The output holds
sentence text, so it is written outside the repository (the Open-i, CT-RATE and MedPix licences).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from eval.common.shared_data import SHARED_DATA, load_shared
from eval.negation.sentences import FIELDS, SENTENCES_FILE, sentence_sha1
from retriever.reports.record import Report

_NEGATION = r"\b(?:no|not|without|neither|negative\s+for|clear\s+of|free\s+of)\b"
_PLURALS = (
    "pneumothoraces|effusions|consolidations|infiltrates|opacities|nodules|masses|fractures|lesions|calcifications|"
    "adenopathies|hemorrhages|haemorrhages|collections|abscesses|dislocations|thrombi|emboli"
)
#: Form name -> pattern, in the order a sentence is assigned (the first that matches).
FORMS: dict[str, re.Pattern[str]] = {
    # "A: none identified" (the negation refers back) and "Chest: No acute finding" (a header, then a negation)
    "after-colon": re.compile(r"\w[^:]{0,80}:\s*(?:none|absent|negative|nil|not|no|without)\b", re.IGNORECASE),
    "negative-for": re.compile(r"\bnegative\s+for\b", re.IGNORECASE),
    "clear-of": re.compile(r"\b(?:clear|free)\s+of\b", re.IGNORECASE),
    "no-evidence-of-any": re.compile(r"\b(?:no|not|without)\b(?:\s+[\w-]+){0,3}\s+any\b", re.IGNORECASE),
    "plural": re.compile(_NEGATION + r"[^.;:]*?\b(?:" + _PLURALS + r")\b", re.IGNORECASE),
    "list-negation": re.compile(
        _NEGATION + r"[^.;:]*,[^.;:]*\b(?:or|nor|and)\b|,[^.;:]*\b(?:or|and)\b[^.;:]*\b(?:were|are)\s+not\b",
        re.IGNORECASE,
    ),
}
_BOUNDARY = re.compile(r"[.!?;]+(?=\s|$)|\n")


@dataclass(frozen=True)
class Candidate:
    """A sentence proposed for labelling: where it is (offsets into a report field, as the set stores rows)."""

    form: str
    report_id: str
    source: str
    field: str
    start: int
    end: int
    sha1: str
    sentence: str


def sentence_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each sentence, trimmed, its closing punctuation kept (the set's splitting rule)."""
    start = 0
    for boundary in _BOUNDARY.finditer(text):
        end = boundary.end() if boundary.group() != "\n" else boundary.start()
        yield from _trimmed(text, start, end)
        start = boundary.end()
    yield from _trimmed(text, start, len(text))


def _trimmed(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    piece = text[start:end]
    if piece.strip():
        lead = len(piece) - len(piece.lstrip())
        yield start + lead, start + len(piece.rstrip())


def form_of(sentence: str) -> str | None:
    """The first form of FORMS whose pattern the sentence matches, None if none."""
    return next((name for name, pattern in FORMS.items() if pattern.search(sentence)), None)


def candidates(reports: Iterable[Report], known: set[str], per_source: int) -> list[Candidate]:
    """Up to `per_source` new sentences per (form, source), by SHA-1 order; a sentence text is proposed once."""
    pool: dict[tuple[str, str], dict[str, Candidate]] = {}
    for report in reports:
        for field in FIELDS:
            text = report.text_of(field) or ""
            for start, end in sentence_spans(text):
                sentence = text[start:end]
                sha1 = sentence_sha1(sentence)
                form = form_of(sentence)
                if form is None or sha1 in known:
                    continue
                found = Candidate(form, report.id, report.source, field, start, end, sha1, sentence)
                pool.setdefault((form, report.source), {}).setdefault(sentence.lower(), found)
    chosen: list[Candidate] = []
    seen: set[str] = set()
    for key in sorted(pool):
        ordered = sorted(pool[key].values(), key=lambda c: c.sha1)
        fresh = [c for c in ordered if c.sentence.lower() not in seen][:per_source]
        seen.update(c.sentence.lower() for c in fresh)
        chosen += fresh
    return chosen


def known_sha1s(path: Path = SENTENCES_FILE) -> set[str]:
    """SHA-1 prefixes of the sentences already in the set."""
    with path.open(encoding="utf-8") as handle:
        return {json.loads(line)["sha1"] for line in handle if line.strip()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-source", type=int, default=8, help="sentences per (form, source)")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--out", type=Path, required=True, help="JSONL of candidates (outside the repository)")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"skipped: shared data folder {args.data} is absent")
        return 0
    found = candidates(load_shared(args.data).reports, known_sha1s(), args.per_source)
    with args.out.open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(asdict(c)) + "\n" for c in found)
    counts: dict[str, int] = {}
    for c in found:
        counts[f"{c.form} {c.source}"] = counts.get(f"{c.form} {c.source}", 0) + 1
    print("\n".join(f"{key}: {n}" for key, n in sorted(counts.items())))
    print(f"{len(found)} candidates -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
