"""The linker benchmark's scoring and the hand-labelled items' file (eval/concepts, issue 48)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from eval.concepts.linker_benchmark import gold_ids, score
from eval.concepts.sample_items import ITEMS_FILE, SOURCES, Item, load_items, split_of

SHARED = Path(os.environ.get("RADSEARCH_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))


def item(text: str, concepts: tuple[str, ...]) -> Item:
    return Item("x", "openi", "dev", "openi:1", 0, text, concepts)


def test_a_label_is_read_through_the_vocabulary_names() -> None:
    assert gold_ids(["effusion", "Pleural effusions", "hiatus hernia"]) == {"rad:pleural_effusion", "rad:hiatal_hernia"}
    assert gold_ids(["a name no vocabulary has"]) == {"unknown:a name no vocabulary has"}


def test_pairs_are_pooled_over_items() -> None:
    result = score(
        [
            item("Small left pleural effusion. Mild cardiomegaly.", ("pleural effusion", "cardiomegaly")),
            item("No pneumothorax.", ()),
            item("Ct scan of the chest, pneumonia", ("pneumonia", "a name no vocabulary has")),
        ]
    )
    assert (result["correct_pairs"], result["predicted_pairs"], result["gold_pairs"]) == (3, 3, 4)
    assert result["precision"] == 1.0 and result["recall"] == 0.75
    assert result["errors"] == [{"id": "x", "missed": ["unknown:a name no vocabulary has"], "extra": []}]


def test_the_committed_items_are_labelled_and_balanced() -> None:
    rows = [json.loads(line) for line in ITEMS_FILE.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 500 and all(isinstance(r["concepts"], list) for r in rows)
    # every item read twice and decided (docs/decisions/2026-11-29-linker-gold-read-twice.md)
    assert all(isinstance(r.get("second"), list) and isinstance(r.get("final"), list) for r in rows)
    for source in SOURCES:
        assert {r["split"] for r in rows if r["source"] == source} == {"dev", "test"}
    assert all(("text" in r) == (r["source"] == "mtsamples") for r in rows)  # only CC0 text is stored
    assert all(split_of(r["report_id"]) == r["split"] for r in rows)


@pytest.mark.models
def test_the_items_rebuild_from_the_shared_data() -> None:
    if not SHARED.is_dir():
        pytest.skip("shared data folder absent")
    items = load_items(SHARED)
    assert len(items) >= 500 and all(i.text for i in items)
