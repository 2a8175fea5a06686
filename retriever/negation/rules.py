"""NegEx-style negation rules for report sentences: detect, remove or add the negation of a finding.

Used to build negation-aware training negatives ("no pleural effusion" must not match "pleural effusion") and the
negation test. The rule set follows NegEx (Chapman et al., 2001): pre-negation triggers within a window before the
concept, post-negation triggers after it, pseudo-negations that look like negations but are not ("no change"),
and termination terms that end a trigger's scope ("but", "however"). The tables live in triggers.py and the scopes
in scope.py (is_negated asks them, so the detector and BM25 read a sentence alike); affirm and negate only need
the nearest trigger, found within WINDOW words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from retriever.negation.inflection import concept_spans
from retriever.negation.scope import may_negate, negated_spans
from retriever.negation.triggers import (
    POST_NEGATION,
    POST_UNCERTAINTY,
    PRE_NEGATION,
    PRE_UNCERTAINTY,
    PSEUDO_NEGATION,
    TERMINATION,
    WINDOW,
)

__all__ = [
    "POST_NEGATION",
    "POST_UNCERTAINTY",
    "PRE_NEGATION",
    "PRE_UNCERTAINTY",
    "PSEUDO_NEGATION",
    "TERMINATION",
    "WINDOW",
    "affirm",
    "is_negated",
    "negate",
    "negated_ranges",
]

_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


@dataclass(frozen=True)
class _Span:
    start: int
    end: int


def _find(text: str, phrase: str, start: int = 0, end: int | None = None) -> list[_Span]:
    pattern = r"(?<![a-z0-9])" + r"\s+".join(map(re.escape, phrase.lower().split())) + r"(?![a-z0-9])"
    limit = len(text) if end is None else end
    return [
        _Span(m.start(), m.end()) for m in re.finditer(pattern, text.lower()) if start <= m.start() and m.end() <= limit
    ]


def _concept_span(sentence: str, concept: str) -> _Span | None:
    """The concept's first occurrence, its last word in the singular or plural ("no pneumothoraces")."""
    spans = concept_spans(sentence, concept)
    return _Span(*spans[0]) if spans else None


def _scope_before(sentence: str, concept: _Span) -> tuple[int, int]:
    """Character range before the concept that pre-negation triggers can reach (stops at termination terms, except
    one that starts a trigger: the "there is" of "there is no", which affirm rewrites whole)."""
    lowered = sentence.lower()
    words = list(_WORD.finditer(lowered[: concept.start]))
    start = words[-WINDOW].start() if len(words) >= WINDOW else 0
    triggers = {s.start for t in PRE_NEGATION for s in _find(lowered, t, start, concept.start)}
    for term in TERMINATION:
        for span in _find(lowered, term, start, concept.start):
            if span.start not in triggers:
                start = max(start, span.end)
    clause = max(lowered.rfind(ch, 0, concept.start) for ch in ".;:")
    return max(start, clause + 1), concept.start


def _scope_after(sentence: str, concept: _Span) -> tuple[int, int]:
    lowered = sentence.lower()
    words = list(_WORD.finditer(lowered, concept.end))
    end = words[WINDOW - 1].end() if len(words) >= WINDOW else len(lowered)
    for term in TERMINATION:
        for span in _find(lowered, term, concept.end, end):
            end = min(end, span.start)
    stops = [i for i in (lowered.find(ch, concept.end) for ch in ".;:") if i >= 0]
    return concept.end, min([end, *stops])


def _triggers_in(sentence: str, triggers: tuple[str, ...], start: int, end: int) -> list[_Span]:
    pseudo = [s for p in PSEUDO_NEGATION for s in _find(sentence, p, start, end)]
    found = []
    for trigger in triggers:
        for span in _find(sentence, trigger, start, end):
            if not any(p.start <= span.start < p.end for p in pseudo):
                found.append(span)
    return sorted(found, key=lambda s: (s.start, -(s.end - s.start)))


def is_negated(sentence: str, concept: str) -> bool:
    """Whether `concept` (which must occur in the sentence) is negated there: whether a word of it lies in the
    scope of a trigger outside it, by the scopes of retriever/negation/scope.py (those BM25 indexes, so search and
    detector agree). Its first occurrence is judged. Raises ValueError if absent."""
    span = _concept_span(sentence, concept)
    if span is None:
        raise ValueError(f"concept {concept!r} not in sentence")
    return negated_ranges(sentence, [(span.start, span.end)])[0]


def negated_ranges(sentence: str, ranges: list[tuple[int, int]]) -> list[bool]:
    """For each character range of the sentence (a mention found by position, as retriever.concepts does), whether
    it is negated, by the rule of is_negated: a word of it lies in the scope of a trigger outside it. One scope pass
    answers every range."""
    if not may_negate(sentence):
        return [False] * len(ranges)
    spans = negated_spans(sentence)
    return [
        any(
            start < r_end and r_start < end and any(t_end <= r_start or t_start >= r_end for t_start, t_end in triggers)
            for start, end, triggers in spans
        )
        for r_start, r_end in ranges
    ]


# Rewrites that turn a negating phrase into its affirmative counterpart (checked before plain deletion).
_AFFIRM_REWRITES: tuple[tuple[str, str], ...] = (
    ("there is no", "there is"),
    ("there are no", "there are"),
    ("without evidence of", "with evidence of"),
    ("without", "with"),
    ("negative for", "positive for"),
    ("free of", "with"),
    ("absence of", "presence of"),
    ("no evidence of", "evidence of"),
    ("no evidence for", "evidence for"),
    ("no signs of", "signs of"),
    ("no sign of", "sign of"),
    ("ruled out", "confirmed"),
    ("resolution of", "persistent"),
    ("denies", "reports"),
    ("denied", "reported"),
)
_POST_AFFIRM: tuple[tuple[str, str], ...] = (
    ("is not seen", "is seen"),
    ("are not seen", "are seen"),
    ("was not seen", "was seen"),
    ("were not seen", "were seen"),
    ("is not identified", "is identified"),
    ("are not identified", "are identified"),
    ("not identified", "identified"),
    ("is not present", "is present"),
    ("are not present", "are present"),
    ("not present", "present"),
    ("is absent", "is present"),
    ("are absent", "are present"),
    ("has resolved", "persists"),
    ("have resolved", "persist"),
)


def affirm(sentence: str, concept: str) -> str | None:
    """The sentence with the concept's negation removed, or None if no rule applies (or it is not negated)."""
    span = _concept_span(sentence, concept)
    if span is None or not is_negated(sentence, concept):
        return None
    before = _scope_before(sentence, span)
    for phrase, replacement in _AFFIRM_REWRITES:
        hits = _find(sentence, phrase, *before)
        if hits:
            return _fix_case(_replace(sentence, hits[-1], replacement))
    bare = _triggers_in(sentence, ("no", "not", "none"), *before)
    if bare:
        return _fix_case(_replace(sentence, bare[-1], ""))
    after = _scope_after(sentence, span)
    for phrase, replacement in _POST_AFFIRM:
        hits = _find(sentence, phrase, *after)
        if hits:
            return _replace(sentence, hits[0], replacement)
    return None


# Words that end a noun phrase when walking back from a concept ("there is a | small left | effusion").
_PHRASE_BOUNDARY = frozenset(
    [
        "there",
        "is",
        "are",
        "was",
        "were",
        "a",
        "an",
        "the",
        "of",
        "in",
        "with",
        "and",
        "or",
        "by",
        "to",
        "at",
        "on",
        "has",
        "have",
        "had",
        "show",
        "shows",
        "showed",
        "demonstrate",
        "demonstrates",
        "seen",
        "noted",
        "identified",
        "suggests",
        "suggest",
        "suggesting",
        "likely",
        "represent",
        "represents",
    ]
)


def negate(sentence: str, concept: str) -> str | None:
    """The sentence with the concept negated, or None if it already is (or the concept is absent).

    The negation goes before the concept's whole noun phrase ("small left pleural effusion"): an article becomes
    "no", "with" becomes "without", "there is" gains "no", otherwise "no" is inserted.
    """
    span = _concept_span(sentence, concept)
    if span is None or is_negated(sentence, concept):
        return None
    lowered = sentence.lower()
    start, _ = _scope_before(sentence, span)
    words = list(_WORD.finditer(lowered, start, span.start))
    phrase_start = span.start
    for word in reversed(words):
        if word.group() in _PHRASE_BOUNDARY or re.search(r"[,;]", lowered[word.end() : phrase_start]):
            break
        phrase_start = word.start()
    before = lowered[start:phrase_start]
    diagnostic = re.search(r"\b(consistent|compatible|concerning|suspicious|suggestive)\s+(with|for|of)\s+$", before)
    if diagnostic:
        at = start + diagnostic.start()
        return sentence[:at] + "not " + sentence[at:]
    article = re.search(r"\b(an?|the|any)\s+$", before)
    if article and re.search(r"\bwith\s+(an?|any)\s+$", before):
        with_at = start + before.rindex("with")
        return _replace(sentence, _Span(with_at, phrase_start), "without ")
    if article:
        return _replace(sentence, _Span(start + article.start(), phrase_start), "no ")
    if re.search(r"\bwith\s+$", before):
        with_at = start + before.rindex("with")
        return _replace(sentence, _Span(with_at, with_at + 4), "without")
    if not sentence[:phrase_start].strip():
        return "No " + sentence[phrase_start].lower() + sentence[phrase_start + 1 :]
    return sentence[:phrase_start] + "no " + sentence[phrase_start:]


def _replace(sentence: str, span: _Span, replacement: str) -> str:
    text = sentence[: span.start] + replacement + sentence[span.end :]
    return re.sub(r"\s{2,}", " ", text).strip()


def _fix_case(sentence: str) -> str:
    sentence = sentence.strip()
    return sentence[:1].upper() + sentence[1:] if sentence else sentence
