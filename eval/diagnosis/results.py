"""The diagnosis group's results files as typed, versioned records (eval/common/records.py).

eval.diagnosis.report writes a `DiagnosisResults` (eval/results/diagnosis*.json) and its readers (the report, the
choice of the answer configuration in eval.diagnosis.default, the build agreement, the model survey, the tests) read
one; the build agreement, the grader validation, the self-contradiction count, the model survey and the normal-study
reading have theirs.
Version 1 is every file written before the version was recorded; fields added since are optional, so older runs
(no differential recall, no power columns, no self-contradiction count) still read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eval.common.machine import Machine
from eval.common.records import Record, ResultsFile, Share, optional, rest
from eval.common.stats import wilson


# ------------------------------------------------------------------------------------------ the benchmark's run
@dataclass
class Cell(Record):
    """k of n correct with the share and its 95% Wilson interval, rounded for the file."""

    k: int
    n: int
    accuracy: float
    ci95: list[float]

    @classmethod
    def of(cls, k: int, n: int) -> Cell:
        p = wilson(k, n)
        return cls(k, n, round(p.value, 4), [round(p.low, 4), round(p.high, 4)])


@dataclass
class Verdict(Record):
    """One case under one condition (eval.diagnosis.report.grade_run); no case text, the data is not ours."""

    case_id: str
    source: str
    screening: bool
    prediction: str | None
    correct: bool
    criteria: dict[str, bool]
    matched_by: list[str]
    prediction_icd: str | None
    missing: bool
    degraded: str | None
    retrieved: list[str]
    own_report_retrieved: bool
    seconds: float | None
    #: Runs written before the differential was graded, the split recorded or answers checked lack these.
    in_differential: bool | None = optional()
    test_split: bool | None = optional()
    self_contradicted: bool | None = optional()
    #: The model was asked to choose among the evidence and its choice could not be read (parse mode `fallback`).
    fell_back: bool | None = optional()


@dataclass
class SourceTest(Record):
    """Accuracy between two independent sources (chi-square, Yates corrected)."""

    p: float
    method: str
    statistic: float | None = optional()


@dataclass
class ConditionSummary(Record):
    """One condition's accuracy overall, per grading criterion and per subset, and what its run cost."""

    overall: Cell
    criteria: dict[str, Cell]
    mean_seconds_per_case: float | None
    degraded: dict[str, int]
    own_report_retrieved: int
    differential_recall: Cell | None = optional()
    self_contradicted: int | None = optional()
    fell_back: int | None = optional()
    between_sources: SourceTest | None = optional()
    #: Accuracy per source, and over the never-screened and the test-split cases where the run has both kinds.
    subsets: dict[str, Cell] = rest()


@dataclass
class Comparison(Record):
    """McNemar between two conditions on the same cases, with the Bonferroni-adjusted p."""

    a: str
    b: str
    only_a_correct: int
    only_b_correct: int
    p: float
    p_bonferroni: float
    method: str


@dataclass
class Summary(Record):
    sources: list[str]
    accuracy: dict[str, ConditionSummary]
    mcnemar: list[Comparison]


@dataclass
class Target(Record):
    """The default condition against one baseline (eval.diagnosis.report.check_targets); `met` None: no bar."""

    baseline: str
    difference: float
    p: float
    needed_difference: float | None
    needed_p: float | None
    met: bool | None
    #: Runs written before the power columns lack both; `cases_needed` None then means no case count can show it.
    discordant: float | None = optional()
    cases_needed: int | None = optional()


@dataclass
class Ceiling(Cell):
    """The cases where the answer without retrieval or the top hit's impression is right."""

    no_retrieval: str
    top_hit: str


@dataclass
class RunMeta(Record):
    """How the run was made (eval.diagnosis.benchmark.main)."""

    command: str
    cases_file: str
    corpus: list[str]
    corpus_reports: int
    backend: str
    structured_output: str
    llm_threads: int
    encoders: dict[str, str]
    max_tokens: int
    field: str
    k: int
    prompt: str
    wall_seconds: float
    python: str
    #: The Ray cluster the model was asked on (runs before --ray lack it).
    ray: str | None = optional()


@dataclass
class DiagnosisResults(ResultsFile):
    """One run of the diagnosis benchmark (eval/results/<name>.json)."""

    KIND = "diagnosis results"

    name: str
    created: str
    model_id: str | None
    prompt_ids: list[str]
    n_cases: int
    cases_by_source: dict[str, int]
    conditions: list[str]
    meta: RunMeta
    plot: str
    summary: Summary
    #: Verdicts per condition, in case order.
    cases: dict[str, list[Verdict]]
    #: The product's default condition when the run has it, judged against `targets`; runs before lack all three.
    default_condition: str | None = optional()
    targets: list[Target] | None = optional()
    ceiling: Ceiling | None = optional()


# ----------------------------------------------------------------------------------- agreement between builds
@dataclass
class Counted(Share):
    """A share of cases with the count beside it (the report gives discordant counts)."""

    k: int


@dataclass
class BuildAgreementRow(Record):
    """One condition both runs have: accuracy under each build (by its label), McNemar between them, identical
    answers."""

    cases: int
    mcnemar_p: float
    only_first_right: int
    only_second_right: int
    identical_answers: Counted
    builds: dict[str, Counted] = rest()


@dataclass
class BuildAgreement(ResultsFile):
    """Two diagnosis runs that differ only in how llama.cpp was compiled (eval.diagnosis.build_agreement)."""

    KIND = "build agreement results"

    labels: list[str]
    model_id: str | None
    conditions: dict[str, BuildAgreementRow]
    #: Condition -> build label -> accuracy gain over no retrieval.
    gain_over_none: dict[str, dict[str, float]]
    created: str
    command: str


# ------------------------------------------------------------------------------------------ grader validation
@dataclass
class Agreement(Record):
    """One criterion's verdicts against hand labels (eval.diagnosis.grader_validation.agreement)."""

    accuracy: float
    ci95: list[float]
    kappa: float
    true_positive: int
    false_positive: int
    false_negative: int
    true_negative: int


@dataclass
class Disagreement(Record):
    prediction: str
    reference: str
    labelled: bool
    grader: bool
    matched_by: list[str]


@dataclass
class GraderValidation(ResultsFile):
    """The grader against hand-labelled (prediction, reference, correct?) pairs."""

    KIND = "grader validation results"

    pairs: int
    labelled_correct: int
    criteria: dict[str, Agreement]
    overall: Agreement
    disagreements: list[Disagreement]
    #: The command and the pairs file (runs before they were recorded lack them).
    command: str | None = optional()
    pairs_file: str | None = optional()


# ------------------------------------------------------------------------------- self-contradicted answers
@dataclass
class ContradictionCount(Record):
    cache: str
    condition: str
    answers: int
    self_contradicted: int
    by_source: dict[str, int]
    case_ids: list[str]


@dataclass
class SelfContradicted(ResultsFile):
    """Self-contradicted answers in committed prediction caches (eval.diagnosis.self_contradicted)."""

    KIND = "self-contradiction results"

    command: str
    rows: list[ContradictionCount]


# ---------------------------------------------------------------------------------------------- model survey
@dataclass
class ModelAccuracy(Record):
    """A model's accuracy from its diagnosis run on the screening cases (eval.diagnosis.llm_survey.model_accuracy)."""

    accuracy: float
    accuracy_alone: float
    seconds_per_answer: float | None
    condition: str
    cases: int
    results: str


@dataclass
class Verification(Record):
    """A full SHA-256 check and the GGUF header of an installed model (eval.diagnosis.llm_survey.verify)."""

    sha256: str
    size_bytes: int
    checked: str
    checksum_ok: bool
    header: dict[str, Any]


@dataclass
class Timing(Record):
    """One timed answer (eval.diagnosis.llm_survey.time_answer)."""

    measured: str
    threads: int
    load_s: float
    prompt_tokens: int
    prompt_tok_s: float
    completion_tokens: int
    gen_tok_s: float
    load_average_before: list[float]
    load_average_after: list[float]
    answer: str


@dataclass
class SurveyedModel(Record):
    """One package considered: the survey's facts (eval/datasets/llm_candidates.json) and, for a usable model (one
    with a `name`), its verification, speed and accuracy."""

    packages: str
    model: str
    verdict: str
    reason: str
    evidence: str
    name: str | None = optional()
    size_bytes: int | None = optional()
    #: Header facts recorded for a rejected download.
    recorded: dict[str, Any] | None = optional()
    model_id: str | None = optional()
    expected_sha256: str | None = optional()
    verification: Verification | None = optional()
    installed_here: bool | None = optional()
    #: One timed answer per thread count.
    speed: list[Timing] | None = optional()
    diagnosis: ModelAccuracy | None = optional()


@dataclass
class ModelSurvey(ResultsFile):
    """The offline chat-model table (eval/results/llm_models.json)."""

    KIND = "model survey results"

    surveyed: str
    method: str
    rendered: str
    machine: Machine
    models: list[SurveyedModel]


@dataclass
class StrengthCalibration(ResultsFile):
    """eval.diagnosis.strength: top-1 accuracy of the default answer by the strength it states."""

    KIND = "strength calibration results"

    name: str
    condition: str
    command: str
    n: int
    strong_from: float
    weak_below: float
    levels: dict[str, dict[str, Any]]
    plot: str
    cases: list[dict[str, Any]]
    #: Lead over the runner-up a strong answer also needs (docs/decisions/2026-11-29-strong-evidence.md).
    strong_lead: float = 0.0
    #: The same table over the test cases alone: the cut points were chosen on the dev ones.
    levels_test: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Accuracy of the answers that state that no similar report affirms what the question describes, and of the
    #: others ("stated" / "not stated"; docs/decisions/2026-11-29-what-no-similar-report-affirms.md).
    unaffirmed: dict[str, dict[str, Any]] | None = None


@dataclass
class RankingResults(ResultsFile):
    """eval.diagnosis.evidence_ranking: top-1 and recall@5 of the evidence under each ranking rule."""

    KIND = "evidence ranking results"

    cases: int
    condition: str
    split: str
    command: str
    product_rule: str
    #: rule -> [cases right at top-1, cases with the right diagnosis among the first 5]
    rules: dict[str, list[int]]
    #: Cases where near-duplicate reports (assistant/rag/near_duplicates.py) affirm a candidate.
    near_duplicate_cases: int


@dataclass
class DifferentialQuality(ResultsFile):
    """eval.diagnosis.differential_items: hand labels of a sample of the default answer's first five items."""

    KIND = "differential quality results"

    condition: str
    items_listed: int
    cases_listing_a_concept_twice: int
    labelled: int
    not_diagnoses: list[str]
    command: str


@dataclass
class Reading(Record):
    """One group of reports: normal and abnormal studies, and how many of each were read as purely negative."""

    normal: int
    normal_read_negative: int
    abnormal: int
    abnormal_read_negative: int
    #: Ids of the abnormal studies read as purely negative.
    false_negative_ids: list[str]
    #: Reports whose findings were read as describing no finding at all (answered "no finding described"), and their
    #: ids; absent in files written before that reading (docs/decisions/2026-11-29-questions-without-findings.md).
    read_no_finding: int | None = optional()
    no_finding_ids: list[str] | None = optional()


@dataclass
class NormalQuestions(ResultsFile):
    """eval.diagnosis.normal_questions: the question reader's verdicts on real findings, by source."""

    KIND = "normal question results"

    split: str
    overall: Reading
    by_source: dict[str, Reading]


@dataclass
class ModalityCounts(Record):
    """One group of reports with a modality field: how many its findings' words name a modality of, and how many of
    those readings contradict the field, read with every sentence (`before`) and without those that name another
    study (`now`)."""

    reports: int
    read_before: int
    read_now: int
    contradicted_before: int
    contradicted_now: int
    #: Ids whose reading stopped / started contradicting the field.
    fixed_ids: list[str]
    new_ids: list[str]


@dataclass
class ModalityReading(ResultsFile):
    """eval.diagnosis.modality_reading: the modality read from findings against each report's own field."""

    KIND = "modality reading results"

    split: str
    overall: ModalityCounts
    by_source: dict[str, ModalityCounts]


@dataclass
class OrganRule(Record):
    """One rule of a normal organ: the reports it rules the concept out for, and those whose impression affirms it."""

    concepts: list[str]
    applies: int
    contradicted: int
    contradicted_ids: list[str]


@dataclass
class NormalOrgans(ResultsFile):
    """eval.diagnosis.normal_organs: what a question's normal sentences rule out, against the reports' impressions."""

    KIND = "normal organ results"

    split: str
    reports: int
    rules: dict[str, OrganRule]


@dataclass
class ConclusionTrialResults(ResultsFile):
    """The trial of docs/decisions/2026-11-29-question-concludes.md (its script, eval/diagnosis/conclusion_trial.py,
    lives in the trial's commit c43d681): the evidence answer under each variant of what the question concludes."""

    KIND = "question conclusion trial results"

    cases: int
    condition: str
    split: str
    command: str
    #: variant -> {"top1", "first_five", "strong", "strong_right", "concluded_answers"} (counts of cases)
    variants: dict[str, dict[str, int]]


@dataclass
class EvidenceCoverage(ResultsFile):
    """eval.diagnosis.evidence_coverage: where the right diagnosis sits among the evidence's candidates, and the
    first five under each alternative (a place for the closest report, the model's own suggestions)."""

    KIND = "evidence coverage results"

    split: str
    condition: str
    cases: int
    #: source -> cases
    by_source: dict[str, int]
    #: place of the first right candidate ("1".."8", "none") -> cases
    right_candidate_at: dict[str, int]
    #: alternative -> source -> cases right at first place
    top1: dict[str, dict[str, int]]
    #: alternative -> source -> cases right among the first five
    first5: dict[str, dict[str, int]]
