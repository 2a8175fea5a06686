"""Negation-aware lexical search: negation scopes, BM25 scores by hand, and contradicting hits put last."""

from __future__ import annotations

import math

import numpy as np
import pytest

from retriever.index.bm25 import BM25Field
from retriever.negation.scope import scoped_words
from retriever.negation.tokens import tokenize
from retriever.search.contradiction import (
    CONTRADICTION_SHARE,
    Polarity,
    contradicting_last,
    contradiction,
    rules_out_in_part,
)

STOP = frozenset({"the", "of", "with", "in", "is", "there", "or", "and"})


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("No pleural effusion.", ["neg:pleural", "neg:effusion"]),
        ("Small left pleural effusion.", ["small", "left", "pleural", "effusion"]),
        ("There is no evidence of pulmonary embolism", ["neg:pulmonary", "neg:embolism"]),  # overlapping triggers
        ("Pneumothorax is not seen. Effusion present.", ["neg:pneumothorax", "effusion", "present"]),  # post, clause
        ("No consolidation but there is cardiomegaly", ["neg:consolidation", "but", "there", "is", "cardiomegaly"]),
        ("No change in the effusion", ["no", "change", "in", "the", "effusion"]),  # pseudo-negation
        # classification qualifiers are pseudo-negations too: "not specified" names no finding ruled out
        ("Not specified early syphilis", ["not", "specified", "early", "syphilis"]),
        ("Seizures, side not specified, no fever", ["seizures", "side", "not", "specified", "neg:fever"]),
        ("Pneumonia, not otherwise specified.", ["pneumonia", "not", "otherwise", "specified"]),
        ("Goiter, not elsewhere classified", ["goiter", "not", "elsewhere", "classified"]),
        ("no a b c d e f g h", ["neg:a", "neg:b", "neg:c", "neg:d", "neg:e", "neg:f", "g", "h"]),  # six-word window
        # resolution looks back; the longer trigger wins where a pre- and a post-trigger start together
        (
            "Left pleural effusion appears resolved. Atelectasis.",
            ["neg:left", "neg:pleural", "neg:effusion", "atelectasis"],
        ),
        ("The effusion is no longer seen", ["neg:the", "neg:effusion", "neg:is"]),
        ("No longer any effusion", ["neg:longer", "neg:any", "neg:effusion"]),
    ],
)
def test_scoped_words(text: str, words: list[str]) -> None:
    assert scoped_words(text) == words


def test_bm25_scores_by_hand_negated_mentions_are_other_terms() -> None:
    texts = ["Pleural effusion.", "No pleural effusion.", "Cardiomegaly."]
    assert [tokenize(t) for t in texts] == [["pleural", "effusion"], ["neg:pleural", "neg:effusion"], ["cardiomegaly"]]
    bm25 = BM25Field.build(texts, np.array([10, 11, 12]))
    # Lucene BM25 as bm25s computes it: idf = ln(1 + (N - df + .5) / (df + .5)), tf part = tf / (tf + k1 (1 - b +
    # b dl / avgdl)) (no k1 + 1 factor), k1 = 1.5, b = 0.75. N = 3, df = 1, tf = 1, dl = 2, avgdl = 5/3, two terms.
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    tf_part = 1 / (1 + 1.5 * (0.25 + 0.75 * 2 / (5 / 3)))
    expected = 2 * idf * tf_part
    assert expected == pytest.approx(0.71987, abs=1e-4)
    affirmed = bm25.search("pleural effusion", k=3)
    negated = bm25.search("no pleural effusion", k=3)
    assert [r for r, _ in affirmed] == [10] and affirmed[0][1] == pytest.approx(expected, rel=1e-5)
    assert [r for r, _ in negated] == [11] and negated[0][1] == pytest.approx(expected, rel=1e-5)


def test_contradiction_share() -> None:
    query = Polarity.of("Small left pleural effusion", STOP)
    assert contradiction(query, Polarity.of("No left pleural effusion.", STOP)) == pytest.approx(1.0)
    assert contradiction(query, Polarity.of("No pneumothorax. Left pleural effusion.", STOP)) == 0.0
    mixed = Polarity.of("No right pleural effusion. Left pleural effusion.", STOP)  # both ways: not contradicting
    assert contradiction(query, mixed) == 0.0
    partly = Polarity.of("Small nodule. No effusion.", STOP)  # shares small (same) and effusion (opposite)
    assert contradiction(query, partly) == pytest.approx(0.5) and CONTRADICTION_SHARE >= 0.5  # a tie is no majority
    assert contradiction(query, Polarity.of("Cardiomegaly.", STOP)) == 0.0  # nothing shared


def test_contradicting_hits_go_last_in_their_order() -> None:
    hits = ["No pleural effusion.", "Pleural effusion, small.", "No effusion or pleural thickening.", "Cardiomegaly."]
    affirmed = contradicting_last("pleural effusion", hits, str, STOP)
    assert affirmed == [
        (hits[1], False, False),
        (hits[3], False, False),
        (hits[0], True, False),
        (hits[2], True, False),
    ]
    negated = contradicting_last("no pleural effusion", hits, str, STOP)
    assert [h for h, *_ in negated] == [hits[0], hits[2], hits[3], hits[1]] and negated[-1][1]
    assert contradicting_last("the", hits, str, STOP) == [(h, False, False) for h in hits]  # nothing to contradict
    mixed = ["No left pleural effusion. Small left pleural effusion.", "Small left pleural effusion."]
    assert contradicting_last("small left pleural effusion", mixed, str, STOP) == [
        (mixed[0], False, True),
        (mixed[1], False, False),
    ]


def test_hits_are_judged_until_the_texts_a_search_keeps_are_known() -> None:
    """With `enough` = (n, keys) the first n texts (keys) are those of judging every hit, and the hits after the
    n-th agreeing text are not read: judging each report's negation scopes was most of an answer's time."""
    texts = ["No pleural effusion.", "Pleural effusion, small.", "Cardiomegaly.", "Small pleural effusion."]
    hits = [texts[i] for i in (0, 1, 1, 0, 2, 3, 0, 2, 1, 3, 3, 0)]  # repeated texts: one key each
    keys = [str(texts.index(h)) for h in hits]
    every = contradicting_last("pleural effusion", hits, str, STOP)

    def first_texts(rows: list, n: int) -> list:
        found: list = []
        for row in rows:
            if len(found) < n and all(row[0] != kept[0] for kept in found):
                found.append(row)
        return found

    for n in range(1, len(texts) + 1):
        lazy = contradicting_last("pleural effusion", hits, str, STOP, (n, keys))
        assert sorted(row[0] for row in lazy) == sorted(hits)  # every hit stays, the unread ones unflagged
        assert first_texts(lazy, n) == first_texts(every, n), n
    read: list[str] = []
    contradicting_last("pleural effusion", hits, lambda h: read.append(h) or h, STOP, (1, keys))
    assert read == hits[:2]  # the first hit contradicts, the second is the first agreeing text


@pytest.mark.parametrize(
    ("query", "text", "partly"),
    [
        # make demo's first hit: rules the phrase out, then affirms it
        ("Small left pleural effusion.", "No left pleural effusion. Small left pleural effusion, unchanged.", True),
        ("Small left pleural effusion.", "No right effusion. Small left pleural effusion.", False),  # other side
        ("Small left pleural effusion.", "Small left pleural effusion.", False),
        ("No pleural effusion. Mild cardiomegaly.", "Small pleural effusion. Mild cardiomegaly.", True),  # reverse
        ("pneumothorax", "No pneumothorax. Small pneumothorax.", False),  # one word: no phrase to rule out
    ],
)
def test_rules_out_in_part(query: str, text: str, partly: bool) -> None:
    assert rules_out_in_part(Polarity.of(query, STOP), Polarity.of(text, STOP)) is partly
