"""Reports parsed as reports (issue 48) and what a RIS export says of a study (issue 50).

Every report of a hospital export ends with a signature, dictation stamp, attestation or disclaimer; they are not
the reading and must never reach findings or impression (the answer once read "Most likely diagnosis: electronically
signed"). The spellings below are those of several vendors' exports, written for this test. An addendum is its own
section and part of the conclusion; ReportStatus is normalised, StudyDescription and BodyPartExamined kept.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from retriever.reports.record import Report
from retriever.reports.sections import parse_sections
from retriever.reports.signoffs import strip_signoffs
from retriever.reports.sources.study_status import normalize_status
from retriever.reports.sources.tabular import ColumnMap, load_table

REPO = Path(__file__).resolve().parents[2]
READING = "Cardiomegaly with interstitial edema."
#: Sign-off blocks as vendors' exports end a report (names and dates invented).
SIGN_OFFS = {
    "epic": "Electronically Signed By: Dr. Jane Smith on 11/24/2026 10:12",
    "epic_reviewed": "Reviewed and electronically signed by: Jane Smith, MD 11/24/2026 10:12 AM",
    "powerscribe": "Dictated by: John Doe, MD\nTranscribed by: KLM\nD: 11/24/2026 09:01 T: 11/24/2026 09:40\n"
    "Job #: 88123",
    "powerscribe_dd": "DD: 11/24/2026 09:01\nDT: 11/24/2026 09:40",
    "nuance_disclaimer": "This report was generated with the assistance of speech recognition software. "
    "Unintended transcription errors may occur.\nSigned by: J. Doe, MD",
    "attestation": "Resident: Dr. Ann Lee\nAttending radiologist attestation: I have personally reviewed the images "
    "and agree with the report.\nElectronically signed by Dr. B. Kahn on 11/24/2026",
    "teaching": "I have personally reviewed the images and agree with the resident's interpretation.",
    "i_dr": "I, Dr. Bruce Kahn, have personally reviewed the images and agree with the findings.",
    "end_marker": "*** END OF IMPRESSION ***\nDr. X Y\nRadiology Associates",
    "end_report": "[END OF REPORT]",
    "sectra": "Signed: 2026-11-24 10:12 Dr X Y",
    "agfa": "Validated by: Dr X Y (11/24/2026 10:12)",
    "centricity": "Report Status: Final\nDictated By: Dr. X\nSigned By: Dr. X",
    "fluency": "Finalized by: X Y, MD on 11/24/2026 at 10:12",
    "verified": "Report verified by: Dr X Y 24.11.2026",
    "es": "/es/ DR X Y\n11/24/2026 10:12",
    "radiologist": "Radiologist: Dr. X Y",
    "dictated_not_read": "Dictated but not read.",
    "confidential": "CONFIDENTIALITY NOTICE: This report contains protected health information.",
    "approved": "Approved by: Dr X Y",
    "digital": "Digitally signed by Dr X Y",
    "attending": "Attending: Dr. B. Kahn\nRead by: Dr. A. Lee",
    "end_dictation": "END OF DICTATION",
    "excuse": "Please excuse any typographical errors.",
}


@pytest.mark.parametrize("vendor", sorted(SIGN_OFFS))
def test_no_sign_off_in_the_impression_of_any_vendors_report(vendor: str) -> None:
    text = f"EXAM: XR CHEST 2 VIEWS\nFINDINGS:\nThe heart is enlarged.\n\nIMPRESSION:\n{READING}\n\n{SIGN_OFFS[vendor]}"
    sections = parse_sections(text)
    assert sections.impression == READING
    assert sections.findings == "The heart is enlarged."


@pytest.mark.parametrize("vendor", sorted(SIGN_OFFS))
def test_a_sign_off_on_the_impressions_line_or_in_crlf_text_is_cut_too(vendor: str) -> None:
    one_line = " ".join(SIGN_OFFS[vendor].split("\n"))
    assert parse_sections(f"FINDINGS: Heart enlarged. IMPRESSION: {READING} {one_line}").impression == READING
    crlf = f"FINDINGS:\r\nHeart enlarged.\r\nIMPRESSION:\r\n{READING}\r\n{SIGN_OFFS[vendor]}".replace("\n", "\r\n")
    assert parse_sections(crlf).impression == READING.replace("\r", "")


@pytest.mark.parametrize(
    "stamp",
    ["Electronically signed by: Dr X", "Digitally Signed: Dr X", "Dictated by: Dr X", "Transcribed by: KLM",
     "*** END OF IMPRESSION ***", "/es/ DR X"],
)  # fmt: skip
def test_an_unmistakable_stamp_is_cut_even_without_a_period_before_it(stamp: str) -> None:
    assert parse_sections(f"IMPRESSION: Cardiomegaly with interstitial edema {stamp}").impression == READING[:-1]


def test_sign_offs_after_findings_and_in_a_findings_only_report_are_cut() -> None:
    sections = parse_sections("FINDINGS: Small left effusion.\nDictated by: Dr X\nD: 11/24/2026 T: 11/24/2026")
    assert sections.findings == "Small left effusion." and not sections.impression
    assert parse_sections("Small left effusion.\nElectronically signed by Dr X").other == "Small left effusion."


def test_a_disclaimer_is_cut_alone_and_the_reading_after_it_is_kept() -> None:
    text = (
        "IMPRESSION:\nThis report was dictated using voice recognition software; errors may occur.\n"
        "1. Right lower lobe pneumonia.\n2. Small effusion."
    )
    assert parse_sections(text).impression == "Right lower lobe pneumonia. Small effusion."


@pytest.mark.parametrize(
    "reading",
    [
        "Findings as dictated by the referring clinician's note are not confirmed.",
        "Pneumonia, signed out to the ward team by phone at 10:12.",
        "No pneumothorax. An addendum will follow when the outside films arrive.",
        "Ultrasound of the right upper quadrant. EDD BY CURRENT ULTRASOUND: 06/04/07.",
        "Old fracture. t: 11/18/92: right frontal skull fracture.",
        "The end of the catheter projects over the SVC.",
        "Recommend follow-up; the report was verified with the technologist.",
    ],
)
def test_readings_that_merely_mention_signing_or_dictation_are_kept(reading: str) -> None:
    assert strip_signoffs(reading) == reading
    assert parse_sections(f"IMPRESSION: {reading}").impression == reading


@pytest.mark.parametrize(
    "header",
    [
        "ADDENDUM:",
        "Addendum #1 (11/25/2026):",
        "***ADDENDUM***",
        "*** ADDENDUM ***",
        "ADDENDUM 2 - 11/25/2026 08:00:",
        "Addendum by Dr. Lee:",
        "ADDENDUM",
    ],
)
def test_an_addendum_is_its_own_section_and_part_of_the_conclusion(header: str) -> None:
    text = (
        f"FINDINGS: Heart enlarged.\nIMPRESSION: Cardiomegaly.\nElectronically signed by Dr X on 11/24/2026\n\n"
        f"{header}\nInterstitial edema on review of the outside CT.\nElectronically signed by Dr X on 11/25/2026\n"
    )
    sections = parse_sections(text)
    assert sections.impression == "Cardiomegaly."
    assert sections.addendum == "Interstitial edema on review of the outside CT."
    report = Report(id="r", impression=sections.impression, addendum=sections.addendum)
    assert report.conclusion == "Cardiomegaly. Interstitial edema on review of the outside CT."
    assert report.text_of("impression") == report.conclusion and report.shown_impression == report.conclusion


def test_an_addendum_above_the_original_report_ends_at_its_first_section() -> None:
    text = "***ADDENDUM***\nFindings discussed with Dr. Y at 10:30.\n/es/ DR X\n\nFINDINGS: a.\nIMPRESSION: Pneumonia."
    sections = parse_sections(text)
    assert (sections.addendum, sections.findings, sections.impression) == (
        "Findings discussed with Dr. Y at 10:30.",
        "a.",
        "Pneumonia.",
    )


def test_a_report_without_addendum_concludes_with_its_impression_unchanged() -> None:
    assert Report(id="r", impression="Cardiomegaly").conclusion == "Cardiomegaly"
    assert Report(id="r", addendum="Edema").conclusion == "Edema."


@pytest.mark.parametrize(
    ("spelling", "status"),
    [
        ("P", "preliminary"),
        ("Prelim", "preliminary"),
        ("PRELIMINARY", "preliminary"),
        ("Wet Read", "preliminary"),
        ("Dictated", "preliminary"),
        ("Unsigned", "preliminary"),
        ("F", "final"),
        ("Final", "final"),
        ("Signed", "final"),
        ("Verified", "final"),
        ("Finalized", "final"),
        ("C", "corrected"),
        ("Corrected", "corrected"),
        ("Amended", "corrected"),
        ("A", "addendum"),
        ("Addended", "addendum"),
        ("Final with Addendum", "addendum"),
        ("", ""),
        ("Scheduled", ""),
    ],
)
def test_report_status_spellings_are_normalised(spelling: str, status: str) -> None:
    assert normalize_status(spelling) == status


#: A RIS export as it comes: UTF-8 with BOM, CRLF, US dates, every report signed off.
RIS_HEADER = ["AccessionNumber", "PatientID", "StudyDate", "Modality", "StudyDescription", "BodyPartExamined",
              "ReportStatus", "ReportText"]  # fmt: skip
STUDIES = [
    ("XR CHEST 2 VIEWS", "The heart is enlarged. Interstitial opacities and Kerley B lines.",
     "Cardiomegaly with interstitial edema."),
    ("XR CHEST 1 VIEW", "Cardiac silhouette is enlarged. Diffuse interstitial opacities.",
     "Cardiomegaly with interstitial pulmonary edema."),
    ("XR CHEST 2 VIEWS", "Enlarged heart. Bilateral pleural effusions.",
     "Cardiomegaly with small bilateral effusions."),
    ("XR CHEST 2 VIEWS", "Patchy consolidation in the right lower lobe.", "Right lower lobe pneumonia."),
    ("CT CHEST W CONTRAST", "Filling defect in the right lower lobe pulmonary artery.", "Pulmonary embolism."),
    ("XR CHEST 1 VIEW", "Apical pleural line without lung markings.", "Right pneumothorax."),
]  # fmt: skip
STATUSES = ["F", "Final", "P", "Signed", "Corrected", "Addended"]


def write_ris_export(path: Path) -> Path:
    """Twelve studies, each report ending with one vendor's sign-off block."""
    blocks = list(SIGN_OFFS.values())
    with path.open("w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(RIS_HEADER)
        for n in range(12):
            exam, findings, impression = STUDIES[n % len(STUDIES)]
            text = f"FINDINGS:\n{findings} Case {n}.\n\nIMPRESSION:\n{impression}\n\n{blocks[n % len(blocks)]}\n"
            row = [f"A2026112{n:05d}", f"P{n}", "11/24/2026", "CR" if "XR" in exam else "CT", exam, "CHEST"]
            writer.writerow([*row, STATUSES[n % len(STATUSES)], text.replace("\n", "\r\n")])
    return path


def test_a_ris_export_gives_clean_sections_status_exam_and_body_part(tmp_path: Path) -> None:
    reports = [r for r in load_table(write_ris_export(tmp_path / "ris_export_20261124.csv")) if isinstance(r, Report)]
    assert len(reports) == 12
    for report in reports:
        assert report.impression in {s[2] for s in STUDIES}, report.impression
        assert "signed" not in report.findings.lower() and "dictated" not in report.findings.lower()
        assert "IMPRESSION" in report.full_text and "\r\n" in report.full_text  # the original kept whole
        assert report.body_part == "CHEST" and report.exam.startswith(("XR CHEST", "CT CHEST"))
        assert report.meta["date"] == "2026-11-24"
    first = reports[0]
    assert (first.status, first.meta["status_original"], first.exam) == ("final", "F", "XR CHEST 2 VIEWS")
    assert [r.status for r in reports[:6]] == ["final", "final", "preliminary", "final", "corrected", "addendum"]
    assert "Electronically Signed By" in first.full_text


def test_findings_and_impression_columns_lose_their_sign_offs_and_keep_an_addendum_column(tmp_path: Path) -> None:
    path = tmp_path / "columns.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(
            [
                ["Accession", "Findings", "Impression", "Addendum", "Exam Description", "Status"],
                ["X1", "Heart enlarged.", f"{READING}\nSigned by: Dr X", "Edema worse.\n/es/ DR X", "XR CHEST", "f"],
            ]
        )
    (report,) = load_table(path)
    assert isinstance(report, Report)
    assert (report.impression, report.addendum, report.status) == (READING, "Edema worse.", "final")
    assert (report.exam, report.modality) == ("XR CHEST", "XR")  # one description column: exam and modality
    assert "Signed by: Dr X" in report.full_text and report.meta["status_original"] == "f"


def test_status_exam_and_addendum_columns_can_be_mapped(tmp_path: Path) -> None:
    path = tmp_path / "site.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        header = ["Nr", "Bericht", "Befundstatus", "Untersuchung", "Nachtrag"]
        row = ["1", f"IMPRESSION: {READING}", "vorläufig", "Thorax pa", "Edema worse."]
        csv.writer(handle).writerows([header, row])
    mapping = ColumnMap.parse("id=Nr,text=Bericht,status=Befundstatus,exam=Untersuchung,addendum=Nachtrag")
    (report,) = load_table(path, mapping)
    assert isinstance(report, Report)
    assert (report.exam, report.addendum, report.status) == ("Thorax pa", "Edema worse.", "")
    assert report.meta["status_original"] == "vorläufig"  # a spelling not known is kept, not guessed


QUESTION = "Cardiomegaly with interstitial edema."
SIGN_OFF_WORDS = ("signed", "dictated", "transcribed", "attest", "verified", "finalized", "end of", "/es/")


@pytest.mark.models
def test_asking_an_index_of_a_signed_off_ris_export_never_offers_a_sign_off(tmp_path: Path, minilm) -> None:
    """Issue 48's acceptance: a RIS-style export whose reports end with sign-off lines, indexed with the CLI, asked
    "Cardiomegaly with interstitial edema.": no candidate and no diagnosis holds the sign-off."""
    out = tmp_path / "index"
    env = {**os.environ, "COLUMNS": "200"}

    def assistant(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "assistant.cli", *args]
        return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900, env=env)

    export = write_ris_export(tmp_path / "ris_export_20261124.csv")
    built = assistant("index", str(export), "--encoder", "minilm", "--out", str(out), "--keep-duplicate-findings")
    assert built.returncode == 0, built.stderr
    asked = assistant("ask", QUESTION, "--index", str(out), "--json", "--no-server")
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    candidates = [c["diagnosis"] for c in answer["evidence"]["candidates"]]
    assert candidates and "cardiomegaly" in " ".join(candidates).lower()
    offered = [answer["diagnosis"], *answer["differential"], *candidates]
    assert not [text for text in offered if any(word in text.lower() for word in SIGN_OFF_WORDS)], offered
