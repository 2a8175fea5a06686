"""Near-duplicate reports share one vote in the evidence differential.

Why (issue 51, item 8): a planted copy of a genuine report, one word of its findings changed or a zero-width space
added, ranked first and its conclusion ("Miliary tuberculosis.") became the answer; ten such copies would outvote the
archive. Identical texts are already one hit (the search names "and 9 identical reports"); this module finds the
copies that are not identical: reports whose findings, read as judged text (assistant.rag.injection.plain: look-alike
letters and invisible characters folded), share at least SAME_WORDS of their words (Jaccard over word sets), with at
least MIN_WORDS words each so that two short templated findings ("No acute findings.") are not taken for copies of
one another. Each group then casts one vote, split evenly among its members (assistant/rag/evidence.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.rag.injection import plain

#: Word-set overlap (Jaccard) from which two findings are copies of one text: one changed word in 20 is 0.905.
SAME_WORDS = 0.9
#: Findings shorter than this (in distinct words) are never taken for copies (templated normal studies).
MIN_WORDS = 8
_WORD = re.compile(r"\w+")


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(plain(text).casefold()))


def near_duplicate_groups(findings: Sequence[str]) -> list[int]:
    """The group of each report, given the reports' findings in rank order: near-duplicates (grouped transitively)
    share the number of the first of them, every other report has its own (its position)."""
    words = [_words(text) for text in findings]
    group = list(range(len(words)))

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i, mine in enumerate(words):
        if len(mine) < MIN_WORDS:
            continue
        for j in range(i + 1, len(words)):
            theirs = words[j]
            if len(theirs) >= MIN_WORDS and len(mine & theirs) >= SAME_WORDS * len(mine | theirs):
                first, second = sorted((root(i), root(j)))
                group[second] = first
    return [root(i) for i in range(len(words))]
