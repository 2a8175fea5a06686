"""Real-sentence negation pairs keyed by the finding a resident searches for ("lymphadenopathy"), not by the word
the report uses ("lymph nodes").

retriever.negation.pairs.real_sentence_pairs keys a pair by the term found in both sentences, so training learns
"nodule" -> "calcified nodule", not "no nodules". A resident types the finding's name, and the reports often say it
otherwise: "lymphadenopathy" is "several lymph nodes are observed" against "no lymph node in pathological size was
observed"; "cardiomegaly" is "cardiac enlargement". Here a sentence counts for the finding that lists its term
(retriever.reports.findings), so the pair's query is what the resident types.

One rule for the two users that must agree on it: training's label-query triplets (the train split;
retriever.training.data) and the real-pair negation test (the dev and test splits; eval.negation.real_pairs, whose
docstring states the rule in full). A usable sentence has at most `MAX_PAIR_WORDS` words, no de-identification
placeholder, no organ outside the chest (`ELSEWHERE`) and exactly one finding mention among every finding term
(`MENTION_TERMS`), whose term is a finding of the report's source; its polarity is retriever.negation.pairs.polarity.
"""

from __future__ import annotations

from collections.abc import Iterable

from retriever.negation.pairs import (
    FINDING_TERMS,
    MAX_PAIR_WORDS,
    PAIR_SEED,
    Found,
    NegationPair,
    add_sentence,
    match,
    mentions,
    polarity,
    sentences,
    term_spans,
)
from retriever.reports.findings import OWNERS, Finding
from retriever.reports.record import Report

#: Organs outside the chest that CT-RATE's chest CTs also describe: a "nodule in the thyroid" is no lung nodule, so
#: a sentence naming one is not used on either side (the label lists are chest findings).
ELSEWHERE = (
    "thyroid",
    "liver",
    "hepatic",
    "kidney",
    "renal",
    "adrenal",
    "spleen",
    "pancreas",
    "gallbladder",
    "abdominal",
    "breast",
    "axillary",
    "axilla",
)
#: Every term that counts as a finding mention (both label lists and the training terms), longest first.
MENTION_TERMS: tuple[str, ...] = tuple(
    sorted({t for owner in OWNERS.values() for t in owner} | set(FINDING_TERMS), key=len, reverse=True)
)


def judge(sentence: str, owner: dict[str, Finding]) -> tuple[Finding, bool] | None:
    """(finding, negated) for a usable sentence of a report whose findings `owner` lists by term; None when it is
    not one."""
    if len(sentence.split()) > MAX_PAIR_WORDS or "xxxx" in sentence.lower():
        return None
    if any(term_spans(sentence, organ) for organ in ELSEWHERE):
        return None
    found = mentions(sentence, MENTION_TERMS)
    if len(found) != 1 or found[0][1] not in owner:
        return None
    term = found[0][1]
    negated = polarity(sentence, term)
    return None if negated is None else (owner[term], negated)


def report_sentences(report: Report) -> list[str]:
    """The sentences of a report's findings and impression (its full text when it has neither)."""
    sections = [t for t in (report.findings, report.impression) if t.strip()] or [report.full_text]
    return [s for text in sections for s in sentences(text)]


def collect(reports: Iterable[Report]) -> Found:
    """finding query -> negated? -> folded sentence -> Sentence, over every usable sentence of the reports (reports
    of a source without a label list give none)."""
    found: Found = {}
    for report in reports:
        owner = OWNERS.get(report.source)
        for text in report_sentences(report) if owner else ():
            judged = judge(text, owner)
            if judged is not None:
                add_sentence(found, text, judged[0].query, judged[1], report.id)
    return found


def label_sentence_pairs(reports: Iterable[Report], origin: str = "real", seed: int = PAIR_SEED) -> list[NegationPair]:
    """Affirmed/negated pairs of real sentences of the reports, keyed by the finding's query."""
    return match(collect(reports), origin, seed)
