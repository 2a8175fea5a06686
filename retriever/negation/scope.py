"""Which words of a report are under a negation: the lexical search's view of "no pleural effusion".

BM25 scores "No pleural effusion." like "Pleural effusion." unless the negated words are told apart. This marks
every word inside a NegEx scope (the triggers, pseudo-negations, termination terms and six-word window of
retriever/negation/rules.py, applied to all words of a clause at once instead of one concept) with `NEGATED_PREFIX`, so
an affirmed query word never matches its negated mention and a negated query ("no effusion") matches negated
mentions. The trigger words themselves carry no content once their scope is marked and are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from retriever.negation.rules import POST_NEGATION, PRE_NEGATION, PSEUDO_NEGATION, TERMINATION, WINDOW

NEGATED_PREFIX = "neg:"  # never part of a word: words are [a-z0-9]+
_WORD = re.compile(r"[a-z0-9]+")
_CLAUSE = re.compile(r"[.;:!?\n]+")


def _phrases(phrases: Iterable[str]) -> dict[str, list[tuple[str, ...]]]:
    """Phrases as word tuples, indexed by first word, longest first (so "no evidence of" wins over "no")."""
    table: dict[str, list[tuple[str, ...]]] = {}
    for phrase in phrases:
        words = tuple(_WORD.findall(phrase.lower()))
        table.setdefault(words[0], []).append(words)
    return {first: sorted(found, key=len, reverse=True) for first, found in table.items()}


_PRE, _POST = _phrases(PRE_NEGATION), _phrases(POST_NEGATION)
_PSEUDO, _TERMINATION = _phrases(PSEUDO_NEGATION), _phrases(TERMINATION)


def _match(words: list[str], at: int, table: dict[str, list[tuple[str, ...]]]) -> int:
    """Length of the longest phrase of `table` starting at words[at], 0 if none."""
    for phrase in table.get(words[at], ()):
        if tuple(words[at : at + len(phrase)]) == phrase:
            return len(phrase)
    return 0


def negated_words(words: list[str]) -> tuple[list[bool], list[bool]]:
    """For one clause: (negated, trigger) flags per word. A pre-negation trigger reaches the words after it up to
    WINDOW words from its start, a post-negation trigger the WINDOW words before its end (the longer phrase wins
    where both start: "no longer seen" looks back, "no" alone forward); a termination term ends a scope and a
    pseudo-negation ("no change") is no trigger."""
    n = len(words)
    negated, trigger = [False] * n, [False] * n
    stops = [i for i in range(n) if _match(words, i, _TERMINATION)]
    at = 0
    while at < n:
        if (skip := _match(words, at, _PSEUDO)) > 0:
            at += skip
            continue
        pre, post = _match(words, at, _PRE), _match(words, at, _POST)
        length = max(pre, post)
        if pre and pre >= post:
            end = min([n, at + WINDOW + 1, *(s for s in stops if s >= at + length)])
            negated[at + length : end] = [True] * max(0, end - at - length)
        elif post:
            start = max([0, at + length - 1 - WINDOW, *(s + 1 for s in stops if s < at)])
            negated[start:at] = [True] * (at - start)
        trigger[at : at + length] = [True] * length
        at += 1  # triggers overlap: "there is no" then "no evidence of"
    return negated, trigger


def scoped_clauses(text: str) -> list[list[str]]:
    """scoped_words clause by clause (a clause ends at . ; : ! ? or a line break)."""
    out: list[list[str]] = []
    for clause in _CLAUSE.split(text.lower()):
        words = _WORD.findall(clause)
        if not words:
            continue
        negated, trigger = negated_words(words)
        out.append([NEGATED_PREFIX + w if neg else w for w, neg, trig in zip(words, negated, trigger, strict=True)
                    if not trig])
    return out


def scoped_words(text: str) -> list[str]:
    """Every word of `text`, lowercased, the negated ones prefixed with NEGATED_PREFIX, triggers dropped."""
    return [word for clause in scoped_clauses(text) for word in clause]
