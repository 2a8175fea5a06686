"""Sentence pairs that differ only in negation, built from report text with the project's NegEx rules.

One source of truth for two users that must agree on what "differs only in negation" means:
- training (retriever.training.data): negation-aware hard negatives, i.e. the impression with its main finding negated
  (or a negated finding affirmed), and query-term triplets ("pleural effusion" -> affirmed sentence, not the
  negated one) from the TRAIN split;
- the negation test (eval.negation.encoder_pairs): the same construction on the held-out TEST split and on the NegEx
  annotated set, which training never sees.

Real-sentence pairs (`real_sentence_pairs`, `match`): both halves as radiologists wrote them, a sentence affirming a
finding and another report's sentence ruling it out. Rule-made halves teach one-word flips ("No pleural effusion." vs
"Pleural effusion."); real ones teach the phrasings reports use ("pleural effusion was not detected", "the
costophrenic angles are sharp without effusion"). Training builds them from the train split, the real-pair test
(eval.negation.real_pairs) from dev and test with the same `polarity` and `match`.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from retriever.negation.rules import (
    POST_NEGATION,
    POST_UNCERTAINTY,
    PRE_NEGATION,
    PRE_UNCERTAINTY,
    affirm,
    is_negated,
    negate,
)
from retriever.reports.record import Report

#: Finding terms a resident types as a query (longest first, so "pleural effusion" wins over "effusion").
FINDING_TERMS: tuple[str, ...] = tuple(
    sorted(
        [
            "pleural effusion",
            "effusion",
            "pneumothorax",
            "consolidation",
            "cardiomegaly",
            "pulmonary edema",
            "edema",
            "atelectasis",
            "nodule",
            "mass",
            "opacity",
            "opacities",
            "infiltrate",
            "pneumonia",
            "fracture",
            "emphysema",
            "hyperinflation",
            "granuloma",
            "scarring",
            "fibrosis",
            "hernia",
            "lymphadenopathy",
            "calcification",
            "pleural thickening",
            "airspace disease",
            "interstitial edema",
            "vascular congestion",
            "bronchiectasis",
            "scoliosis",
            "osteophytes",
        ],
        key=len,
        reverse=True,
    )
)

#: Phrases that carry the message of a normal impression ("No acute cardiopulmonary abnormality."): negating or
#: affirming them is the hardest negative a normal report can get. Used for impressions only.
NORMAL_CONCEPTS: tuple[str, ...] = (
    "acute cardiopulmonary abnormality",
    "acute cardiopulmonary disease",
    "acute cardiopulmonary process",
    "acute cardiopulmonary findings",
    "acute intracranial abnormality",
    "acute abnormality",
    "acute disease",
    "acute process",
    "acute findings",
    "active disease",
    "abnormality",
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class NegationPair:
    """A query term, a sentence affirming it and the same sentence negating it."""

    query: str
    affirmed: str
    negated: str
    origin: str


def sentences(text: str, shortest: int = 12, longest: int = 200) -> list[str]:
    """Sentences of a report section, keeping lengths where a one-word negation is a real difference."""
    return [s.strip() for s in _SENTENCE_END.split(text) if shortest <= len(s.strip()) <= longest]


def term_in(sentence: str, terms: Iterable[str] = FINDING_TERMS) -> str | None:
    """The first (longest) term occurring as whole words in the sentence."""
    lowered = sentence.lower()
    return next((t for t in terms if re.search(rf"\b{re.escape(t)}\b", lowered)), None)


def pair_for(sentence: str, concept: str, origin: str) -> NegationPair | None:
    """(concept, affirmed, negated) from a sentence in either polarity; None when no rule rewrites it."""
    try:
        negated = is_negated(sentence, concept)
    except ValueError:  # the concept occurs only inside a longer word
        return None
    if negated:
        other = affirm(sentence, concept)
        return NegationPair(concept, other, sentence, origin) if other else None
    other = negate(sentence, concept)
    return NegationPair(concept, sentence, other, origin) if other else None


def flip_polarity(impression: str) -> str | None:
    """The impression with its main finding's polarity flipped: the first sentence naming a finding (or a normal
    phrase) is negated if affirmed, affirmed if negated; None when no sentence can be rewritten."""
    for sentence in sentences(impression, shortest=3, longest=400):
        concept = term_in(sentence) or term_in(sentence, NORMAL_CONCEPTS)
        pair = pair_for(sentence, concept, "impression") if concept else None
        if pair is None:
            continue
        flipped = pair.negated if pair.affirmed == sentence else pair.affirmed
        return impression.replace(sentence, flipped, 1)
    return None


def sentence_pairs(texts: Iterable[str], origin: str, per_term: int | None = None) -> list[NegationPair]:
    """Negation pairs from the sentences of `texts` (each distinct sentence once, at most `per_term` per term, and
    none from de-identified sentences whose "XXXX" placeholders would dominate the meaning)."""
    pairs: list[NegationPair] = []
    seen: set[str] = set()
    per: Counter[str] = Counter()
    for text in texts:
        for sentence in sentences(text):
            key = sentence.lower()
            term = term_in(sentence)
            if term is None or key in seen or "xxxx" in key or (per_term is not None and per[term] >= per_term):
                continue
            seen.add(key)
            pair = pair_for(sentence, term, origin)
            if pair:
                pairs.append(pair)
                per[term] += 1
    return pairs


#: Longest sentence (words) of a real pair: in a longer one the finding is a small part of the meaning.
MAX_PAIR_WORDS = 25
#: Words that leave a finding in doubt (hedges) or call it normal ("millimetric lymph nodes" are no
#: lymphadenopathy): a sentence holding one is never an affirmed half.
HEDGES = (
    "cannot",
    "exclude",
    "excluded",
    "may",
    "might",
    "could",
    "possible",
    "possibly",
    "questionable",
    "if",
    "versus",
    "vs",
    "differential",
    "normal",
    "millimetric",
    "millimeter",
    "nonspecific",
    "non-specific",
    "non-pathological",
    "insignificant",
)
_DOUBT = PRE_NEGATION + POST_NEGATION + PRE_UNCERTAINTY + POST_UNCERTAINTY + HEDGES  # "rule out X" too
#: Seed of the shuffle that matches affirmed and negated sentences.
PAIR_SEED = 17


def term_spans(text: str, term: str) -> list[tuple[int, int]]:
    """Character spans of the term as whole words (case and inner whitespace ignored), as the negation rules
    find a concept."""
    pattern = r"(?<![a-z0-9])" + r"\s+".join(map(re.escape, term.lower().split())) + r"(?![a-z0-9])"
    return [m.span() for m in re.finditer(pattern, text.lower())]


def polarity(sentence: str, term: str) -> bool | None:
    """True when the rules negate the term in the sentence; False when they do not and the sentence holds no
    negation trigger anywhere and no hedge (the rules miss some negations, so only sentences with no doubt count as
    affirmed); None otherwise."""
    if is_negated(sentence, term):
        return True
    return None if any(term_spans(sentence, cue) for cue in _DOUBT) else False


@dataclass
class Sentence:
    """One distinct sentence that mentions one finding, with its polarity and every report it occurs in."""

    text: str
    finding: str
    negated: bool
    reports: set[str] = field(default_factory=set)


#: finding query -> negated? -> folded sentence text -> Sentence
Found = dict[str, dict[bool, dict[str, Sentence]]]


def folded(text: str) -> str:
    """The text with case and spacing folded: two sentences are the same sentence when their folded texts are."""
    return " ".join(text.lower().split())


def add_sentence(found: Found, text: str, finding: str, negated: bool, report_id: str) -> None:
    """Record a judged sentence once per folded text (case and spacing), remembering each report it occurs in."""
    key = folded(text)
    side = found.setdefault(finding, {False: {}, True: {}})[negated]
    side.setdefault(key, Sentence(text, finding, negated)).reports.add(report_id)


def match(found: Found, origin: str = "real", seed: int = PAIR_SEED) -> list[NegationPair]:
    """Per finding (in query order): affirmed and negated sentences, each sorted then shuffled with `seed`; each
    affirmed sentence takes the first unused negated one from a report it does not occur in. Each sentence is used
    once, so a finding gives at most min(affirmed, negated) pairs."""
    rng = random.Random(seed)
    pairs: list[NegationPair] = []
    for query, sides in sorted(found.items()):
        affirmed = [sides[False][k] for k in sorted(sides[False])]
        negated = [sides[True][k] for k in sorted(sides[True])]
        rng.shuffle(affirmed)
        rng.shuffle(negated)
        for a in affirmed:
            partner = next((n for n in negated if n.reports - a.reports), None)
            if partner is not None:
                negated.remove(partner)
                pairs.append(NegationPair(query, a.text, partner.text, origin))
    return pairs


def mention_spans(sentence: str, terms: Iterable[str]) -> list[tuple[int, int, str]]:
    """(start, end, term) of each term mention in reading order; a term inside a longer mention already kept
    ("effusion" in "pleural effusion") does not count."""
    spans = sorted(((s, e, t) for t in terms for s, e in term_spans(sentence, t)), key=lambda x: (x[0], x[0] - x[1]))
    kept: list[tuple[int, int, str]] = []
    for start, end, term in spans:
        if not kept or start >= kept[-1][1]:
            kept.append((start, end, term))
    return kept


def mentions(text: str, terms: Iterable[str]) -> list[tuple[str, str]]:
    """(text to judge, term) per mention: the mention is the term's first occurrence in the text to judge."""
    found: list[tuple[str, str]] = []
    for sentence in sentences(text, shortest=1, longest=len(text)):
        for start, _end, term in mention_spans(sentence, terms):
            earlier = [e for s, e in term_spans(sentence, term) if s < start]
            found.append((sentence[max(earlier, default=0) :], term))
    return found


def _only_term(sentence: str, terms: Iterable[str]) -> str | None:
    """The one finding term the sentence mentions (possibly more than once), else None."""
    found = {term for *_, term in mention_spans(sentence, terms)}
    return found.pop() if len(found) == 1 else None


def real_sentence_pairs(
    reports: Iterable[Report], origin: str = "real", terms: Iterable[str] = FINDING_TERMS, seed: int = PAIR_SEED
) -> list[NegationPair]:
    """Pairs of real sentences of the reports' findings and impressions: per finding term, a sentence affirming it
    without doubt and another report's sentence ruling it out, each at most `MAX_PAIR_WORDS` words, mentioning that
    term only, without de-identification placeholders."""
    terms = tuple(sorted(terms, key=len, reverse=True))
    found: Found = {}
    for report in reports:
        for text in (report.findings, report.impression):
            for sentence in sentences(text):
                if len(sentence.split()) > MAX_PAIR_WORDS or "xxxx" in sentence.lower():
                    continue
                term = _only_term(sentence, terms)
                negated = polarity(sentence, term) if term else None
                if term and negated is not None:
                    add_sentence(found, sentence, term, negated, report.id)
    return match(found, origin, seed)
