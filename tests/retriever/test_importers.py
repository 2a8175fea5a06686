"""Every importer on fixture files the tests write, plus the bad inputs ingestion must survive."""

from __future__ import annotations

import csv
import json
from importlib.util import find_spec
from pathlib import Path

import pytest

from retriever.reports.ingest import Exclusions, ingest
from retriever.reports.record import Report
from retriever.reports.sources import ColumnMap, iter_corpus

KEEP_ALL = Exclusions(require_findings=False, require_impression=False, drop_duplicate_findings=False)


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def assert_accounted(result) -> None:
    assert result.records_in == len(result.reports) + len(result.rejections) + result.earlier.total()
    assert sum(k + r for k, r in result.by_source().values()) + result.earlier.total() == result.records_in


def test_openi_format_with_negbio_labels(tmp_path: Path) -> None:
    write_csv(
        tmp_path / "indiana_reports.csv",
        ["uid", "MeSH", "Problems", "image", "indication", "comparison", "findings", "impression"],
        [
            ["1", "normal", "normal", "Xray Chest PA and Lateral", "TB test", "None.", "Clear lungs.", "Normal."],
            ["2", "Cardiomegaly", "Cardiomegaly", "Chest 2 views", "", "", "Enlarged heart.", "Cardiomegaly."],
            ["3", "normal", "normal", "Chest", "", "", "", "No acute findings."],
        ],
    )
    write_csv(
        tmp_path / "negbio_labels14.csv",
        ["filename", "Cardiomegaly", "normal"],
        [["CXR1", "0", "1"], ["CXR2", "1", "0"], ["CXR3", "0", "1"]],
    )
    result = ingest([str(tmp_path / "indiana_reports.csv")])
    assert [r.id for r in result.reports] == ["openi:1", "openi:2"]
    second = result.reports[1]
    assert second.labels == ("Cardiomegaly",) and second.modality == "XR" and second.source == "openi"
    assert "FINDINGS: Enlarged heart." in second.full_text
    assert [(r.ref, r.reason) for r in result.rejections] == [("openi:3", "missing findings")]
    assert_accounted(result)


def test_ctrate_keeps_one_report_per_study(tmp_path: Path) -> None:
    header = ["VolumeName", "ClinicalInformation_EN", "Technique_EN", "Findings_EN", "Impressions_EN"]
    write_csv(
        tmp_path / "validation_reports.csv",
        header,
        [
            ["valid_1_a_1.nii.gz", "Cough.", "Non-contrast.", "Nodule 4 mm.", "Lung nodule."],
            ["valid_1_a_2.nii.gz", "Cough.", "Non-contrast.", "Nodule 4 mm.", "Lung nodule."],
            ["valid_2_a_1.nii.gz", "Not given.", "Non-contrast.", "Emphysema.", "Emphysema."],
        ],
    )
    write_csv(
        tmp_path / "valid_predicted_labels.csv",
        ["VolumeName", "Lung nodule", "Emphysema"],
        [["valid_1_a_1.nii.gz", "1", "0"], ["valid_1_a_2.nii.gz", "1", "0"], ["valid_2_a_1.nii.gz", "0", "1"]],
    )
    result = ingest([str(tmp_path)])
    assert [r.id for r in result.reports] == ["ctrate:valid_1_a", "ctrate:valid_2_a"]
    assert result.reports[0].labels == ("Lung nodule",) and result.reports[0].modality == "CT"
    assert result.reasons() == {"another reconstruction of a study (same report)": 1}
    assert_accounted(result)


def test_mtsamples_parses_transcription_when_columns_empty(tmp_path: Path) -> None:
    write_csv(
        tmp_path / "mtsamples_imaging.csv",
        [
            "note_id",
            "medical_specialty",
            "sample_name",
            "description",
            "section_headers",
            "findings",
            "impression",
            "transcription",
            "modality",
        ],
        [
            [
                "7",
                "Radiology",
                "US Scrotum",
                "",
                "",
                "",
                "",
                "EXAM: , US.,FINDINGS: ,Small hydrocele.,IMPRESSION: , Hydrocele.",
                "US",
            ],
            ["8", "Radiology", "MRI Brain", "", "", "Normal brain.", "Normal.", "x", "MRI"],
        ],
    )
    result = ingest([str(tmp_path / "mtsamples_imaging.csv")])
    first, second = result.reports
    assert (first.findings, first.impression, first.modality) == ("Small hydrocele.", "Hydrocele.", "US")
    assert second.modality == "MR"


def test_medpix_uses_case_diagnosis_as_impression(tmp_path: Path) -> None:
    header = [
        "uid",
        "title",
        "history",
        "exam",
        "findings",
        "differential_diagnosis",
        "case_diagnosis",
        "diagnosis_by",
        "n_ct_images",
        "n_mr_images",
        "image_modalities",
        "location_category",
        "topic_category",
        "acr_code",
    ]
    write_csv(
        tmp_path / "medpix_cases.csv",
        header,
        [
            [
                "MPX1",
                "Bladder Diverticulum",
                "Hematuria",
                "N/A",
                "Outpouching of the bladder wall.",
                "Diverticulum",
                "Bladder Diverticulum",
                "N/A",
                "2",
                "0",
                "CT - noncontrast",
                "Reproductive and Urinary System",
                "Diverticulum",
                "8.9",
            ]
        ],
    )
    (report,) = ingest([str(tmp_path)]).reports
    assert report.impression == "Bladder Diverticulum" and report.modality == "CT"
    assert "Diverticulum" in report.labels


def test_generic_csv_with_mapping_quoted_newlines_extra_and_empty_rows(tmp_path: Path) -> None:
    path = tmp_path / "site.csv"
    path.write_text(
        "Accession,Befund,Beurteilung,Extra\n"
        'A1,"Pleural effusion\non the left.",Effusion.,x\n'
        ",,,\n"
        "A2,Normal heart.,Normal.,y,unexpected-cell\n"
        "A1,Next version row.,Dup.,z\n",
        encoding="utf-8",
    )
    result = ingest([str(path)], KEEP_ALL, ColumnMap.parse("id=Accession,findings=Befund,impression=Beurteilung"))
    assert [r.id for r in result.reports] == ["site:A1"]
    # a later row of the same accession is the study's next version (issue 50); the first is kept in the history
    assert result.reports[0].findings == "Next version row."
    assert [r.findings for r in result.history] == ["Pleural effusion on the left."]
    assert result.reasons() == {
        "empty record (no findings, impression or report text)": 1,
        "row has more cells than the header": 1,  # rejected, never cut: the cells could be shifted
    }
    assert [r.ref for r in result.rejections][:2] == [f"{path}:4", f"{path}:5"]  # line each record starts on
    assert_accounted(result)


def test_csv_missing_columns_rejects_every_row_with_reason(tmp_path: Path) -> None:
    write_csv(tmp_path / "bad.csv", ["name", "age"], [["a", "1"], ["b", "2"]])
    result = ingest([str(tmp_path / "bad.csv")])
    assert not result.reports and len(result.rejections) == 2
    assert result.rejections[0].reason.startswith("missing columns")
    assert "name, age" in result.rejections[0].detail


def test_mapping_to_absent_column_is_reported() -> None:
    with pytest.raises(ValueError, match="unknown field"):
        ColumnMap.parse("diagnosis=X")
    with pytest.raises(ValueError, match="FIELD=COLUMN"):
        ColumnMap.parse("findings")


def test_jsonl_with_invalid_lines(tmp_path: Path) -> None:
    path = tmp_path / "reports.jsonl"
    lines = [
        json.dumps({"id": "r1", "text": "FINDINGS: Nodule.\nIMPRESSION: Granuloma."}),
        "{not json",
        "[1, 2]",
        json.dumps({"id": "r2", "findings": "Edema.", "impression": "CHF.", "labels": "edema;chf"}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = ingest([str(path)])
    assert [r.id for r in result.reports] == ["reports:r1", "reports:r2"]
    assert result.reports[0].impression == "Granuloma."
    assert result.reports[1].labels == ("chf", "edema")
    assert len(result.rejections) == 2 and result.rejections[0].reason.startswith("invalid JSON")


def test_text_folder_with_non_utf8_and_binary_files(tmp_path: Path) -> None:
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "a.txt").write_text("FINDINGS: Small effusion.\nIMPRESSION: Effusion.", encoding="utf-8")
    (folder / "b.txt").write_bytes("FINDINGS: Kein Erguss, Lunge bel\xfcftet.\nIMPRESSION: Normal.".encode("cp1252"))
    (folder / "scan.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (folder / "notes.pdf").write_bytes(b"%PDF-1.4")
    (folder / "empty.txt").write_text("   \n", encoding="utf-8")
    result = ingest([str(folder)])
    assert sorted(r.id for r in result.reports) == ["site:a", "site:b"]
    german = next(r for r in result.reports if r.id == "site:b")
    assert "belüftet" in german.findings and german.meta["encoding"] == "cp1252"
    reasons = {Path(r.ref).name: r.reason for r in result.rejections}
    assert reasons["scan.txt"].startswith("binary file")
    assert reasons["notes.pdf"].startswith("unsupported file type")
    assert reasons["empty.txt"] == "empty file"
    assert_accounted(result)


def test_exclusions_follow_the_paper_by_default(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    rows = [
        {"id": "1", "findings": "Clear lungs.", "impression": "Normal."},
        {"id": "2", "findings": "clear  lungs", "impression": "Normal chest."},
        {"id": "3", "findings": "", "impression": "Normal."},
        {"id": "4", "findings": "Effusion.", "impression": ""},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    strict = ingest([str(path)])
    assert [r.id for r in strict.reports] == ["r:1"]
    assert strict.reasons() == {"duplicate findings": 1, "missing findings": 1, "missing impression": 1}
    assert len(ingest([str(path)], KEEP_ALL).reports) == 4


def test_missing_path_is_a_rejection_not_a_crash() -> None:
    (rejection,) = list(iter_corpus("/nonexistent/folder"))
    assert "no such file" in rejection.reason


def test_demo_corpus_is_the_shipped_mtsamples_reports() -> None:
    outcomes = list(iter_corpus("demo"))
    reports = [o for o in outcomes if isinstance(o, Report)]
    assert len(outcomes) == 306 and len(reports) > 290
    assert all(r.source == "mtsamples" for r in reports)
    assert {"CT", "MR", "US", "XR"} <= {r.modality for r in reports}
    assert sum(bool(r.findings and r.impression) for r in reports) >= 100


def test_radlabels_corpus_from_package() -> None:
    if find_spec("radlabels") is None:
        pytest.skip("radlabels package not installed")
    outcomes = list(iter_corpus("radlabels"))
    reports = [o for o in outcomes if isinstance(o, Report)]
    assert len(outcomes) == 1000 and len(reports) == 1000
    assert all(r.modality == "XR" and r.source == "radlabels" for r in reports)
    assert sum(bool(r.impression) for r in reports) > 300


def test_shared_data_counts_add_up(shared_data: Path) -> None:
    corpora = [str(shared_data / name) for name in ("openi", "ctrate", "mtsamples", "medpix")]
    result = ingest(corpora)
    assert_accounted(result)
    kept = {s: k for s, (k, _) in result.by_source().items()}
    assert kept["openi"] > 1500 and kept["ctrate"] > 250 and kept["medpix"] > 400 and kept["mtsamples"] > 80


def test_dicom_modality_codes_are_normalised_and_the_original_kept(tmp_path: Path) -> None:
    """Issue 39: a RIS export's `CR` became `OT`, so neither `--modality CR` nor `--modality XR` found the report."""
    from retriever.index.report_index import SearchFilters
    from retriever.reports.sources.base import normalize_modality

    path = tmp_path / "ris.csv"
    rows = ["id,findings,impression,modality"] + [
        f"{n},Finding {n}.,Impression {n}.,{code}" for n, code in enumerate(["CR", "DX", "dr", "PT", "RF", "XA", "MR"])
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    reports = ingest([str(path)], KEEP_ALL).reports
    assert [r.modality for r in reports] == ["XR", "XR", "XR", "NM", "FL", "FL", "MR"]
    assert [r.meta.get("modality_original") for r in reports] == ["CR", "DX", "dr", "PT", "RF", "XA", None]
    assert normalize_modality("CT w/contrast (IV)") == "CT" and normalize_modality("Xray Chest PA") == "XR"
    assert SearchFilters(modality="CR").modality == SearchFilters(modality="X-ray").modality == "XR"


def test_a_column_named_twice_keeps_the_text_of_both(tmp_path: Path) -> None:
    """Issue 39: `id,findings,impression,findings` let the last column win, so a report with findings in the first
    was rejected for having none."""
    path = write_csv(
        tmp_path / "dup.csv",
        ["id", "findings", "impression", "findings"],
        [["1", "Left effusion.", "Effusion.", ""], ["2", "Right consolidation.", "Pneumonia.", "Air bronchograms."]],
    )
    reports = {r.id: r for r in iter_corpus(str(path)) if isinstance(r, Report)}
    assert reports["dup:1"].findings == "Left effusion."
    assert reports["dup:2"].findings == "Right consolidation. Air bronchograms."


def test_one_windows_1252_row_in_a_utf8_csv_is_decoded_alone_and_recorded(tmp_path: Path) -> None:
    """Issue 39: one cp1252 byte turned the whole UTF-8 file into mojibake (`CafÃ©`), and nothing said so."""
    path = tmp_path / "mixed.csv"
    utf8 = "id,findings,impression\n1,Café-au-lait spot; small effusion.,Effusion.\n".encode()
    path.write_bytes(utf8 + "2,Kein Erguss, belüftet.,Normal.\n".replace(", b", " b").encode("cp1252"))
    reports = {r.id: r for r in iter_corpus(str(path)) if isinstance(r, Report)}
    assert reports["mixed:1"].findings.startswith("Café-au-lait") and "encoding" not in reports["mixed:1"].meta
    assert reports["mixed:2"].findings == "Kein Erguss belüftet." and reports["mixed:2"].meta["encoding"] == "cp1252"


def test_an_id_with_a_line_break_is_rejected_with_the_reason(tmp_path: Path) -> None:
    """Issue 39: such an id was indexed and could never be removed (`--remove` reads one id a line)."""
    path = write_csv(tmp_path / "ids.csv", ["id", "findings", "impression"], [["x\ny", "Effusion.", "Effusion."]])
    result = ingest([str(path)], KEEP_ALL)
    assert not result.reports and result.rejections[0].reason == "id with a line break or control character"


def test_rows_without_an_id_never_take_a_real_id_of_the_file(tmp_path: Path) -> None:
    """Issue 39: a row without an id got `STEM-LINE`, which a real id of the same file could be, so one of the two
    was rejected as a duplicate."""
    path = write_csv(
        tmp_path / "noid.csv", ["id", "findings", "impression"], [["", "Alpha.", "A."], ["noid-2", "Beta.", "B."]]
    )
    result = ingest([str(path)], KEEP_ALL)
    assert not result.rejections
    assert sorted(r.id for r in result.reports) == ["noid:noid-2", "noid:noid-2-2"]


def test_a_table_cell_longer_than_any_report_is_rejected_like_a_text_file(tmp_path: Path) -> None:
    """Issue 39: a 5 MB CSV cell was indexed whole, where a text file over 50,000 characters is rejected."""
    long = "Effusion. " * 6_000  # 60,000 characters
    path = write_csv(tmp_path / "big.csv", ["id", "findings", "impression"], [["1", long, "Effusion."]])
    result = ingest([str(path)], KEEP_ALL)
    assert not result.reports and result.rejections[0].reason == "report too long (> 50000 characters)"
