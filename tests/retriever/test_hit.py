"""The hit's metadata form (retriever/search/hit.py): what a LangChain Document carries of a hit, and the hit read
back from it, also from a Document of another retriever or one written before the form held the whole report."""

from __future__ import annotations

import json

import pytest

from retriever.reports.record import Report
from retriever.search.hit import Hit

REPORT = Report(
    "cxr-7",
    findings="Blunted left costophrenic angle.",
    impression="Small left pleural effusion.",
    full_text="FINDINGS: Blunted left costophrenic angle. IMPRESSION: Small left pleural effusion.",
    modality="XR",
    labels=("effusion",),
    source="openi",
    meta={"uid": "7"},
)


def test_a_hit_comes_back_from_its_metadata_unchanged() -> None:
    for contradicts, partly in ((False, False), (True, False), (False, True)):
        hit = Hit(3, 0.25, "report", REPORT, "hybrid", contradicts=contradicts, partly_contradicts=partly)
        metadata = json.loads(json.dumps(hit.to_metadata()))  # flat JSON values
        assert Hit.from_metadata(metadata, rank=9, report_id="unused", text="unused") == hit


def test_metadata_of_before_the_whole_report_reads_with_the_documents_text_and_the_rest_empty() -> None:
    """Documents written before the metadata held the full text, labels and meta still give their hit."""
    old = {
        key: value
        for key, value in Hit(1, 0.5, "impression", REPORT, "dense").to_metadata().items()
        if key not in ("full_text", "labels", "meta")
    }
    hit = Hit.from_metadata(old, rank=1, report_id="unused", text=REPORT.labelled_text())
    assert hit.report == Report(
        REPORT.id,
        REPORT.findings,
        REPORT.impression,
        REPORT.labelled_text(),
        modality=REPORT.modality,
        source=REPORT.source,
    )
    assert (hit.rank, hit.score, hit.field, hit.method) == (1, 0.5, "impression", "dense")


def test_a_document_of_another_retriever_gives_what_it_has_and_leaves_the_rest_unknown() -> None:
    hit = Hit.from_metadata({"title": "x", "field": "title"}, rank=2, report_id="doc2", text="Page text.")
    assert (hit.rank, hit.score, hit.field, hit.method, hit.contradicts) == (2, 0.0, None, None, False)
    assert hit.report == Report("doc2", full_text="Page text.") and hit.report.shown_impression == "Page text."


def test_a_report_without_an_impression_keeps_none_and_is_shown_by_its_labelled_text() -> None:
    """The evidence reads the impression alone (such a report affirms nothing); answers show it by the text the model
    reads, as they always have."""
    bare = Hit(1, 0.5, "findings", Report("r", findings="Effusion."), "bm25")
    back = Hit.from_metadata(bare.to_metadata(), rank=1, report_id="unused", text="unused")
    assert back == bare and back.report.impression == ""
    assert back.report.shown_impression == back.report.labelled_text() == "FINDINGS: Effusion."
    assert Report("s", full_text="  Whole note. ").shown_impression == "Whole note."
    assert REPORT.shown_impression == REPORT.impression


def test_field_and_method_names_given_as_text_are_checked_against_the_literals() -> None:
    from retriever.reports.record import checked_field
    from retriever.search.methods import checked_method

    assert (checked_field("report"), checked_method("bm25")) == ("report", "bm25")
    with pytest.raises(ValueError, match="unknown field 'impressions'; choose one of findings, impression, report"):
        checked_field("impressions")
    with pytest.raises(ValueError, match="unknown method 'hybird'; choose one of dense, bm25, hybrid"):
        checked_method("hybird")


@pytest.mark.parametrize(
    ("written", "read"),
    [
        (
            [["rad:pleural_effusion", 1.0], ["rad:pneumonia", 0.5]],
            (("rad:pleural_effusion", 1.0), ("rad:pneumonia", 0.5)),
        ),
        ([], ()),  # stored: the report affirms nothing
        (None, None),  # not stored: the answer links the conclusion
        ([["rad:pneumonia"]], None),  # anything else is read as not stored, never guessed at
        ("rad:pneumonia", None),
        ([["rad:pneumonia", "1"]], None),
    ],
)
def test_stored_concepts_travel_in_the_metadata(written: object, read: object) -> None:
    hit = Hit(1, 0.5, "impression", REPORT, "dense", concepts=read)  # type: ignore[arg-type]
    metadata = {**json.loads(json.dumps(hit.to_metadata())), "concepts": written}
    assert Hit.from_metadata(metadata, rank=1, report_id="x", text="x").concepts == read
