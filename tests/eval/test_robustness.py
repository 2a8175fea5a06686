"""The robustness benchmarks' generators and metrics (eval/robustness): deterministic, real changes, right scores."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from eval.robustness import corrupt, rephrase, variants
from eval.robustness.metrics import category, cer, code_scores, edit_distance
from eval.robustness.results import QueriesPart, QueryScores, QuerySet, RobustnessResults, VariantScores

NO_SHARED = Path("/nonexistent-shared-data")


@pytest.mark.models
def test_code_selection_is_seeded_billable_and_spread_over_every_chapter() -> None:
    codes = rephrase.billable_codes()
    chosen = rephrase.select_codes(codes)
    assert chosen == rephrase.select_codes(codes)
    assert len(chosen) == len(set(chosen)) == 100
    assert set(chosen) <= set(codes)
    assert len({rephrase.chapter_of(c) for c in chosen}) == 22
    assert rephrase.select_codes(codes, seed=1) != chosen


@pytest.mark.models
def test_dev_codes_are_as_many_as_test_spread_over_the_chapters_left_and_disjoint_from_them() -> None:
    codes = rephrase.billable_codes()
    test, dev = rephrase.split_codes(codes, "test"), rephrase.split_codes(codes, "dev")
    assert test == rephrase.select_codes(codes)
    assert len(dev) == 100 and not set(dev) & set(test)
    # chapter 22's three billable codes are all in the test set
    assert {rephrase.chapter_of(c) for c in dev} == {rephrase.chapter_of(c) for c in codes} - {"22"}
    with pytest.raises(ValueError, match="unknown split"):
        rephrase.split_codes(codes, "train")


@pytest.mark.parametrize(
    ("code", "description"),
    [
        ("J15.9", "Unspecified bacterial pneumonia"),
        ("A36.83", "Diphtheritic polyneuritis"),
        ("S72.001A", "Fracture of unspecified part of neck of right femur, initial encounter for closed fracture"),
    ],
)
def test_ten_rephrasings_each_differs_from_the_description_and_the_others(code: str, description: str) -> None:
    made = rephrase.rephrasings(code, description, NO_SHARED)
    assert made == rephrase.rephrasings(code, description, NO_SHARED)
    assert len(made) == 10
    keys = [rephrase.words(r.text) for r in made]
    assert rephrase.words(description) not in keys
    assert len(set(keys)) == 10


def test_rules_by_hand() -> None:
    assert rephrase.drop_qualifiers("Myiasis, unspecified") == "Myiasis"
    assert rephrase.reorder("Fracture of right femur, initial encounter for closed fracture") == (
        "right femur fracture, initial encounter for closed fracture"
    )
    assert rephrase.reorder("Pneumonia, unspecified organism") == "unspecified organism pneumonia"
    assert rephrase.bare("Severe persistent asthma with (acute) exacerbation") == (
        "Severe persistent asthma with exacerbation"
    )
    assert rephrase.abbreviate("Deep vein thrombosis of left leg with pneumothorax", NO_SHARED) == (
        "DVT of L leg w/ PTX"
    )


def test_abbreviation_round_trip_with_the_project_table() -> None:
    text = "Small pneumothorax with deep vein thrombosis and chronic obstructive pulmonary disease."
    short = variants.abbreviated(text, NO_SHARED)
    assert short == "Small PTX w/ DVT & COPD."
    assert variants.expand(short, NO_SHARED).lower() == text.lower()


def test_abbreviation_round_trip_with_the_shared_radiology_table(shared_data: Path) -> None:
    text = "Ground-glass opacity in the right upper lobe with pneumothorax."
    short = variants.abbreviated(text, shared_data)
    assert short == "ggo in the RUL w/ ptx."
    assert rephrase.words(variants.expand(short, shared_data)) == rephrase.words(text)


def test_typos_are_seeded_at_the_stated_rate() -> None:
    text = "There is a small right pleural effusion with bibasilar atelectasis and no pneumothorax. " * 5
    assert variants.typos(text, "r1") == variants.typos(text, "r1")
    assert variants.typos(text, "r1") != variants.typos(text, "r2")
    assert variants.typos(text, "r1", rate=0.0) == text
    edits = edit_distance(variants.typos(text, "r1", rate=0.05), text)
    letters = sum(c.isalpha() for c in text)
    assert 0.02 * letters < edits < 0.1 * letters


def test_british_spellings() -> None:
    assert variants.british("Edema near the esophagus, centered on a hemorrhage.") == (
        "Oedema near the oesophagus, centred on a haemorrhage."
    )
    assert variants.british("No effusion.") == "No effusion."


REPORT = "Small right pleural effusion. No pneumothorax. Mild cardiomegaly with a 2.5 cm nodule. Left atelectasis."


@pytest.mark.parametrize("error_type", corrupt.ERROR_TYPES)
def test_every_error_type_makes_three_distinct_real_corruptions(error_type: str) -> None:
    made = corrupt.corruptions(REPORT, error_type, seed="x")
    assert made is not None and made == corrupt.corruptions(REPORT, error_type, seed="x")
    assert len(set(made)) == 3 and REPORT not in made


def test_corruptions_change_what_they_say() -> None:
    flips = corrupt.negation(REPORT)
    assert len(flips) >= 3
    for flipped in flips:
        changed = [(a, b) for a, b in zip(REPORT.split(". "), flipped.split(". "), strict=True) if a != b]
        assert 1 <= len(changed) <= 2
        assert all(a.lower().startswith("no ") != b.lower().startswith("no ") for a, b in changed)
    assert all("right" not in c.split(".")[0] for c in corrupt.laterality(REPORT)[:2])
    assert {"Large", "Moderate", "Massive"} <= {c.split()[0] for c in corrupt.severity(REPORT)}
    assert "5 cm" in " ".join(corrupt.measurement(REPORT))
    assert corrupt.corruptions("No acute abnormality.", "measurement", seed="x") is None


def test_character_error_rate_and_code_agreement_by_hand() -> None:
    assert edit_distance("kitten", "sitting") == 3
    assert cer("kitten", "sitting") == pytest.approx(3 / 7)
    assert cer("same", "same") == 0.0
    assert category("S72.001A") == "S72" and category("D62") == "D62"
    scores = code_scores(["J18.9", "J15.9", None], ["J18.9", "J18.1", "A00.0"], [0.0, 0.5, 1.0])
    assert scores["exact@1"]["value"] == pytest.approx(1 / 3, abs=1e-3)
    assert scores["category@1"]["value"] == pytest.approx(1 / 3, abs=1e-3)
    assert scores["cer"] == 0.5


def test_dev_split_results_never_merge_into_a_test_split_file(tmp_path: Path) -> None:
    """Candidates are compared on dev; merging dev rows into the test file would report them as test results."""
    import json

    from eval.robustness.__main__ import main

    test_split = RobustnessResults("robustness", "now", "c", "0", split="test")
    (tmp_path / "robustness.json").write_text(json.dumps(test_split.to_json()))
    with pytest.raises(SystemExit) as stopped:
        main(["--split", "dev", "--out", str(tmp_path), "--data", str(NO_SHARED), "--parts", "queries"])
    assert stopped.value.code == 2


def test_the_report_names_the_split_its_queries_came_from() -> None:
    from eval.robustness.report import render

    row = VariantScores(2, 0.3, 0.5, 0.5, 0.4, changed=1, drop_at_5=0.0, p_vs_clean_at_5=1.0)
    scores = QueryScores("bm25", 2, {v: row for v in variants.VARIANTS})
    part = QueriesPart({"bm25": scores}, QuerySet(2, {v: 1 for v in variants.VARIANTS}), command="c", load="0")
    results = RobustnessResults("robustness", "now", "c", "0", queries=part)
    assert "shared test split" in render(results)
    assert "shared dev split" in render(replace(results, split="dev"))
