"""Hard negatives for training: BM25-mined look-alikes, polarity-flipped impressions, query-term triplets (the
training run that uses them is in test_train.py)."""

from __future__ import annotations

import pytest

from retriever.negation.pairs import flip_polarity, polarity, real_sentence_pairs, sentence_pairs
from retriever.reports.record import Report
from retriever.training.data import PairSet, bm25_negatives, build_pairs, training_sets


def _pairs(rows: list[tuple[str, str]]) -> PairSet:
    return build_pairs(Report(f"r{n}", findings=f, impression=i) for n, (f, i) in enumerate(rows))


def test_bm25_negative_is_the_closest_other_impression_and_never_a_rewording() -> None:
    pairs = _pairs(
        [
            ("left lower lobe consolidation with air bronchograms", "Left lower lobe pneumonia."),
            ("right lower lobe volume loss", "Right lower lobe atelectasis."),
            ("lungs are clear", "No acute cardiopulmonary abnormality."),
            ("clear lungs, normal heart", "No acute cardiopulmonary disease."),
            ("cardiac silhouette enlarged, lower lobe", "Cardiomegaly."),
        ]
    )
    negatives = bm25_negatives(pairs)
    # "lower lobe" pulls the other lower-lobe impression first.
    assert negatives[0] == "Right lower lobe atelectasis."
    assert negatives[1] == "Left lower lobe pneumonia."
    # The only lexical match of a normal report is the other normal wording: a false negative, so skipped.
    assert negatives[2] is None and negatives[3] is None


@pytest.mark.parametrize(
    ("impression", "flipped"),
    [
        ("No acute cardiopulmonary abnormality.", "Acute cardiopulmonary abnormality."),
        ("Small left pleural effusion. Stable cardiomegaly.", "No small left pleural effusion. Stable cardiomegaly."),
        ("Heart size normal. There is no pneumothorax.", "Heart size normal. There is pneumothorax."),
        ("Degenerative changes of the spine.", None),
    ],
)
def test_flip_polarity_rewrites_the_first_finding(impression: str, flipped: str | None) -> None:
    assert flip_polarity(impression) == flipped


def test_sentence_pairs_cap_each_term_and_skip_deidentified_text() -> None:
    texts = [f"There is a small pleural effusion number {n}." for n in range(5)] + ["No XXXX pneumothorax."]
    pairs = sentence_pairs(texts, "t", per_term=2)
    assert [p.query for p in pairs] == ["pleural effusion", "pleural effusion"]
    assert pairs[0].affirmed == texts[0] and pairs[0].negated == "There is no small pleural effusion number 0."


def test_training_sets_group_rows_by_negatives_and_keep_every_pair() -> None:
    rows = [(f"finding {n} with effusion", f"Pleural effusion {n}.") for n in range(40)]
    rows += [(f"finding {n} degenerative", f"Spine degeneration {n}.") for n in range(40)]
    pairs = _pairs(rows)
    sets = training_sets(pairs, [], negation=True, min_rows=8)
    assert sorted(sets) == ["reports", "reports+1neg"]
    assert len(sets["reports"]["anchor"]) + len(sets["reports+1neg"]["anchor"]) == 80
    assert sets["reports+1neg"]["negative_1"][0] == "No pleural effusion 0."
    # A group too small to fill a batch joins the largest, padded with another report's impression.
    merged = training_sets(pairs, [], negation=True, min_rows=50)
    assert list(merged) == ["reports+1neg"] and len(merged["reports+1neg"]["anchor"]) == 80
    padded = merged["reports+1neg"]["negative_1"][-1]
    assert padded != merged["reports+1neg"]["positive"][-1]


def _report(n: int, findings: str, impression: str = "Impression text here.") -> Report:
    return Report(f"r:{n}", findings=findings, impression=impression, source="t")


def test_real_sentence_pairs_take_both_halves_from_different_reports_as_written() -> None:
    reports = [
        _report(1, "Small left pleural effusion. Heart size is normal."),
        _report(2, "No pleural effusion was seen on either side."),
        _report(3, "Possible small pleural effusion."),  # hedged: never an affirmed half
        _report(4, "Pleural effusion and pneumothorax on the right."),  # two findings: not used
        _report(5, "Large right pneumothorax. No pneumothorax on the left."),  # same report: no pair of its own
    ]
    pairs = real_sentence_pairs(reports, "t")
    assert [(p.query, p.affirmed, p.negated) for p in pairs] == [
        ("pleural effusion", "Small left pleural effusion.", "No pleural effusion was seen on either side.")
    ]


def test_label_triplets_are_keyed_by_the_finding_a_resident_types_and_only_when_asked() -> None:
    chest = [
        Report(
            "ct:1",
            findings="Several lymph nodes are observed in the mediastinum.",
            impression="Adenopathy.",
            source="ctrate",
        ),
        Report(
            "ct:2",
            findings="No lymph node in pathological size was observed.",
            impression="Normal chest CT.",
            source="ctrate",
        ),
        Report("mp:1", findings="Enlarged lymph nodes in the neck.", impression="Lymphoma.", source="medpix"),
        Report("mp:2", findings="No lymph nodes in the neck.", impression="Normal neck.", source="medpix"),
    ]
    pairs = build_pairs(chest)
    # The term triplets key by the reports' words: "lymph node" is no training term, so none come of these reports.
    assert "negation-terms" not in training_sets(pairs, chest, negation=True)
    # The label triplets key by the label's query; MedPix has no label list ("lymph nodes in the neck").
    assert training_sets(pairs, chest, labels=True)["negation-terms"] == {
        "anchor": ["lymphadenopathy"],
        "positive": ["Several lymph nodes are observed in the mediastinum."],
        "negative_1": ["No lymph node in pathological size was observed."],
    }


def test_polarity_is_negated_affirmed_or_in_doubt() -> None:
    assert polarity("No pleural effusion.", "pleural effusion") is True
    assert polarity("Small left pleural effusion.", "pleural effusion") is False
    assert polarity("Pleural effusion cannot be excluded.", "pleural effusion") is None
    assert polarity("Pleural effusion is normal, not pneumothorax.", "pleural effusion") is None
