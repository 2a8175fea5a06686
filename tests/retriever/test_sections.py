"""Section parser on messy report text written for these tests (header spellings, bullets, wrapping)."""

from __future__ import annotations

import pytest

from retriever.reports.sections import clean_text, parse_sections

CASES = [
    # (text, findings, impression)
    (
        "FINAL REPORT\n EXAMINATION: CHEST (PORTABLE AP)\n\n INDICATION: ___-year-old man with\n fever.\n\n"
        " FINDINGS: \n\n Heart size is normal. There is a new\n left basilar opacity.\n\n IMPRESSION: \n\n"
        " 1. Left lower lobe pneumonia.\n 2. No effusion.\n",
        "Heart size is normal. There is a new left basilar opacity.",
        "Left lower lobe pneumonia. No effusion.",
    ),
    (
        "EXAM: , CT abdomen.,REASON FOR EXAM: , Pain.,FINDINGS:  ,The liver is enlarged.,IMPRESSION: , Hepatomegaly.",
        "The liver is enlarged.",
        "Hepatomegaly.",
    ),
    ("Findings\nNo focal consolidation.\nConclusion - Normal chest.", "No focal consolidation.", "Normal chest."),
    ("findings: Mild cardiomegaly.\nimpressions: Cardiomegaly.", "Mild cardiomegaly.", "Cardiomegaly."),
    ("1. FINDINGS: liver cyst\n2. IMPRESSION: benign cyst", "liver cyst", "benign cyst"),
    ("\u2022 Findings: left lower lobe opacity\n\u2022 Impression: pneumonia", "left lower lobe opacity", "pneumonia"),
    ("Lungs clear. IMPRESSION: No acute disease.", "", "No acute disease."),
    ("OPINION: Appendicitis.\nFINDINGS: Dilated appendix 12 mm.", "Dilated appendix 12 mm.", "Appendicitis."),
    ("FINDINGS:\r\nSmall   effusion.\r\nINTERPRETATION:\r\nEffusion.", "Small effusion.", "Effusion."),
    (
        "IMPRESSION/CONCLUSION: Stable nodule.\nFindings - 4 mm nodule, unchanged.",
        "4 mm nodule, unchanged.",
        "Stable nodule.",
    ),
]


@pytest.mark.parametrize(("text", "findings", "impression"), CASES)
def test_parses_common_header_spellings(text: str, findings: str, impression: str) -> None:
    sections = parse_sections(text)
    assert sections.findings == findings
    assert sections.impression == impression


def test_ordinary_words_are_not_headers() -> None:
    sections = parse_sections("Patient has no report of pain: the findings are stable. No impression: none")
    assert sections.findings == "" and sections.impression == ""
    assert "stable" in sections.other


def test_repeated_sections_are_concatenated_and_preamble_kept() -> None:
    sections = parse_sections("FINAL REPORT\nFINDINGS: A.\nIMPRESSION: B.\nFINDINGS: C.")
    assert sections.findings == "A. C."
    assert sections.other == "FINAL REPORT"


def test_clean_text_removes_bullets_and_unwraps() -> None:
    assert clean_text("- first\n* second\n  3) third  ") == "first second third"
