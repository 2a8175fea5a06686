"""Negations that govern a list, sit in an idiom ("clear of", "no evidence of any"), answer a label after a colon or
negate a plural (issue 50): the detector, the lexical scopes, and search ranking such reports after affirmed ones."""

from __future__ import annotations

import pytest

from retriever.index.report_index import ReportIndex
from retriever.negation.inflection import concept_spans, inflections
from retriever.negation.rules import is_negated
from retriever.negation.scope import scoped_words
from retriever.reports.record import Report

#: The three sentences of issue 50 that search showed as affirmed (rank 2, "strong").
ANY_LIST = "No evidence of any focal areas of consolidation, pneumothoraces, or pleural effusions."
CLEAR_OF = "The lungs are grossly clear of focal airspace disease, pneumothorax or pleural effusion."
COLON = "Evaluation for pneumothorax: none identified."


@pytest.mark.parametrize(
    ("sentence", "concept"),
    [
        (ANY_LIST, "consolidation"),
        (ANY_LIST, "pneumothorax"),
        (ANY_LIST, "pleural effusion"),
        (CLEAR_OF, "airspace disease"),
        (CLEAR_OF, "pneumothorax"),
        (CLEAR_OF, "pleural effusion"),
        (COLON, "pneumothorax"),
        ("Pleural effusions: absent.", "pleural effusion"),
        ("Adnexa: not seen.", "adnexa"),
        ("Rule out pneumothorax: negative, effusion: small.", "pneumothorax"),
        ("Negative for pneumothorax, pneumomediastinum, or pleural effusion.", "pleural effusion"),
        ("No intracavitary thrombi are seen.", "thrombus"),
        ("No hepatic metastases.", "metastasis"),
    ],
)
def test_ruled_out(sentence: str, concept: str) -> None:
    assert is_negated(sentence, concept)


@pytest.mark.parametrize(
    ("sentence", "concept"),
    [
        # a colon answer that is not a bare negation, or a label that is affirmed
        ("Rule out pneumothorax: negative, effusion: small.", "effusion"),
        ("Pneumothorax: small, apical.", "pneumothorax"),
        ("Findings: no pneumothorax. Effusion: moderate.", "effusion"),
        # "clear of" and "without" govern what follows them, not the finding before
        ("The lungs are mildly hypoinflated but clear of focal airspace disease.", "hypoinflated"),
        ("There is a laceration of the scalp without underlying calvarial fractures.", "laceration"),
        # a new subject after a comma ends the negation's scope
        ("There were no hepatic lesions, and all mesenteric nodes were sub-centimeter.", "nodes"),
        ("Due to no evidence of active bleeding, the patient remained hemodynamically stable.", "stable"),
    ],
)
def test_not_ruled_out(sentence: str, concept: str) -> None:
    assert not is_negated(sentence, concept)


def test_a_long_trigger_reaches_window_words_after_it() -> None:
    """The window counts words after the trigger: "no evidence of" reached only four words before, so the fifth
    ("consolidation" in ANY_LIST) was affirmed."""
    assert is_negated("No evidence of any focal areas of consolidation.", "consolidation")
    assert is_negated("Focal areas of dense consolidation were not detected.", "focal areas")


def test_colon_answer_negates_the_label_in_the_lexical_scopes() -> None:
    assert scoped_words(COLON) == ["neg:evaluation", "neg:for", "neg:pneumothorax"]
    assert scoped_words("Pneumothorax: none, effusion: small.") == ["neg:pneumothorax", "effusion", "small"]


@pytest.mark.parametrize(
    ("singular", "plural"),
    [
        ("pneumothorax", "pneumothoraces"),
        ("effusion", "effusions"),
        ("opacity", "opacities"),
        ("mass", "masses"),
        ("thrombus", "thrombi"),
        ("metastasis", "metastases"),
        ("diverticulum", "diverticula"),
        ("apex", "apices"),
    ],
)
def test_plural_and_singular_are_one_word(singular: str, plural: str) -> None:
    assert plural in inflections(singular) and singular in inflections(plural)


def test_concept_spans_find_the_plural_as_whole_words_in_text_order() -> None:
    text = "Pleural effusions resolved; small pleural effusion now."
    assert [text[a:b] for a, b in concept_spans(text, "pleural effusion")] == ["Pleural effusions", "pleural effusion"]
    assert concept_spans("Massive hemorrhage.", "mass") == []
    assert concept_spans("Bladder lift x 2.", "bladder lift x 2") == [(0, 16)]


# ------------------------------------------------------------------------------------ ranked after affirmed reports
NEGATED = {
    "neg:any-list": ANY_LIST,
    "neg:clear-of": CLEAR_OF,
    "neg:colon": COLON,
}
AFFIRMED = {
    "aff:pneumothorax": "Small right apical pneumothorax.",
    "aff:effusion": "Moderate left pleural effusion with adjacent atelectasis.",
    "aff:consolidation": "Right lower lobe consolidation with air bronchograms.",
    "aff:pneumothorax-2": "Large left pneumothorax with mediastinal shift.",
}


@pytest.fixture(scope="module")
def list_form_index(minilm, tmp_path_factory: pytest.TempPathFactory) -> ReportIndex:
    reports = [
        Report(report_id, findings, "See findings.", modality="XR", source="site-a")
        for report_id, findings in {**NEGATED, **AFFIRMED}.items()
    ]
    folder = tmp_path_factory.mktemp("list-forms") / "index"
    ReportIndex.build(reports, minilm).save(folder)
    return ReportIndex.load(folder, minilm)


@pytest.mark.models
@pytest.mark.parametrize(
    ("query", "negated", "affirmed"),
    [
        ("pneumothorax", {"neg:any-list", "neg:clear-of", "neg:colon"}, {"aff:pneumothorax", "aff:pneumothorax-2"}),
        ("pleural effusion", {"neg:any-list", "neg:clear-of"}, {"aff:effusion"}),
        ("consolidation", {"neg:any-list"}, {"aff:consolidation"}),
    ],
)
def test_reports_ruling_the_finding_out_rank_after_affirmed_ones(
    list_form_index: ReportIndex, query: str, negated: set[str], affirmed: set[str]
) -> None:
    hits = list_form_index.search(query, field="findings", k=len(NEGATED) + len(AFFIRMED))
    rank = {hit.report.id: hit.rank for hit in hits}
    flagged = {hit.report.id for hit in hits if hit.contradicts}
    assert negated <= flagged and not affirmed & flagged
    assert max(rank[r] for r in affirmed) < min(rank[r] for r in negated)
