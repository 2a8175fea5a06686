"""Sentence pairs that differ only in negation, built from report text with the project's NegEx rules.

One source of truth for two users that must agree on what "differs only in negation" means:
- training (retriever.train_data): negation-aware hard negatives, i.e. the impression with its main finding negated
  (or a negated finding affirmed), and query-term triplets ("pleural effusion" -> affirmed sentence, not the
  negated one) from the TRAIN split;
- the negation test (eval.negation_benchmark): the same construction on the held-out TEST split and on the NegEx
  annotated set, which training never sees.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from retriever.negation import affirm, is_negated, negate

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
    "acute cardiopulmonary abnormality", "acute cardiopulmonary disease", "acute cardiopulmonary process",
    "acute cardiopulmonary findings", "acute intracranial abnormality", "acute abnormality", "acute disease",
    "acute process", "acute findings", "active disease", "abnormality",
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
