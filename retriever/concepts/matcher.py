"""Which concepts a piece of report text names: a longest-match scan over the folded words, no model.

Why a dictionary scan: linking runs on every retrieved report's conclusion at answer time and on every report at
index time, so it has to cost microseconds, and what it links must be explainable by a phrase of the vocabulary.
The radiology layer is scanned first, leftmost-longest, so "pleural effusion" wins over "effusion" and matches never
overlap; ICD-10-CM phrases are looked for only in the words no radiology phrase covered (a fallback, never a rival).
A generic word ("effusion", "nodule", "mass") is then refined by the words of its clause (vocabulary.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from retriever.concepts.concept import Concept
from retriever.concepts.normalize import Token, tokens
from retriever.concepts.vocabulary import ANY, END, NONE, Layer, Phrase, Vocabulary, default_vocabulary

#: What ends a clause for refining a generic word: a comma first, then the sentence part (; . :). A "?" just before
#: ")" is a hedge on the words before it ("nodular lesion (cyst?) in the right kidney"), not the end of a sentence.
_COMMA = re.compile(r"[,;.:!?()\n]")
_SENTENCE = re.compile(r"[;.:!\n]|\?(?!\s*\))")
#: Words that coordinate two modifiers of one head ("airspace and interstitial opacity"); "/" is read between tokens.
_COORDINATORS = frozenset({"and", "or", "versus", "vs"})


@dataclass(frozen=True)
class Mention:
    """A concept named in a text, at characters [start, end)."""

    concept: Concept
    start: int
    end: int


#: Words a phrase may have inside it without naming them: "elevation of the right hemidiaphragm" is "elevation of the
#: hemidiaphragm". Skipped only inside a phrase, never at its start or end.
SKIPPABLE = frozenset({"left", "right", "bilateral", "both"})


def _longest(node: dict, words: list[str], free: list[bool], at: int, inside: bool) -> tuple[int, Phrase] | None:
    """The longest phrase of the trie below `node` that the words from `at` spell, skipping SKIPPABLE words inside
    it (`inside`: a word of the phrase was taken just before `at`): (stop, phrase) or None. A word may be both a trie
    branch and skippable ("elevated left hemidiaphragm" is a phrase, "elevated left diaphragm" skips "left"), so
    both ways are tried; a phrase never ends on a skipped word."""
    best = (at, node[END]) if inside and END in node else None
    if at >= len(words) or not free[at]:
        return best
    word = words[at]
    for found in (
        _longest(node[word], words, free, at + 1, True) if word in node else None,
        _longest(node, words, free, at + 1, False) if inside and word in SKIPPABLE else None,
    ):
        if found is not None and (best is None or found[0] > best[0]):
            best = found
    return best


def _scan(layer: Layer, words: list[str], free: list[bool]) -> list[tuple[int, int, str, Phrase]]:
    """Leftmost-longest matches of the layer's phrases over the free words: (first, stop, concept id, phrase)."""
    found = []
    at, n = 0, len(words)
    while at < n:
        best = _longest(layer.trie, words, free, at, False) if free[at] and words[at] in layer.trie else None
        if best is None:
            at += 1
            continue
        found.append((at, best[0], layer.phrases[best[1]], best[1]))
        at = best[0]
    return found


def _clause(text: str, toks: list[Token], at: int, boundary: re.Pattern[str]) -> list[str]:
    """The words of the clause around token `at`: back and forward until text between two words holds a boundary."""
    first = at
    while first > 0 and not boundary.search(text, toks[first - 1].end, toks[first].start):
        first -= 1
    stop = at + 1
    while stop < len(toks) and not boundary.search(text, toks[stop - 1].end, toks[stop].start):
        stop += 1
    return [t.word for t in toks[first:stop]]


def _contains(words: list[str], phrase: Phrase) -> bool:
    n = len(phrase)
    return any(tuple(words[i : i + n]) == phrase for i in range(len(words) - n + 1))


def _refined(vocabulary: Vocabulary, concept_id: str, text: str, toks: list[Token], at: int) -> tuple[str, ...]:
    """The concepts a generic word stands for in its clause (the comma clause first, then the sentence): the first
    target whose words occur, or every such target when the rule is additive (NONE only when no other applies)."""
    rules = vocabulary.refine.get(concept_id, ())
    for boundary in (_COMMA, _SENTENCE):
        words = _clause(text, toks, at, boundary)
        present = set(words)
        found = [
            target
            for target, single, phrases in rules
            if ANY in single or not present.isdisjoint(single) or any(_contains(words, p) for p in phrases)
        ]
        if found and concept_id in vocabulary.additive:
            return tuple(t for t in found if t != NONE) or (NONE,)
        if found:
            return (found[0],)
    return (concept_id,)


def _coordinated(
    vocabulary: Vocabulary, text: str, toks: list[Token], free: list[bool], first: int, phrase: Phrase
) -> tuple[int, str] | None:
    """The radiology concept "A head" names where the text says "A and B head" (or A or / versus B head) and "B head"
    matched at token `first`: (first token of A, concept id) or None."""
    if len(phrase) < 2 or first < 1:
        return None
    if "/" in text[toks[first - 1].end : toks[first].start]:
        modifier = first - 1
    elif first >= 2 and toks[first - 1].word in _COORDINATORS:
        modifier = first - 2
    else:
        return None
    concept_id = vocabulary.radiology.phrases.get((toks[modifier].word, *phrase[1:]))
    return (modifier, concept_id) if concept_id is not None and free[modifier] else None


def mentions(text: str, vocabulary: Vocabulary | None = None) -> list[Mention]:
    """Every concept mention in the text, in order, without overlaps (the same concept may recur)."""
    vocabulary = vocabulary or default_vocabulary()
    toks = tokens(text)
    words = [t.word for t in toks]
    free = [True] * len(words)
    found = _scan(vocabulary.radiology, words, free)
    for first, stop, _, _ in found:
        free[first:stop] = [False] * (stop - first)
    found += [
        (coordinated[0], stop, coordinated[1], phrase)
        for first, stop, _, phrase in list(found)
        if (coordinated := _coordinated(vocabulary, text, toks, free, first, phrase)) is not None
    ]
    found += _scan(vocabulary.icd10, words, free)
    out, generic = [], []
    for first, stop, concept_id, phrase in sorted(found):
        targets = (concept_id,)
        if (concept_id, phrase) in vocabulary.generic:
            targets = _refined(vocabulary, concept_id, text, toks, first)
        for target in targets:
            if target != NONE:  # a generic word its clause shows to be no finding ("small vessel disease" of lungs)
                out.append(Mention(vocabulary.concepts[target], toks[first].start, toks[stop - 1].end))
                generic.append((concept_id, phrase) in vocabulary.generic)
    return _most_specific(vocabulary, text, _guessed(text, out, generic))


#: A parenthesis right after a word that offers a guess with "?": "hypodense lesions (cysts?) in the liver".
_GUESS = re.compile(r"\s*\([^()]*\?\s*\)")


def _guessed(text: str, found: list[Mention], generic: list[bool]) -> list[Mention]:
    """The mentions without a generic word whose guessed nature the parenthesis after it names: the item names one
    finding, the guessed one ("nodular lesion (cyst?) in the right kidney" is a renal cyst)."""
    kept = []
    for mention, is_generic in zip(found, generic, strict=True):
        guess = _GUESS.match(text, mention.end) if is_generic else None
        if guess is None or not any(guess.start() <= m.start < guess.end() for m in found):
            kept.append(mention)
    return kept


def _most_specific(vocabulary: Vocabulary, text: str, found: list[Mention]) -> list[Mention]:
    """The mentions without those a more specific mention of the same sentence stands for (`gives_way`)."""
    if len(found) < 2:
        return found
    sentence = [len(_SENTENCE.findall(text, 0, m.start)) for m in found]
    return [
        mention
        for mention, where in zip(found, sentence, strict=True)
        if not any(
            gives_way(mention.concept, other.concept, vocabulary)
            for other, other_where in zip(found, sentence, strict=True)
            if other_where == where and other.concept.id != mention.concept.id
        )
    ]


def gives_way(concept: Concept, other: Concept, vocabulary: Vocabulary | None = None) -> bool:
    """Whether `other` is the more specific form of `concept`: a generic concept gives way to one whose name ends
    with its own ("ground-glass opacity" over "opacity", "hiatal hernia" over "hernia") or to a target of its (not
    additive) refine rule ("liver lesion" over "lesion"). Another kind of concept stays ("opacity ... consistent with
    atelectasis"). Read for the mentions of one sentence, and for a differential's candidates (assistant/rag)."""
    vocabulary = vocabulary or default_vocabulary()
    rules = vocabulary.refine.get(concept.id)
    if rules is None:
        return False
    if concept.id not in vocabulary.additive and other.id in {t for t, _, _ in rules}:
        return True
    return other.name.endswith((" " + concept.name, "-" + concept.name))


def unique(concepts: list[Concept]) -> list[Concept]:
    """The concepts in order of first appearance, each once."""
    seen: dict[str, Concept] = {}
    for concept in concepts:
        seen.setdefault(concept.id, concept)
    return list(seen.values())


def link(text: str) -> list[Concept]:
    """The concepts one item or fragment names, most specific match first found, no overlaps, each once. Negation
    is not read here (affirmed_concepts does): "no pleural effusion" names pleural effusion."""
    return list(_linked(text))


@lru_cache(maxsize=16384)
def _linked(text: str) -> tuple[Concept, ...]:
    return tuple(unique([m.concept for m in mentions(text)]))
