"""The sentence of a report that matches a query, with the query's words marked (and the negated ones marked so).

Why: a preview cut at a fixed length often stops before the sentence that matched, and a resident cannot see why a
report came up, or that it says "no effusion" where they asked about an effusion. `search`, `ask` and the chat show
this sentence; the whole report stays one command (`assistant show ID`) or one click away.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.text import shorten
from retriever.negation.scope import negated_spans
from retriever.reports.record import Field

#: Words that say nothing about a finding: never marked.
STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "the",
        "there",
        "this",
        "to",
        "was",
        "were",
        "with",
        "without",
        "no",
        "not",
        "seen",
        "noted",
    }
)
MAX_CHARS = 320
_SENTENCE = re.compile(r"[^.!?;\n]+[.!?;]?")
_WORD = re.compile(r"[A-Za-z0-9]+")


@dataclass(frozen=True)
class Mark:
    """A query word in the excerpt: its character span, and whether the report negates it there."""

    start: int
    end: int
    negated: bool


@dataclass(frozen=True)
class Excerpt:
    """A sentence (cut to MAX_CHARS around its first mark) and the query words marked in it."""

    text: str
    marks: tuple[Mark, ...]


def _stem(word: str) -> str:
    """A word compared without case or a plural ending ("effusions" meets "effusion")."""
    word = word.lower()
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word


def query_terms(query: str) -> set[str]:
    """The query's words that can mark a report: stems of its content words (3+ characters, no stopwords)."""
    return {_stem(w) for w in _WORD.findall(query) if len(w) >= 3 and w.lower() not in STOPWORDS}


def matching_excerpt(text: str, query: str) -> Excerpt:
    """The sentence of `text` holding the most distinct query words (the first such one), with them marked; its
    first sentence, unmarked, when none holds any."""
    terms = query_terms(query)
    first, best, best_found = "", "", 0
    for match in _SENTENCE.finditer(text):
        sentence = " ".join(match.group().split()).lstrip(",:- ")
        first = first or sentence
        found = len({_stem(w) for w in _WORD.findall(sentence)} & terms)
        if found > best_found:
            best, best_found = sentence, found
    if best_found == 0:
        return Excerpt(shorten(first, MAX_CHARS), ())
    return _cut(best, _marks(best, terms))


def _marks(sentence: str, terms: set[str]) -> list[Mark]:
    negated = [(start, end) for start, end, _ in negated_spans(sentence)]
    marks = []
    for word in _WORD.finditer(sentence):
        if _stem(word.group()) in terms:
            denied = any(start <= word.start() and word.end() <= end for start, end in negated)
            marks.append(Mark(word.start(), word.end(), denied))
    return marks


def _cut(sentence: str, marks: list[Mark]) -> Excerpt:
    """The sentence, or MAX_CHARS of it starting a little before its first mark, with the marks moved along."""
    if len(sentence) <= MAX_CHARS:
        return Excerpt(sentence, tuple(marks))
    start = max(0, marks[0].start - 40)
    lead = "…" if start else ""
    body = shorten(sentence[start:], MAX_CHARS - len(lead))
    limit = len(body) - (1 if body.endswith("…") else 0)
    shift = len(lead) - start
    kept = tuple(
        Mark(m.start + shift, m.end + shift, m.negated) for m in marks if m.start >= start and m.end - start <= limit
    )
    return Excerpt(lead + body, kept)


def searched_text(field: Field | None, findings: str, impression: str, full_text: str = "") -> str:
    """The part of a report a search on `field` matched: its impression, its findings, or the whole report (also
    when the field is not known: a hit of another retriever)."""
    if field == "impression":
        return impression
    if field == "findings":
        return findings
    return full_text or f"{findings}\n{impression}"
