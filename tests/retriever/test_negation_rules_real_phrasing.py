"""The negation rules on the ways real reports rule findings out: cues after the finding, long negated lists,
hyphen-joined pairs, resolution, and hedges that leave a finding possible. Sentences written for these tests (not
taken from the shared data), in the styles of CT-RATE, Open-i and MTSamples reports."""

from __future__ import annotations

import pytest

from retriever.negation.rules import is_negated
from retriever.negation.scope import NEGATED_PREFIX, scoped_words
from retriever.negation.tokens import tokenize

CASES = [
    # post-negations: the cue after the finding
    ("Mediastinal lymphadenopathy was not detected.", "lymphadenopathy", True),
    ("Pneumoperitoneum is not evident.", "pneumoperitoneum", True),
    ("Hilar adenopathy is not visualized.", "adenopathy", True),
    ("A pericardial effusion is not appreciated.", "pericardial effusion", True),
    ("Consolidation and ground-glass opacity were not observed in either lung.", "consolidation", True),
    ("Consolidation and ground-glass opacity were not observed in either lung.", "opacity", True),
    ("Pulmonary embolism has been excluded.", "pulmonary embolism", True),
    # the "not" of a post-negation negates nothing after it
    ("Pneumothorax was not detected, and a small granuloma is present.", "granuloma", False),
    # lists longer than the six-word window
    (
        "No pulmonary nodule, focal consolidation, cavitation, hilar mass, or sizable pleural effusion.",
        "pleural effusion",
        True,
    ),
    (
        "Splenomegaly, ascites, bowel wall thickening, free fluid and enlarged retroperitoneal nodes "
        "were not observed.",
        "splenomegaly",
        True,
    ),
    (
        "The colon shows no diverticula, wall thickening, pericolic stranding, abscess, or free intraperitoneal air.",
        "air",
        True,
    ),
    # ... but not past a verb, a new clause, or a comma that joins no list
    ("No effusion or pneumothorax is seen in the chest and the left ventricle is dilated.", "dilated", False),
    ("There is no effusion or pneumothorax, and there is a new rib fracture.", "rib fracture", False),
    ("Given no evidence of bleeding on this study, the patient's anemia remains unexplained.", "anemia", False),
    # hyphen-joined pairs
    ("Pleural thickening-effusion was not observed on the left.", "thickening", True),
    ("Pleural thickening-effusion was not observed on the left.", "effusion", True),
    ("Pericardial effusion-thickening is not detected.", "pericardial effusion", True),
    # resolution
    ("Bibasilar atelectasis and the small left effusion have cleared since the prior study.", "atelectasis", True),
    (
        "The previously seen right apical pneumothorax is not visualized on the current radiograph.",
        "pneumothorax",
        True,
    ),
    ("The right lower lobe pneumonia has completely resolved.", "pneumonia", True),
    ("Partial resolution of the left basilar consolidation.", "consolidation", False),
    ("The effusion is almost completely resolved.", "effusion", False),
    ("New right upper lobe nodule, not seen on the prior examination.", "nodule", False),  # new, so present
    # hedges: possible, not ruled out
    ("Early appendicitis cannot be excluded.", "appendicitis", False),
    ("A small occult fracture could not be entirely excluded.", "fracture", False),
    ("As no contrast was given, a renal mass cannot be ruled out.", "renal mass", False),
    ("Clinical question: rule out pulmonary embolism.", "pulmonary embolism", False),
    ("Follow-up CT is advised to exclude an underlying mass.", "mass", False),
    ("Pneumonia is not excluded.", "pneumonia", False),
    # a negated property of a thing that is there
    ("There is no enhancement within the mass.", "mass", False),
    ("There is no enhancement within the mass.", "enhancement", True),
    ("CT without contrast shows a large subdural hematoma.", "hematoma", False),  # technique, not a finding
]


@pytest.mark.parametrize(("sentence", "concept", "ruled_out"), CASES)
def test_is_negated_on_real_phrasing(sentence: str, concept: str, ruled_out: bool) -> None:
    assert is_negated(sentence, concept) is ruled_out


@pytest.mark.parametrize(("sentence", "concept", "ruled_out"), [c for c in CASES if " " not in c[1]])
def test_bm25_sees_the_same_scopes(sentence: str, concept: str, ruled_out: bool) -> None:
    """The detector and the lexical search read a sentence alike (one scope algorithm, retriever/negation/scope.py)."""
    words = scoped_words(sentence)
    assert (NEGATED_PREFIX + concept in words) is ruled_out
    assert (concept in words) is not ruled_out


def test_bm25_terms_of_a_post_negated_list() -> None:
    assert tokenize("Pleural effusion was not detected.") == ["neg:pleural", "neg:effusion"]
    assert tokenize("No consolidation, effusion, pneumothorax, or acute osseous abnormality.") == [
        "neg:consolidation",
        "neg:effusion",
        "neg:pneumothorax",
        "neg:acute",
        "neg:osseous",
        "neg:abnormality",
    ]
    # a hedge is no trigger: its words stay, and nothing it reaches is negated
    assert scoped_words("Metastasis cannot be excluded.") == ["metastasis", "cannot", "be", "excluded"]


def test_a_trigger_inside_the_concept_does_not_negate_it() -> None:
    """As in NegEx, the cue must lie outside the concept: "showed no abnormality" named as one finding is not a
    negated finding, while "abnormality" in it is."""
    sentence = "The exam showed no abnormality."
    assert is_negated(sentence, "showed no abnormality") is False
    assert is_negated(sentence, "abnormality") is True
