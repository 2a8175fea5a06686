"""Side, severity and size hard negatives (issue 20): one grammatical edit of the impression, repeatable, and a
column of the training sets only when asked for."""

from __future__ import annotations

from retriever.reports.record import Report
from retriever.training.data import build_pairs, training_sets
from retriever.training.negatives import detail_negative, detail_variants


def test_each_variant_changes_one_side_severity_or_measurement() -> None:
    assert detail_variants("Small left pleural effusion. Mild cardiomegaly.") == [
        "Large left pleural effusion. Mild cardiomegaly.",
        "Small right pleural effusion. Mild cardiomegaly.",
        "Small left pleural effusion. Severe cardiomegaly.",
    ]
    assert detail_variants("A 4 mm nodule; a 12 cm mass; 2.5 cm lesion.") == [
        "A 8 mm nodule; a 12 cm mass; 2.5 cm lesion.",
        "A 4 mm nodule; a 6 cm mass; 2.5 cm lesion.",
        "A 4 mm nodule; a 12 cm mass; 5 cm lesion.",
    ]
    assert detail_variants("Leftover contrast. Mildew.") == []  # whole words only
    assert detail_negative("No acute disease.") is None


def test_the_negative_is_one_of_the_variants_and_the_same_every_time() -> None:
    text = "Right lower lobe pneumonia with a small right effusion."
    assert detail_negative(text) in detail_variants(text)
    assert detail_negative(text) == detail_negative(text)


def _reports() -> list[Report]:
    sides = ("left", "right")
    return [
        Report(f"r:{i}", f"Opacity {i} at the {sides[i % 2]} base.", f"{sides[i % 2].capitalize()} pneumonia {i}.")
        for i in range(40)
    ]


def test_training_sets_get_the_detail_negative_only_when_asked() -> None:
    pairs = build_pairs(_reports())
    plain = training_sets(pairs, _reports())
    assert set(plain) == {"reports"}
    detailed = training_sets(pairs, _reports(), detail=True)
    assert set(detailed) == {"reports+1neg"}
    rows = detailed["reports+1neg"]
    for positive, negative in zip(rows["positive"], rows["negative_1"], strict=True):
        assert negative == detail_negative(positive) and negative.split()[0] != positive.split()[0]  # side swapped
