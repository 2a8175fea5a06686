"""Training pairs from reports: findings (anchor) -> impression (positive), with every skipped report counted.

The radiologist's own impression is the label, so any site can train on its archive without annotating
anything. Reports missing either section cannot form a pair: they are skipped and counted by reason for the
model card.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from retriever.index.bm25 import BM25Field
from retriever.negation.label_pairs import label_sentence_pairs
from retriever.negation.pairs import NegationPair, flip_polarity, real_sentence_pairs, sentence_pairs
from retriever.negation.tokens import tokenize
from retriever.reports.record import Report
from retriever.training.negatives import detail_negative

#: Name of the training set of (query term, affirmed sentence, negated sentence) triplets.
NEGATION_TERMS = "negation-terms"


class TrainingError(ValueError):
    """Training cannot start or continue (bad data, existing output, no checkpoint); the message says what to
    do."""


@dataclass
class PairSet:
    """Findings -> impression pairs (one per report, report ids kept) and the reports skipped, by reason."""

    anchors: list[str] = field(default_factory=list)
    positives: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)

    def __len__(self) -> int:
        return len(self.anchors)

    @property
    def unique_positives(self) -> int:
        return len(set(self.positives))

    def fingerprint(self) -> str:
        """SHA-256 over the pairs: a resumed run must continue on exactly the data it started with."""
        digest = hashlib.sha256()
        for anchor, positive in zip(self.anchors, self.positives, strict=True):
            digest.update(anchor.encode() + b"\0" + positive.encode() + b"\1")
        return digest.hexdigest()


def build_pairs(reports: Iterable[Report]) -> PairSet:
    """One (findings, impression) pair per report that has both sections."""
    pairs = PairSet()
    for report in reports:
        findings, impression = report.findings.strip(), report.impression.strip()
        if not findings and not impression:
            pairs.skipped["missing findings and impression"] += 1
        elif not findings:
            pairs.skipped["missing findings"] += 1
        elif not impression:
            pairs.skipped["missing impression"] += 1
        else:
            pairs.anchors.append(findings)
            pairs.positives.append(impression)
            pairs.ids.append(report.id)
    return pairs


def check_contrastive(pairs: PairSet, batch_size: int) -> int:
    """The batch size to train with, or TrainingError when the pairs have nothing to contrast.

    In-batch negatives need at least two different impressions, and the no-duplicates sampler never puts the
    same impression twice in a batch, so a batch can hold at most as many pairs as there are distinct
    impressions.
    """
    if not pairs:
        raise TrainingError(
            "no findings -> impression pairs to train on: every report lacks a findings or an impression "
            f"section (skipped: {dict(pairs.skipped) or 'none'}); check the section headers or the --map "
            "column mapping"
        )
    if pairs.unique_positives < 2:
        raise TrainingError(
            f"all {len(pairs)} training impressions are identical: nothing to contrast (in-batch negatives "
            "need reports with different impressions)"
        )
    return min(batch_size, pairs.unique_positives)


#: Candidates sharing at least this share of their words with the positive count as the same impression said
#: again ("No acute cardiopulmonary abnormality." / "...disease.": 3 of 5 words): never a hard negative.
SAME_IMPRESSION_JACCARD = 0.5


def bm25_negatives(pairs: PairSet, depth: int = 20) -> list[str | None]:
    """Per pair, the training impression BM25 ranks highest for its findings that is not its own impression (nor a
    rewording of it, by word overlap); None when BM25 finds no such impression within `depth`.

    Lexical look-alikes are exactly what a dense model confuses and BM25 finds cheaply ("left lower lobe
    pneumonia" vs "right lower lobe atelectasis").
    """
    unique = list(dict.fromkeys(pairs.positives))
    index = BM25Field.build(unique, np.arange(len(unique)))
    words = [set(tokenize(text)) for text in unique]
    position = {text: n for n, text in enumerate(unique)}
    negatives: list[str | None] = []
    for anchor, positive in zip(pairs.anchors, pairs.positives, strict=True):
        own = words[position[positive]]
        negatives.append(
            next(
                (
                    unique[row]
                    for row, _ in index.search(anchor, depth)
                    if unique[row] != positive and _jaccard(words[row], own) < SAME_IMPRESSION_JACCARD
                ),
                None,
            )
        )
    return negatives


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def training_sets(
    pairs: PairSet,
    reports: Sequence[Report],
    *,
    bm25: bool = False,
    negation: bool = False,
    detail: bool = False,
    labels: bool = False,
    terms_per_finding: int = 25,
    min_rows: int = 32,
) -> dict[str, dict[str, list[str]]]:
    """The training datasets (name -> columns) for a combination of hard-negative options.

    Rows are grouped by how many hard negatives they got (a dataset needs the same columns in every row), so a
    report whose impression no rule can negate still trains as a plain pair. With `negation`, a findings text also
    gets its impression with the main finding's polarity flipped, and query-term triplets from the train reports'
    sentences ("pleural effusion" -> "Small left pleural effusion.", not "No pleural effusion.", the other polarity
    made by rule) and real-sentence pairs of them ("pleural effusion" -> "Left mild pleural effusion.", not another
    report's "No pleural effusion was detected on the left.") teach the model what a resident's short query
    means. With `detail`, the impression with one side, severity word or measurement changed is another hard
    negative (retriever/training/negatives.py). With `labels`, real-sentence pairs keyed by the finding's query
    ("lymphadenopathy" -> "Several lymph nodes are observed.", retriever/negation/label_pairs.py) join the query-term
    triplets. A group too small to fill a batch (`min_rows`) joins the largest one.
    """
    mined = bm25_negatives(pairs) if bm25 else [None] * len(pairs)
    groups: dict[int, dict[str, list[str]]] = {}
    for anchor, positive, lexical in zip(pairs.anchors, pairs.positives, mined, strict=True):
        made = (lexical, flip_polarity(positive) if negation else None, detail_negative(positive) if detail else None)
        negatives = list(dict.fromkeys(n for n in made if n and n != positive))
        row = {"anchor": anchor, "positive": positive} | {f"negative_{i + 1}": n for i, n in enumerate(negatives)}
        group = groups.setdefault(len(negatives), {column: [] for column in row})
        for column, value in row.items():
            group[column].append(value)
    _merge_small_groups(groups, pairs.positives, min_rows)
    sets = {("reports" if n == 0 else f"reports+{n}neg"): columns for n, columns in sorted(groups.items())}
    triplets: list[NegationPair] = []
    if negation:
        texts = (text for r in reports for text in (r.findings, r.impression))
        triplets += sentence_pairs(texts, "train", per_term=terms_per_finding)
        triplets += real_sentence_pairs(reports, "train-real")
    if labels:
        triplets += label_sentence_pairs(reports, "train-label")
    if triplets:
        sets[NEGATION_TERMS] = {
            "anchor": [t.query for t in triplets],
            "positive": [t.affirmed for t in triplets],
            "negative_1": [t.negated for t in triplets],
        }
    return sets


def _merge_small_groups(groups: dict[int, dict[str, list[str]]], impressions: list[str], min_rows: int) -> None:
    """Move the rows of groups smaller than `min_rows` into the largest group, padding missing negatives with
    other reports' impressions (what an in-batch negative would be anyway): a dataset of a handful of rows
    would otherwise train in batches too small to contrast anything."""
    if len(groups) < 2:
        return
    largest = max(groups, key=lambda n: len(groups[n]["anchor"]))
    target = groups[largest]
    for n in [n for n in groups if n != largest and len(groups[n]["anchor"]) < min_rows]:
        small = groups.pop(n)
        for i in range(len(small["anchor"])):
            row = {column: values[i] for column, values in small.items()}
            fillers = (p for p in impressions[i + 1 :] + impressions[: i + 1] if p != row["positive"])
            for k in range(1, largest + 1):
                row.setdefault(f"negative_{k}", next(fillers))
            for column in target:
                target[column].append(row[column])
