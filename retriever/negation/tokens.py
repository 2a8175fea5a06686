"""The BM25 terms of a text: lowercased words without English stopwords, a negated word its own term.

The lexical side of negation (retriever/negation/scope.py): "pleural effusion" never scores a report for its "No
pleural effusion.", and "no pleural effusion" finds the reports that rule it out. BM25 (retriever/index/bm25.py)
indexes and searches these terms; the support check (retriever/search/support.py), query expansion and training's
BM25 negatives read them too.
"""

from __future__ import annotations

import hashlib
import json

from bm25s.stopwords import STOPWORDS_EN

from retriever.negation import triggers as negation
from retriever.negation.scope import NEGATED_PREFIX, scoped_words

STOPWORDS = frozenset(STOPWORDS_EN)
#: Bumped when tokenize() changes in a way its tables below do not show (a new scope rule).
TOKENIZER_VERSION = 4  # 3: scopes through lists, post-negations reach back to the clause start, hedges; 4: answers
# after a colon ("Pneumothorax: none") negate the label before it


def _tokenizer_fingerprint() -> str:
    """What decides how a text becomes BM25 terms: the negation tables, the window, the stopwords. An index records
    it (Manifest.lexical_rules) so an index tokenized under other rules is known to be stale (search warns, `assistant
    update` re-tokenizes it) instead of silently mixing old and new terms."""
    tables = [
        TOKENIZER_VERSION,
        negation.WINDOW,
        negation.PRE_NEGATION,
        negation.POST_NEGATION,
        negation.PSEUDO_NEGATION,
        negation.TERMINATION,
        sorted(STOPWORDS),
        negation.LIST_WINDOW,
        negation.POST_UNCERTAINTY,
        negation.PRE_UNCERTAINTY,
        negation.PRE_TERMINATION,
        sorted(negation.CLAUSE_VERBS),
        sorted(negation.NEW_SUBJECT),
        negation.COLON_NEGATION,
    ]
    return hashlib.sha256(json.dumps(tables).encode("utf-8")).hexdigest()[:16]


TOKENIZER_FINGERPRINT = _tokenizer_fingerprint()


def tokenize(text: str) -> list[str]:
    """Lowercased alphanumeric terms without English stopwords; words under a negation carry NEGATED_PREFIX (the
    negation triggers themselves are dropped: the prefix says what they said)."""
    return [w for w in scoped_words(text) if w.removeprefix(NEGATED_PREFIX) not in STOPWORDS]
