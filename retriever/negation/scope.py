"""Which words of a report are under a negation: the one scope algorithm behind lexical search and the detector.

BM25 scores "No pleural effusion." like "Pleural effusion." unless the negated words are told apart. This marks
every word inside a NegEx scope (the tables of retriever/negation/triggers.py, applied to all words of a clause at
once) with `NEGATED_PREFIX`, so an affirmed query word never matches its negated mention and a negated query ("no
effusion") matches negated mentions. The trigger words themselves carry no content once their scope is marked and
are dropped. rules.is_negated asks the same scopes about one concept (`negated_spans`), so what the detector calls
ruled out is exactly what BM25 indexes as negated.

Scopes, per clause (a clause ends at . ; : ! ? or a line break):
- a pre-negation ("no", "without") reaches WINDOW words forward, a post-negation ("was not detected", "has
  resolved") WINDOW words back; a termination term ("but", "there are") ends either;
- through a list of findings a scope goes on up to LIST_WINDOW words: forward while each word is within WINDOW words
  of a list separator (a comma, slash, "and", "or", "nor"), back to the start of the clause; neither stretch crosses
  a verb that starts a predicate (CLAUSE_VERBS), so "No A or B is seen, and C" leaves C alone;
- a pre-negation ends before a definite thing after a locative ("no enhancement within the thrombus") and before a
  new subject after a comma or ", and" ("no hepatic lesions, and all nodes were sub-centimeter");
- a clause that is only a negation after a colon ("Evaluation for pneumothorax: none identified", "Adnexa: not
  seen") negates the clause before the colon (up to LIST_WINDOW words), whatever hedges that clause has;
- a hedge ("cannot be excluded", "rule out") leaves the words it reaches possible: not negated, whatever else
  reaches them; hedges and pseudo-negations ("no change") are not triggers and stay words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from retriever.negation.triggers import (
    CLAUSE_VERBS,
    COLON_NEGATION,
    LIST_WINDOW,
    NEW_SUBJECT,
    POST_NEGATION,
    POST_UNCERTAINTY,
    PRE_NEGATION,
    PRE_TERMINATION,
    PRE_UNCERTAINTY,
    PSEUDO_NEGATION,
    TERMINATION,
    WINDOW,
)

NEGATED_PREFIX = "neg:"  # never part of a word: words are [a-z0-9]+
_WORD = re.compile(r"[a-z0-9]+")
_TOKEN = re.compile(r"[a-z0-9]+|[,/]")  # words and the list separators between them
_CLAUSE_TEXT = re.compile(r"[^.;:!?\n]+")
_CONNECTORS = frozenset(("and", "or", "nor"))


def _phrases(phrases: Iterable[str]) -> dict[str, list[tuple[str, ...]]]:
    """Phrases as word tuples, indexed by first word, longest first (so "no evidence of" wins over "no")."""
    table: dict[str, list[tuple[str, ...]]] = {}
    for phrase in phrases:
        words = tuple(_WORD.findall(phrase.lower()))
        if words not in table.setdefault(words[0], []):
            table[words[0]].append(words)
    return {first: sorted(found, key=len, reverse=True) for first, found in table.items()}


_PRE, _POST = _phrases(PRE_NEGATION), _phrases(POST_NEGATION)
_PRE_DOUBT, _POST_DOUBT = _phrases(PRE_UNCERTAINTY), _phrases(POST_UNCERTAINTY)
_PSEUDO, _TERMINATION, _PRE_END = _phrases(PSEUDO_NEGATION), _phrases(TERMINATION), _phrases(PRE_TERMINATION)
_FIRST_WORDS = frozenset((*_PSEUDO, *_PRE, *_POST, *_PRE_DOUBT, *_POST_DOUBT))
_COLON_ANSWERS = frozenset(tuple(_WORD.findall(phrase)) for phrase in COLON_NEGATION)


def _match(words: list[str], at: int, table: dict[str, list[tuple[str, ...]]]) -> int:
    """Length of the longest phrase of `table` starting at words[at], 0 if none."""
    for phrase in table.get(words[at], ()):
        if tuple(words[at : at + len(phrase)]) == phrase:
            return len(phrase)
    return 0


class _Clause:
    """One clause's words with what bounds a scope: termination terms, list separators and predicate verbs."""

    def __init__(self, words: list[str], separated: list[bool] | None) -> None:
        n = len(words)
        self.words, self.n = words, n
        self.stops = [i for i in range(n) if _match(words, i, _TERMINATION)]
        apart = separated or [False] * n
        self.pre_stops = self.stops + [
            i for i in range(n) if _match(words, i, _PRE_END) or _new_subject(words, apart, i)
        ]
        self.joins = [apart[i] or words[i] in _CONNECTORS for i in range(n)]
        self.verbs = [w in CLAUSE_VERBS for w in words]

    def forward(self, at: int, length: int) -> range:
        """Words a trigger at `at` (of `length` words) reaches forward."""
        first = at + length
        limit = min([self.n, first + LIST_WINDOW, *(s for s in self.pre_stops if s >= first)])
        end = min(limit, first + WINDOW)
        if not any(self.verbs[first:end]) and self._coordinated(first, limit):  # a list goes on past the window
            while end < limit and not self.verbs[end] and any(self.joins[max(first, end - WINDOW) : end + 1]):
                end += 1
        return range(first, max(first, end))

    def _coordinated(self, first: int, limit: int) -> bool:
        """Whether an "and", "or" or "nor" comes before the next verb: a list ("no A, B, or C"), not a comma
        between clauses ("due to no evidence of bleeding, the patient remained stable")."""
        for word, verb in zip(self.words[first:limit], self.verbs[first:limit], strict=True):
            if verb:
                return False
            if word in _CONNECTORS:
                return True
        return False

    def back(self, at: int, length: int) -> range:
        """Words a trigger at `at` (of `length` words) reaches back."""
        limit = max([0, at - LIST_WINDOW, *(s + 1 for s in self.stops if s < at)])
        start = max(limit, at - WINDOW)
        if not any(self.verbs[start:at]):  # the subject of "... were not detected" back to the clause start
            while start > limit and not self.verbs[start - 1]:
                start -= 1
        return range(start, at)


def _new_subject(words: list[str], apart: list[bool], at: int) -> bool:
    """Whether words[at] begins a new subject: after a comma, or after ", and", a NEW_SUBJECT word follows (", the
    patient remained stable", ", and all nodes were sub-centimeter"); a list member rarely begins so ("no A, B, C")."""
    subject = at + 1 if words[at] == "and" else at
    return apart[at] and subject < len(words) and words[subject] in NEW_SUBJECT


def _scopes(words: list[str], separated: list[bool] | None) -> tuple[list[list[range]], list[bool]]:
    """Per word, the word ranges of the negation triggers that reach it, and whether it is part of a trigger. The
    longest phrase starting at a word wins ("no longer seen" looks back, "no" alone forward); the words inside a
    post-negation or a hedge are no triggers themselves (the "not" of "was not detected" negates nothing
    forward); a hedge clears every negation of the words it reaches."""
    n = len(words)
    clause: _Clause | None = None  # built on the first trigger: most clauses have none
    reached: list[list[range]] = [[] for _ in range(n)]
    trigger, doubtful = [False] * n, [False] * n
    at = 0
    while at < n:
        if words[at] not in _FIRST_WORDS:  # most words start no phrase: a quick way past them
            at += 1
            continue
        if (skip := _match(words, at, _PSEUDO)) > 0:
            at += skip
            continue
        pre, post = _match(words, at, _PRE), _match(words, at, _POST)
        pre_doubt, post_doubt = _match(words, at, _PRE_DOUBT), _match(words, at, _POST_DOUBT)
        length = max(pre, post, pre_doubt, post_doubt)
        if length == 0:
            at += 1
            continue
        clause = clause or _Clause(words, separated)
        if length in (pre_doubt, post_doubt):
            for i in clause.forward(at, length) if length == pre_doubt else clause.back(at, length):
                doubtful[i] = True
            at += length
            continue
        length = pre if pre >= post else post
        for i in clause.forward(at, pre) if pre >= post else clause.back(at, post):
            reached[i].append(range(at, at + length))
        trigger[at : at + length] = [True] * length
        at += 1 if pre >= post else post  # pre-triggers overlap: "there is no" then "no evidence of"
    return [[] if doubt else by for by, doubt in zip(reached, doubtful, strict=True)], trigger


def _split(tokens: Iterable[str]) -> tuple[list[str], list[bool]]:
    """Words, and whether a list separator (comma, slash) comes before each."""
    words: list[str] = []
    separated: list[bool] = []
    apart = False
    for token in tokens:
        if token in ",/":
            apart = True
        else:
            words.append(token)
            separated.append(apart)
            apart = False
    return words, separated


def _colon_answer(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The character span of a COLON_NEGATION answer opening a clause (up to its first comma), else None."""
    head = text[start:end].split(",", 1)[0]
    words = list(_WORD.finditer(head))
    if words and tuple(w.group() for w in words) in _COLON_ANSWERS:
        return start + words[0].start(), start + words[-1].end()
    return None


def _clauses(text: str) -> list[tuple[int, int, tuple[int, int] | None]]:
    """(start, end, answer) of each clause of a lowercased text (ending at . ; : ! ? or a line break), `answer` the
    span of a negation that answers it after its colon; that answer is no clause of its own (what follows its first
    comma is)."""
    spans = [m.span() for m in _CLAUSE_TEXT.finditer(text)]
    answers = [
        _colon_answer(text, *spans[i + 1]) if i + 1 < len(spans) and text[end : end + 1] == ":" else None
        for i, (_, end) in enumerate(spans)
    ]
    return [
        (answered[1] if i and (answered := answers[i - 1]) else start, end, answers[i])
        for i, (start, end) in enumerate(spans)
    ]


def _answered(words: int, answer: tuple[int, int] | None) -> range:
    """The words of a clause a colon answer negates: all, up to LIST_WINDOW back from the colon."""
    return range(max(0, words - LIST_WINDOW), words) if answer else range(0)


def scoped_clauses(text: str) -> list[list[str]]:
    """scoped_words clause by clause (a clause ends at . ; : ! ? or a line break)."""
    lowered = text.lower()
    out: list[list[str]] = []
    for start, end, answer in _clauses(lowered):
        words, separated = _split(_TOKEN.findall(lowered, start, end))
        if not words:
            continue
        reached, trigger = _scopes(words, separated)
        answered = _answered(len(words), answer)
        out.append(
            [
                NEGATED_PREFIX + w if by or i in answered else w
                for i, (w, by, trig) in enumerate(zip(words, reached, trigger, strict=True))
                if not trig
            ]
        )
    return out


def scoped_words(text: str) -> list[str]:
    """Every word of `text`, lowercased, the negated ones prefixed with NEGATED_PREFIX, triggers dropped."""
    return [word for clause in scoped_clauses(text) for word in clause]


def may_negate(text: str) -> bool:
    """Whether any word of the text can start a trigger: without one nothing in it is negated (a quick test that
    lets most conclusion items skip the scope pass)."""
    return not _FIRST_WORDS.isdisjoint(_WORD.findall(text.lower()))


def negated_spans(text: str) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """Character spans of the negated words of `text`, each with the character spans of the triggers that negate
    it (rules.is_negated counts only triggers outside the concept: "showed no abnormalities" as a whole is no
    negated finding)."""
    lowered = text.lower()
    spans: list[tuple[int, int, list[tuple[int, int]]]] = []
    for start, end, answer in _clauses(lowered):
        tokens = list(_TOKEN.finditer(lowered, start, end))
        words, separated = _split(t.group() for t in tokens)
        reached, _ = _scopes(words, separated)
        at = [t.span() for t in tokens if t.group() not in ",/"]
        answered = _answered(len(words), answer)
        for i, by in enumerate(reached):
            triggers = [(at[r.start][0], at[r.stop - 1][1]) for r in by]
            if answer and i in answered:
                triggers.append(answer)
            if triggers:
                spans.append((*at[i], triggers))
    return spans
