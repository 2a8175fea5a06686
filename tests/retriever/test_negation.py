"""NegEx-style negation rules on report sentences written for these tests."""

from __future__ import annotations

import pytest

from retriever.negation.rules import affirm, is_negated, negate

DETECTION = [
    ("There is no pleural effusion.", "pleural effusion", True),
    ("No pneumothorax.", "pneumothorax", True),
    ("Heart size normal without pleural effusion.", "pleural effusion", True),
    ("Pneumothorax is not seen.", "pneumothorax", True),
    ("Negative for pulmonary embolism.", "pulmonary embolism", True),
    ("Lungs are clear with no evidence of pneumonia.", "pneumonia", True),
    ("The right pleural effusion has resolved.", "pleural effusion", True),
    ("Previously noted left pleural effusion appears resolved.", "pleural effusion", True),
    ("The pneumothorax is no longer seen.", "pneumothorax", True),
    ("The effusion is partially resolved.", "effusion", False),  # partial resolution: still there
    ("There is a small left pleural effusion.", "pleural effusion", False),
    ("No change in the right pleural effusion.", "pleural effusion", False),  # pseudo-negation
    ("No pneumothorax but there is a large effusion.", "effusion", False),  # "but" ends the scope
    ("No fracture. Small left effusion.", "effusion", False),  # sentence boundary ends the scope
    ("Consolidation in the right lower lobe.", "consolidation", False),
]


@pytest.mark.parametrize(("sentence", "concept", "negated"), DETECTION)
def test_detection(sentence: str, concept: str, negated: bool) -> None:
    assert is_negated(sentence, concept) is negated


def test_concept_must_occur() -> None:
    with pytest.raises(ValueError, match="not in sentence"):
        is_negated("Normal chest.", "effusion")


@pytest.mark.parametrize(
    ("sentence", "concept", "expected"),
    [
        ("There is a small left pleural effusion.", "pleural effusion", "There is no small left pleural effusion."),
        ("Small left pleural effusion.", "pleural effusion", "No small left pleural effusion."),
        (
            "The lungs show consolidation with air bronchograms.",
            "air bronchograms",
            "The lungs show consolidation without air bronchograms.",
        ),
        ("Findings are consistent with pneumonia.", "pneumonia", "Findings are not consistent with pneumonia."),
        ("Cardiomegaly and mild pulmonary edema.", "pulmonary edema", "Cardiomegaly and no mild pulmonary edema."),
    ],
)
def test_negate(sentence: str, concept: str, expected: str) -> None:
    result = negate(sentence, concept)
    assert result == expected
    assert is_negated(result, concept)
    assert negate(result, concept) is None  # already negated


@pytest.mark.parametrize(
    ("sentence", "concept", "expected"),
    [
        ("There is no pleural effusion.", "pleural effusion", "There is pleural effusion."),
        ("No pneumothorax.", "pneumothorax", "Pneumothorax."),
        ("Heart size normal without pleural effusion.", "pleural effusion", "Heart size normal with pleural effusion."),
        ("Pneumothorax is not seen.", "pneumothorax", "Pneumothorax is seen."),
        ("Negative for pulmonary embolism.", "pulmonary embolism", "Positive for pulmonary embolism."),
        ("The patient denies chest pain.", "chest pain", "The patient reports chest pain."),
    ],
)
def test_affirm(sentence: str, concept: str, expected: str) -> None:
    result = affirm(sentence, concept)
    assert result == expected
    assert not is_negated(result, concept)
    assert affirm(result, concept) is None
