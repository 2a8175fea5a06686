"""Two hand readings of the linker's items: their agreement, the disagreements a third reader decides, and the final
labels the linker is scored against (eval/concepts/agreement.py, readings.py, linker_benchmark.py; issue 48)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.concepts.agreement import agreement
from eval.concepts.linker_benchmark import score
from eval.concepts.readings import disagreements, final, read_all, read_labels, reading
from eval.concepts.sample_items import Item


def item(
    id: str, first: tuple[str, ...], other: tuple[str, ...] | None = None, text: str = "Small left pleural effusion."
) -> Item:
    return Item(id, "openi", "dev", "openi:1", 0, text, first, other)


def test_agreement_is_pooled_pairs_through_the_vocabulary() -> None:
    found = agreement(
        [
            item("a", ("effusion",), ("pleural effusions",)),  # one concept by two names: agreed
            item("b", ("atelectasis", "opacity"), ("atelectasis",)),
            item("c", (), ("cardiomegaly",)),
        ]
    )
    assert (found.first_pairs, found.second_pairs, found.agreed_pairs, found.same_items) == (3, 3, 2, 1)
    assert found.precision == found.recall == round(2 / 3, 4)
    assert found.adjudicated_as is None


def test_where_the_adjudication_sides_is_counted_only_for_disputed_items() -> None:
    items = [
        Item("a", "openi", "dev", "r", 0, "t", ("opacity", "atelectasis"), ("atelectasis",), ("atelectasis",)),
        Item("b", "openi", "dev", "r", 0, "t", ("pneumonia",), ("infection",), ("pneumonia", "infection")),
        Item("c", "openi", "dev", "r", 0, "t", ("effusion",), ("pleural effusion",), ("pleural effusion",)),
    ]
    found = agreement(items)
    assert found.adjudicated_as == {"first": 0, "second": 1, "neither": 1}
    # against the 4 final pairs: the first has 3 of its 4 pairs right, the second 3 of its 3
    assert found.against_final == {
        "first": {"precision": 0.75, "recall": 0.75},
        "second": {"precision": 1.0, "recall": 0.75},
    }


def test_disagreements_hide_which_reading_is_which_and_final_keeps_agreed_labels() -> None:
    items = [item(f"i{n}", ("atelectasis",), ("opacity",)) for n in range(20)] + [
        item("same", ("effusion",), ("pleural effusion",))
    ]
    rows = disagreements(items)
    assert [r["id"] for r in rows] == [f"i{n}" for n in range(20)]
    assert {tuple(r["X"]) for r in rows} == {("atelectasis",), ("opacity",)}  # shuffled: both orders occur
    assert set(rows[0]) == {"id", "source", "text", "X", "Y"}
    decided = final(items, {f"i{n}": ("atelectasis",) for n in range(20)})
    assert {i.final for i in decided} == {("atelectasis",), ("effusion",)}


def test_final_refuses_missing_or_undisputed_adjudications() -> None:
    items = [item("a", ("atelectasis",), ("opacity",)), item("b", ("effusion",), ("effusion",))]
    with pytest.raises(SystemExit, match="no labels for 1 items"):
        final(items, {})
    with pytest.raises(SystemExit, match="items the readings agree on"):
        final(items, {"a": (), "b": ()})
    decided = final(items, {"a": ("atelectasis",)})
    assert disagreements(decided) == []  # decided items are not asked again
    with pytest.raises(SystemExit, match="decided before"):
        final(decided, {"a": ("opacity",)})
    with pytest.raises(SystemExit, match="not read twice"):
        disagreements([item("a", ("atelectasis",))])


def test_readings_are_read_from_files_and_checked(tmp_path: Path) -> None:
    items = [item("openi-dev-001", ("effusion",)), Item("openi-dev3-001", "openi", "dev", "r", 0, "t", None)]
    path = tmp_path / "second.jsonl"
    path.write_text(json.dumps({"id": "openi-dev-001", "concepts": [" Effusion "]}), encoding="utf-8")
    assert reading(items, read_all([path]), "second")[0].second == ("effusion",)
    with pytest.raises(SystemExit, match="already have a first reading"):
        reading(items, read_all([path]), "concepts")
    with pytest.raises(ValueError, match="earlier file"):
        read_all([path, path])
    path.write_text(json.dumps({"id": "openi-dev-001", "concepts": "effusion"}), encoding="utf-8")
    with pytest.raises(ValueError, match="line 1"):
        read_labels(path)
    path.write_text(json.dumps({"id": "nowhere", "concepts": []}), encoding="utf-8")
    with pytest.raises(SystemExit, match="unknown items"):
        reading(items, read_all([path]), "second")


def test_the_linker_is_scored_against_the_chosen_reading() -> None:
    labelled = Item("x", "openi", "dev", "r", 0, "Small left pleural effusion.", ("cardiomegaly",), None, ("effusion",))
    assert score([labelled], "first")["correct_pairs"] == 0
    assert score([labelled], "final")["correct_pairs"] == 1
