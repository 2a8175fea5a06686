"""Hits that say the opposite of the query go last, whatever method found them.

A dense encoder places "No pneumothorax." next to "Pneumothorax." (same words, one negation), and fusing it with a
negation-aware BM25 only lowers such a hit. For a resident a report that rules out the very finding asked about is
the most dangerous hit there is, so the search puts every hit that contradicts the query after every hit that
does not, keeping each group in the method's order. A hit contradicts the query when most of the words they share
have the opposite polarity: affirmed in the query and only negated in the hit, or the reverse (negation scopes as
in retriever/negation/scope.py; stopwords do not count; a word and its plural are one word, so "No pneumothoraces."
contradicts "pneumothorax"). A hit that mentions a word both ways (a mixed report) does not contradict on that word.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from retriever.negation.inflection import inflections
from retriever.negation.scope import NEGATED_PREFIX, scoped_clauses

Hit = TypeVar("Hit")
#: Share of shared words with opposite polarity from which a hit counts as contradicting: a majority.
CONTRADICTION_SHARE = 0.5


def candidate_depth(k: int) -> int:
    """Hits a search ranks before moving contradicting ones last and keeping k: enough that k remain when most of
    the first ones contradict the query."""
    return max(4 * k, 20)


Phrase = tuple[str, str]


@dataclass(frozen=True)
class Polarity:
    """The content words of a text, by how they occur: affirmed somewhere, negated somewhere (or both); and its
    phrases (two consecutive content words of one polarity within a clause, the smallest unit that names a finding:
    "pleural effusion", "left pleural" of "left pleural effusion") by polarity."""

    affirmed: frozenset[str]
    negated: frozenset[str]
    affirmed_phrases: frozenset[Phrase] = frozenset()
    negated_phrases: frozenset[Phrase] = frozenset()

    @classmethod
    def of(cls, text: str, stopwords: frozenset[str]) -> Polarity:
        """One pass over the text's negation scopes (retriever.negation.scope)."""
        words: tuple[set[str], set[str]] = (set(), set())  # affirmed, negated
        phrases: tuple[set[Phrase], set[Phrase]] = (set(), set())
        for clause in scoped_clauses(text):
            content = [(w.removeprefix(NEGATED_PREFIX), w.startswith(NEGATED_PREFIX)) for w in clause]
            content = [(bare, negated) for bare, negated in content if bare not in stopwords]
            for bare, negated in content:
                words[negated].add(bare)
            for (first, first_negated), (second, second_negated) in zip(content, content[1:], strict=False):
                if first_negated == second_negated:
                    phrases[first_negated].add((first, second))
        return cls(*map(frozenset, words), *map(frozenset, phrases))

    def in_words_of(self, other: Polarity) -> Polarity:
        """This polarity with each word that is another's word in the singular or plural written as the other's
        ("effusions" as "effusion" for a query that says "effusion"), so the two compare word for word."""
        theirs = other.affirmed | other.negated
        ours = self.affirmed | self.negated
        renamed = {w: min(same) for w in ours - theirs if (same := inflections(w) & theirs)}
        if not renamed:
            return self

        def words(found: frozenset[str]) -> frozenset[str]:
            return frozenset(renamed.get(w, w) for w in found)

        def phrases(found: frozenset[Phrase]) -> frozenset[Phrase]:
            return frozenset((renamed.get(a, a), renamed.get(b, b)) for a, b in found)

        return Polarity(
            words(self.affirmed), words(self.negated), phrases(self.affirmed_phrases), phrases(self.negated_phrases)
        )


def contradiction(query: Polarity, hit: Polarity) -> float:
    """Share of the words query and hit share whose polarity is opposite (0 when they share none)."""
    shared = (query.affirmed | query.negated) & (hit.affirmed | hit.negated)
    if not shared:
        return 0.0
    only_negated, only_affirmed = hit.negated - hit.affirmed, hit.affirmed - hit.negated
    opposite = (query.affirmed - query.negated) & only_negated | (query.negated - query.affirmed) & only_affirmed
    return len(opposite & shared) / len(shared)


def rules_out_in_part(query: Polarity, hit: Polarity) -> bool:
    """Whether the hit somewhere rules out a phrase the query asserts, or asserts one the query rules out: for
    "small left pleural effusion", a report that says "No left pleural effusion." and later "small left pleural
    effusion" (mixed, so not a contradiction). A resident should see that before reading it as support, so it is
    marked, not moved: such a report may still be the best match."""
    return bool(query.affirmed_phrases & hit.negated_phrases or query.negated_phrases & hit.affirmed_phrases)


def contradicting_last(
    query: str,
    hits: Sequence[Hit],
    text_of: Callable[[Hit], str],
    stopwords: frozenset[str],
    enough: tuple[int, Sequence[str]] | None = None,
) -> list[tuple[Hit, bool, bool]]:
    """(hit, contradicts the query, rules it out in part only) triples, those that contradict after the others,
    each group in its order; each text is read once.

    `enough` = (n, keys), keys[i] the text key of hits[i] (retriever/index/identical.py): a search keeps the first n
    texts, so hits are judged in order only until n texts that do not contradict are found; the unjudged rest
    follows those, unflagged and in order, before the contradicting ones. The first n texts are then those of
    judging every hit (hits of one key have one text, so one verdict), at a fraction of the cost: reading a report's
    negation scopes was most of a default answer's time (eval/results/performance.md)."""
    wanted = Polarity.of(query, stopwords)
    if not (wanted.affirmed or wanted.negated):
        return [(h, False, False) for h in hits]
    needed, keys = enough if enough is not None else (len(hits), [str(i) for i in range(len(hits))])
    agreeing: list[tuple[Hit, bool, bool]] = []
    contradicting: list[tuple[Hit, bool, bool]] = []
    texts: set[str] = set()
    for judged, (hit, key) in enumerate(zip(hits, keys, strict=True)):
        if len(texts) >= needed:
            return agreeing + [(h, False, False) for h in hits[judged:]] + contradicting
        polarity = Polarity.of(text_of(hit), stopwords).in_words_of(wanted)
        if contradiction(wanted, polarity) > CONTRADICTION_SHARE:
            contradicting.append((hit, True, False))
        else:
            agreeing.append((hit, False, rules_out_in_part(wanted, polarity)))
            texts.add(key)
    return agreeing + contradicting
