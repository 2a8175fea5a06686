"""The lean BM25 build (two passes straight into CSC) gives bm25s' own index arrays, bit for bit."""

from __future__ import annotations

import bm25s
import numpy as np
import pytest

from retriever.index.bm25 import LeanBM25, _ids

TEXTS = [
    "Small left pleural effusion. Effusion unchanged, effusion small.",
    "No pleural effusion or pneumothorax.",
    "",
    "Right lower lobe pneumonia with a small parapneumonic effusion.",
    "Cardiomegaly. Cardiomegaly. Cardiomegaly.",
    "Stable 4 mm nodule in the left upper lobe; no new nodule.",
] * 7 + [f"Study {i}: mild degenerative change of the spine." for i in range(50)]


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire", "bm25+"])
def test_the_lean_build_equals_bm25s(method: str) -> None:
    vocab: dict[str, int] = {}
    ids = [_ids(text, vocab) for text in TEXTS]
    reference, lean = bm25s.BM25(method=method), LeanBM25(method=method)
    reference.index((ids, dict(vocab)), show_progress=False)
    lean.index((ids, dict(vocab)), show_progress=False)
    for key in ("data", "indices", "indptr"):
        assert lean.scores[key].dtype == reference.scores[key].dtype
        np.testing.assert_array_equal(lean.scores[key], reference.scores[key])
    query = [vocab["effusion"], vocab["neg:pneumothorax"]]
    np.testing.assert_array_equal(lean.get_scores(query), reference.get_scores(query))


def test_a_field_no_report_fills_builds_and_finds_nothing(tmp_path) -> None:
    """Reports with an impression and no findings at all (kept with --keep-incomplete): the findings field has no
    words, which bm25s could not index (an empty vocabulary; a division by zero before that)."""
    from retriever.index.bm25 import BM25Field

    assert BM25Field.build([], []).search("pneumonia", 5) == []  # no document at all
    empty = BM25Field.build(["", ""], [0, 1])
    assert empty.search("pneumonia", 5) == []
    empty.save(tmp_path)
    assert BM25Field.load(tmp_path).search("pneumonia", 5) == []
    filled = BM25Field.build(["Right lower lobe pneumonia.", "Small left pleural effusion."], [0, 1])
    assert [row for row, _ in filled.search("pneumonia", 5)] == [0]
