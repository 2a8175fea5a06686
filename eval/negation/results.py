"""The negation group's results files as typed, versioned records (eval/common/records.py).

The encoder pair test (eval/results/negation.json), the real-sentence pairs (negation_real_pairs*.json), the
detectors compared (negation_detection.json) and the negated-hit rate of search (negated_hits.json) each write one;
their reports, the encoder choice (eval.training.encoder_choice reads the real dev pairs) and the tests read them.
Version 1 is every file written before the version was recorded.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from eval.common.records import Record, ResultsFile, optional, rest
from eval.diagnosis.results import Agreement
from retriever.negation.pairs import NegationPair


@dataclass
class Pair(Record):
    """An example pair (retriever.negation.pairs.NegationPair); the pairs themselves stay out of the repository."""

    query: str
    affirmed: str
    negated: str
    origin: str

    @classmethod
    def of(cls, pair: NegationPair) -> Pair:
        return cls(**asdict(pair))


# --------------------------------------------------------------------------------------- synthetic encoder pairs
@dataclass
class PairGap(Record):
    """One encoder on the pairs of one origin: mean Δcos and the share whose affirmed sentence is nearer."""

    encoder: str
    origin: str
    delta_cos: float
    affirmed_closer: float
    pairs: int


@dataclass
class EncoderPairs(ResultsFile):
    """eval.negation.encoder_pairs: Δcos on pairs whose other half is made by rule."""

    KIND = "negation pair results"

    created: str
    machine: str
    command: str
    results: list[PairGap]
    examples: dict[str, list[Pair]]


# ----------------------------------------------------------------------------------------------- real pairs
@dataclass
class FindingGap(Record):
    pairs: int
    delta_cos: float


@dataclass
class RealPairGap(Record):
    """One encoder on one pair set, with the 95% t interval of the mean (real sets also per finding)."""

    encoder: str
    pairs_from: str
    pairs: int
    delta_cos: float
    ci_low: float
    ci_high: float
    affirmed_closer: float
    by_finding: dict[str, FindingGap] | None = optional()


@dataclass
class RealPairsVerdict(Record):
    """Whether the default encoder reaches the target on the main real set (the rest absent when not measured)."""

    encoder: str
    measured: bool
    target: float | None = optional()
    delta_cos: float | None = optional()
    ci: list[float] | None = optional()
    meets_target: bool | None = optional()
    short_by: float | None = optional()


@dataclass
class SentenceCounts(Record):
    """Distinct sentences of one finding before matching."""

    affirmed: int
    negated: int


@dataclass
class RealPairs(ResultsFile):
    """eval.negation.real_pairs: Δcos on pairs of real report sentences."""

    KIND = "real negation pair results"

    created: str
    machine: str
    command: str
    seed: int
    target: float
    verdict: RealPairsVerdict
    results: list[RealPairGap]
    #: Pair set -> finding -> sentences found.
    candidates: dict[str, dict[str, SentenceCounts]]
    pairs_sha256: dict[str, str]
    examples: dict[str, list[Pair]]


# ------------------------------------------------------------------------------------------------ detection
@dataclass
class DetectionScores(Agreement):
    """Precision, recall and F1 of the positive class beside the agreement counts (eval.negation.detection.scores)."""

    n: int
    precision: float
    recall: float
    f1: float


@dataclass
class PairedTest(Record):
    """McNemar of a detector against the rules."""

    p: float
    only_rules_right: int
    only_this_right: int


@dataclass
class Disagreement(Record):
    """An example where the rules and ConText disagree."""

    concept: str
    text: str
    gold: str
    right: str


@dataclass
class NegexPart(Record):
    """(a) the NegEx annotated set: scores of "negated" per detector."""

    rows: int
    negated: int
    concept_not_found: int
    scores: dict[str, DetectionScores]
    best: str
    vs_rules: dict[str, PairedTest]
    disagreements: list[Disagreement]


@dataclass
class OpeniScores(Record):
    affirmed: DetectionScores
    negated_only: DetectionScores


@dataclass
class LeftOut(Record):
    reports_without_labels: int
    positive_not_mentioned: int
    negative_not_mentioned: int


@dataclass
class OpeniPart(Record):
    """(b) NegBio's Open-i labels: "affirmed" and "negated-only" per detector."""

    cases: int
    positive: int
    left_out: LeftOut
    scores: dict[str, OpeniScores]
    best: str
    vs_rules: dict[str, PairedTest]
    disagreements: list[Disagreement]


@dataclass
class LabelledScores(Record):
    """One detector on the hand-labelled sentences: over all rows and by split group, source, kind and form (the
    list and colon forms of issue 50; the earlier rows have none)."""

    all: DetectionScores
    split: dict[str, DetectionScores]
    source: dict[str, DetectionScores]
    kind: dict[str, DetectionScores]
    form: dict[str, DetectionScores] = field(default_factory=dict)


@dataclass
class RulesBefore(Record):
    """The rules before real phrasing was added, as measured then (eval.negation.labelled.RULES_BEFORE)."""

    n: int
    precision: float
    recall: float
    true_positive: int
    false_positive: int
    false_negative: int


@dataclass
class LabelledError(Record):
    """A wrong verdict of the rules on a train + dev row; `where` names the report unless its licence allows text."""

    error: str
    gold: str
    kind: str
    source: str
    concept: str
    where: str


@dataclass
class LabelledPart(Record):
    """(c) hand-labelled real report sentences (eval.negation.labelled)."""

    rows: int
    ruled_out: int
    labels: dict[str, int]
    rows_per_split: dict[str, int]
    scores: dict[str, LabelledScores]
    errors: list[LabelledError]
    rules_before: dict[str, RulesBefore]
    best: str
    vs_rules: dict[str, PairedTest]


@dataclass
class Detection(ResultsFile):
    """eval.negation.detection: the project's rules against ConText and both combined."""

    KIND = "negation detection results"

    created: str
    machine: str
    versions: str
    command: str
    negex: NegexPart
    openi: OpeniPart
    labelled_skipped: str
    verdict: str
    unavailable: str
    labelled: LabelledPart | None = optional()


# ------------------------------------------------------------------------------------------ negated-hit rate
@dataclass
class HitRate(Record):
    """Mean negated-hit rate of a (kind, source) group of queries, by `@k`."""

    queries: int
    at: dict[str, float] = rest()


@dataclass
class SparseHits(Record):
    """What the summary does not hold (eval.negation.negated_hits.sparse): per detector the negated hits of each
    query that has any, as [rank, report id] by query number, and the queries that got fewer hits than the deepest
    k."""

    negated: dict[str, dict[str, list[list[int | str]]]]
    short: dict[str, int]


@dataclass
class MethodRates(Record):
    """One search method (and encoder) judged by every detector."""

    method: str
    encoder: str
    default: bool
    #: Detector -> `kind/source` -> rates.
    summary: dict[str, dict[str, HitRate]]
    per_query: SparseHits


@dataclass
class QueryInfo(Record):
    kind: str
    source: str
    finding: str
    text: str
    exclude: str


@dataclass
class NegatedHitExample(Record):
    encoder: str
    query: str
    finding: str
    hit: str
    says: str


@dataclass
class NegatedHits(ResultsFile):
    """eval.negation.negated_hits: how often search returns a report that rules out the query's finding."""

    KIND = "negated-hit results"

    created: str
    machine: str
    command: str
    field: str
    corpus_reports: int
    queries: dict[str, int]
    query_list: list[QueryInfo]
    detectors: list[str]
    default_method: str
    skipped_encoders: dict[str, str]
    seconds: dict[str, float]
    results: list[MethodRates]
    examples: list[NegatedHitExample]
    #: The default method's second stage (runs before it was searched with one lack it).
    second_stage: str | None = optional()
