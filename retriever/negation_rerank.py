"""Hits that say the opposite of the query go last, whatever method found them.

A dense encoder places "No pneumothorax." next to "Pneumothorax." (same words, one negation), and fusing it with a
negation-aware BM25 only lowers such a hit. For a resident a report that rules out the very finding asked about is
the most dangerous hit there is, so the search puts every hit that contradicts the query after every hit that
does not, keeping each group in the method's order. A hit contradicts the query when most of the words they share
have the opposite polarity: affirmed in the query and only negated in the hit, or the reverse (negation scopes as
in retriever/negation_scope.py; stopwords do not count). A hit that mentions a word both ways (a mixed report) does
not contradict on that word.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from retriever.negation_scope import NEGATED_PREFIX, scoped_clauses, scoped_words

Hit = TypeVar("Hit")
#: Share of shared words with opposite polarity from which a hit counts as contradicting: a majority.
CONTRADICTION_SHARE = 0.5


def candidate_depth(k: int) -> int:
    """Hits a search ranks before moving contradicting ones last and keeping k: enough that k remain when most of
    the first ones contradict the query."""
    return max(4 * k, 20)


@dataclass(frozen=True)
class Polarity:
    """The content words of a text, by how they occur: affirmed somewhere, negated somewhere (or both)."""

    affirmed: frozenset[str]
    negated: frozenset[str]

    @classmethod
    def of(cls, text: str, stopwords: frozenset[str]) -> Polarity:
        affirmed, negated = set(), set()
        for word in scoped_words(text):
            bare = word.removeprefix(NEGATED_PREFIX)
            if bare not in stopwords:
                (negated if bare != word else affirmed).add(bare)
        return cls(frozenset(affirmed), frozenset(negated))


def contradiction(query: Polarity, hit: Polarity) -> float:
    """Share of the words query and hit share whose polarity is opposite (0 when they share none)."""
    shared = (query.affirmed | query.negated) & (hit.affirmed | hit.negated)
    if not shared:
        return 0.0
    only_negated, only_affirmed = hit.negated - hit.affirmed, hit.affirmed - hit.negated
    opposite = (query.affirmed - query.negated) & only_negated | (query.negated - query.affirmed) & only_affirmed
    return len(opposite & shared) / len(shared)


def _phrases(text: str, stopwords: frozenset[str]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(affirmed, negated) pairs of consecutive content words of one polarity within a clause: the smallest unit that
    names a finding ("pleural effusion", "left pleural" of "left pleural effusion")."""
    affirmed: set[tuple[str, str]] = set()
    negated: set[tuple[str, str]] = set()
    for clause in scoped_clauses(text):
        content = [w for w in clause if w.removeprefix(NEGATED_PREFIX) not in stopwords]
        for first, second in zip(content, content[1:], strict=False):
            if first.startswith(NEGATED_PREFIX) and second.startswith(NEGATED_PREFIX):
                negated.add((first.removeprefix(NEGATED_PREFIX), second.removeprefix(NEGATED_PREFIX)))
            elif not (first.startswith(NEGATED_PREFIX) or second.startswith(NEGATED_PREFIX)):
                affirmed.add((first, second))
    return affirmed, negated


def rules_out_in_part(query: str, text: str, stopwords: frozenset[str]) -> bool:
    """Whether `text` somewhere rules out a phrase the query asserts, or asserts one the query rules out, while not
    contradicting it overall: a report that says "No left pleural effusion." and later "small left pleural
    effusion" (mixed) for "small left pleural effusion". A resident should see that before reading it as support,
    so it is marked, not moved: such a report may still be the best match."""
    wanted_affirmed, wanted_negated = _phrases(query, stopwords)
    affirmed, negated = _phrases(text, stopwords)
    return bool(wanted_affirmed & negated or wanted_negated & affirmed)


def contradicting_last(
    query: str, hits: Sequence[Hit], text_of: Callable[[Hit], str], stopwords: frozenset[str]
) -> list[tuple[Hit, bool]]:
    """(hit, contradicts the query) pairs, those that contradict after the others, each group in its order."""
    wanted = Polarity.of(query, stopwords)
    if not (wanted.affirmed or wanted.negated):
        return [(h, False) for h in hits]
    judged = [(h, contradiction(wanted, Polarity.of(text_of(h), stopwords)) > CONTRADICTION_SHARE) for h in hits]
    return [pair for pair in judged if not pair[1]] + [pair for pair in judged if pair[1]]
