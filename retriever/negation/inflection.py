"""Singular and plural of a finding's head word, so "pneumothorax" is found in "no pneumothoraces".

Why: a resident asks about "pneumothorax" or "pleural effusion"; a report rules out "pneumothoraces or pleural
effusions". The negation detector judges a concept where it occurs (rules.is_negated) and the search moves a hit
that negates the query's words last (retriever/search/contradiction.py); both compared words verbatim, so a negated
plural was neither found as that concept nor seen as contradicting the query. English medical plurals are regular
enough for a few rules (Latin and Greek ones included: thorax/thoraces, thrombus/thrombi, metastasis/metastases,
diverticulum/diverticula); the rules only ever relate two words that both occur, so a wrong form is harmless.
"""

from __future__ import annotations

import re
from functools import cache

_VOWELS = frozenset("aeiou")
#: (singular ending, plural ending): the Latin and Greek plurals of radiology words, then the English ones.
_ENDINGS: tuple[tuple[str, str], ...] = (
    ("ax", "aces"),  # thorax, pneumothorax
    ("ex", "ices"),  # apex, cortex
    ("ix", "ices"),  # appendix, cervix
    ("us", "i"),  # thrombus, embolus, calculus
    ("is", "es"),  # metastasis, diagnosis
    ("um", "a"),  # diverticulum, septum
    ("on", "a"),  # ganglion
)
_SIBILANT = re.compile(r"(?:s|x|z|ch|sh)$")


@cache
def inflections(word: str) -> frozenset[str]:
    """The word (lowercased) with its plural forms and, read as a plural, its singular forms."""
    word = word.lower()
    forms = {word, word + ("es" if _SIBILANT.search(word) else "s")}
    if word.endswith("y") and len(word) > 2 and word[-2] not in _VOWELS:
        forms.add(word[:-1] + "ies")
    if word.endswith("ies"):
        forms.add(word[:-3] + "y")
    if word.endswith("es"):
        forms.add(word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        forms.add(word[:-1])
    for singular, plural in _ENDINGS:
        if word.endswith(singular):
            forms.add(word[: -len(singular)] + plural)
        if word.endswith(plural):
            forms.add(word[: -len(plural)] + singular)
    return frozenset(form for form in forms if len(form) > 1) | {word}


def concept_spans(text: str, concept: str) -> list[tuple[int, int]]:
    """Character spans where the concept occurs as whole words (case and inner whitespace ignored), its last word
    in the singular or plural, in text order."""
    words = concept.lower().split()
    if not words:
        return []
    last = "|".join(re.escape(form) for form in sorted(inflections(words[-1]), key=len, reverse=True))
    head = "".join(re.escape(word) + r"\s+" for word in words[:-1])
    pattern = r"(?<![a-z0-9])" + head + f"(?:{last})" + r"(?![a-z0-9])"
    return [m.span() for m in re.finditer(pattern, text.lower())]
