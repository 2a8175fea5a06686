"""Every committed results file reads through its typed record and writes back the same (eval/common/records.py).

Why: the records are the files' only stated shape. A committed file with no record, or with a key its record does
not know (a renamed field, a key a writer added without declaring it), fails here, so a result kind cannot be added
or changed untyped and an old file cannot stop loading unnoticed.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from eval.common.records import Record, ResultsFile, key, optional, rest
from eval.common.shared_data import RESULTS
from eval.concepts.results import AnnotatorAgreement, LinkerResults, TermListProbe
from eval.diagnosis.results import (
    BuildAgreement,
    ConclusionTrialResults,
    DiagnosisResults,
    DifferentialQuality,
    EvidenceCoverage,
    GraderValidation,
    ModalityReading,
    ModelSurvey,
    NormalOrgans,
    NormalQuestions,
    RankingResults,
    SelfContradicted,
    StrengthCalibration,
)
from eval.negation.results import Detection, EncoderPairs, NegatedHits, RealPairs
from eval.perf.results import PerformanceResults
from eval.perf.st_onnx import StOnnx
from eval.retrieval.fusion_sweep import FusionSweep
from eval.retrieval.results import RetrievalResults
from eval.robustness.results import ExpansionResults, RerankResults, RobustnessResults, SetAsideResults
from eval.training.encoder_choice import EncoderChoice
from eval.training.results import EncoderRebuild, TrainingResults

#: File name pattern -> the record it reads through; the first match wins.
KINDS: dict[str, type[ResultsFile]] = {
    "diagnosis_build_agreement.json": BuildAgreement,
    "diagnosis_strength.json": StrengthCalibration,
    "evidence_ranking*.json": RankingResults,
    "evidence_coverage_*.json": EvidenceCoverage,
    "question_concludes_*.json": ConclusionTrialResults,
    "differential_quality.json": DifferentialQuality,
    "diagnosis*.json": DiagnosisResults,
    "grader_validation.json": GraderValidation,
    "self_contradicted.json": SelfContradicted,
    "llm_models.json": ModelSurvey,
    "normal_questions_*.json": NormalQuestions,
    "modality_reading_*.json": ModalityReading,
    "normal_organs_*.json": NormalOrgans,
    "negation.json": EncoderPairs,
    "negation_detection.json": Detection,
    "concept_linker*.json": LinkerResults,
    "concept_annotator_agreement.json": AnnotatorAgreement,
    "term_list_probe.json": TermListProbe,
    "negation_real_pairs*.json": RealPairs,
    "negated_hits.json": NegatedHits,
    "robustness*.json": RobustnessResults,
    "injection_set_aside.json": SetAsideResults,
    "abbreviation_expansion_dev.json": ExpansionResults,
    "rerank_*.json": RerankResults,
    "support_*.json": RerankResults,
    "training.json": TrainingResults,
    "encoder_choice_dev.json": EncoderChoice,
    "encoder_rebuild.json": EncoderRebuild,
    "fusion_sweep*.json": FusionSweep,
    "performance.json": PerformanceResults,
    "ingest.json": PerformanceResults,
    "ray_build.json": PerformanceResults,
    "index_throughput.json": PerformanceResults,
    "st_onnx.json": StOnnx,
    "retrieval.json": RetrievalResults,
    "retrieval_*.json": RetrievalResults,
}
COMMITTED = sorted(RESULTS.glob("*.json"))


def record_of(path: Path) -> type[ResultsFile]:
    """The record type of a results file, by its name."""
    found = next((kind for pattern, kind in KINDS.items() if fnmatch.fnmatch(path.name, pattern)), None)
    if found is None:
        raise LookupError(f"{path.name} has no record: declare one and add it to KINDS")
    return found


def _present(value: Any) -> Any:
    """JSON with the keys whose value is null left out: an optional field writes None as absent."""
    if isinstance(value, dict):
        return {k: _present(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_present(v) for v in value]
    return value


def differences(read: Any, written: Any, where: str = "") -> list[str]:
    """Paths at which `written` (a record's JSON) differs from `read` (the file's), nulls as absent."""
    read, written = _present(read), _present(written)
    if isinstance(read, dict) and isinstance(written, dict):
        lost = [f"{where}/{k}: not written back" for k in read if k not in written]
        added = [f"{where}/{k}: not in the file" for k in written if k not in read]
        common = [d for k in read if k in written for d in differences(read[k], written[k], f"{where}/{k}")]
        return lost + added + common
    if isinstance(read, list) and isinstance(written, list) and len(read) == len(written):
        pairs = enumerate(zip(read, written, strict=True))
        return [d for n, (a, b) in pairs for d in differences(a, b, f"{where}/{n}")]
    return [] if read == written else [f"{where}: {str(read)[:80]} became {str(written)[:80]}"]


def round_trip(kind: type[ResultsFile], data: dict[str, Any]) -> list[str]:
    """Where the record's JSON of `data` differs from `data` (brought to the current version)."""
    expected = {**kind.upgrade(data, data.get("schema_version", 1)), "schema_version": kind.SCHEMA_VERSION}
    return differences(expected, kind.from_json(data).to_json())


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_every_committed_results_file_reads_through_its_record_and_writes_back_the_same(path: Path) -> None:
    kind = record_of(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert round_trip(kind, data) == []
    assert next(iter(kind.from_json(data).to_json())) == "schema_version"


def test_there_are_committed_results_files() -> None:
    assert len(COMMITTED) > 40


@dataclass
class _Run(ResultsFile):
    KIND = "demo results"

    accuracy: float
    note: str | None = optional()


@dataclass
class _Renamed(ResultsFile):
    """_Run with `note` renamed to `remark`, as a careless edit would."""

    KIND = "demo results"

    accuracy: float
    remark: str | None = optional()


def test_a_renamed_field_is_caught() -> None:
    data = {"accuracy": 0.5, "note": "kept"}
    assert round_trip(_Run, data) == []
    assert round_trip(_Renamed, data) == ["/note: not written back"]
    with pytest.raises(ValueError, match="_Run: missing accuracy"):  # a required one cannot even be read
        _Run.from_json({"acc": 0.5})


def test_an_unknown_file_name_has_no_record() -> None:
    with pytest.raises(LookupError, match="no record"):
        record_of(Path("brand_new_kind.json"))


def test_a_newer_schema_version_is_refused_with_a_message() -> None:
    with pytest.raises(ValueError, match=r"demo results schema 2: this checkout reads versions 1 to 1 \(a newer"):
        _Run.from_json({"schema_version": 2, "accuracy": 0.5})
    for kind in {kind for kind in KINDS.values()}:
        with pytest.raises(ValueError, match=f"reads versions 1 to {kind.SCHEMA_VERSION}"):
            kind.from_json({"schema_version": kind.SCHEMA_VERSION + 1})


def test_provenance_is_kept_and_written_last() -> None:
    run = _Run.from_json({"accuracy": 0.5, "provenance": {"commit": "abc"}})
    assert run.provenance == {"commit": "abc"}
    assert list(run.to_json()) == ["schema_version", "accuracy", "provenance"]


@dataclass
class _Part(Record):
    value: int = key("value@1")


@dataclass
class _Whole(ResultsFile):
    parts: dict[str, list[_Part]]


def test_nested_records_and_json_keys_round_trip() -> None:
    whole = _Whole.from_json({"parts": {"a": [{"value@1": 1}]}})
    assert whole.parts["a"][0].value == 1 and whole.to_json()["parts"] == {"a": [{"value@1": 1}]}


@dataclass
class _PerSource(Record):
    overall: int
    sources: dict[str, _Part] = rest()


def test_a_rest_field_holds_the_keys_the_data_names() -> None:
    data = {"overall": 3, "openi": {"value@1": 1}, "ctrate": {"value@1": 2}}
    part = _PerSource.from_json(data)
    assert part.sources == {"openi": _Part(1), "ctrate": _Part(2)} and part.to_json() == data
