"""The robustness group's results files as typed, versioned records (eval/common/records.py).

The robustness parts (eval.robustness: ICD-10-CM rephrasings, query variants, error discrimination) write
`RobustnessResults` (eval/results/robustness*.json), the expansion rules chosen on dev `ExpansionResults`
(abbreviation_expansion_dev.json), the second-stage comparisons `RerankResults` (rerank_*.json, support_*.json);
their reports, the choice of the default encoder (eval.training.encoder_choice) and the tests read them. The scores
of one ranker on a part are the same records wherever they appear. Version 1 is every file written before the
version was recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eval.common.records import Record, ResultsFile, Share, key, optional, rest
from eval.retrieval.results import MatchScores


# ------------------------------------------------------------------------------------- one ranker's scores
@dataclass
class CodeScores(Record):
    """Exact code and same category at rank 1, and the mean character error rate (eval.robustness.metrics)."""

    exact_at_1: Share = key("exact@1")
    category_at_1: Share = key("category@1")
    cer: float


@dataclass
class IcdScores(CodeScores):
    """One ranker on the ICD-10-CM rephrasings, over all and over those made by rules alone."""

    ranker: str
    queries: int
    rules_only: CodeScores


@dataclass
class VariantScores(Record):
    """Findings -> impression with the queries of one variant: match@k, MRR@10 and what changed from clean."""

    n: int
    match_at_1: float = key("match@1")
    match_at_5: float = key("match@5")
    match_at_10: float = key("match@10")
    mrr_at_10: float = key("mrr@10")
    changed: int
    drop_at_5: float = key("drop@5")
    #: McNemar of hit@5 against clean (None for clean itself).
    p_vs_clean_at_5: float | None = key("p_vs_clean@5")


@dataclass
class QueryScores(Record):
    """One ranker on the query variants (eval.robustness.queries.evaluate), by variant name."""

    ranker: str
    corpus_impressions: int
    variants: dict[str, VariantScores] = rest()


@dataclass
class ErrorScores(Record):
    """One ranker's 4-way error discrimination over all items and by error type."""

    ranker: str
    all: Share
    by_type: dict[str, Share] = rest()


# ------------------------------------------------------------------------------------------ the parts
@dataclass
class IcdSet(Record):
    """What the ICD-10-CM query set is (eval.robustness.icd.describe_set)."""

    codes: int
    per_code: int
    queries: int
    rules_only: int
    corpus: int
    published_exact_at_1: dict[str, float] = key("published_exact@1")


@dataclass
class QuerySet(Record):
    """Findings queries and, per variant, how many it changed."""

    queries: int
    changed: dict[str, int]


@dataclass
class ErrorSet(Record):
    """Reports and the error items made of them, per error type."""

    reports: int
    items: dict[str, int]


@dataclass
class IcdPart(Record):
    rankers: dict[str, IcdScores]
    dataset: IcdSet = key("set")
    command: str
    load: str


@dataclass
class QueriesPart(Record):
    rankers: dict[str, QueryScores]
    dataset: QuerySet = key("set")
    command: str
    load: str


@dataclass
class ErrorsPart(Record):
    rankers: dict[str, ErrorScores]
    dataset: ErrorSet = key("set")
    command: str
    load: str


Part = IcdPart | QueriesPart | ErrorsPart


@dataclass
class RobustnessResults(ResultsFile):
    """The robustness parts run so far on one split (each run adds its rankers to the file)."""

    KIND = "robustness results"

    name: str
    created: str
    command: str
    load: str
    #: Files before --split were all of the test split.
    split: str = "test"
    icd: IcdPart | None = optional()
    queries: QueriesPart | None = optional()
    errors: ErrorsPart | None = optional()


# ------------------------------------------------------------------------------- expansion rules on dev
@dataclass
class ExpansionResults(ResultsFile):
    """The default ranker with each query-side expander on the dev split (eval.robustness.expansion_dev)."""

    KIND = "abbreviation expansion results"

    name: str
    created: str
    command: str
    load: str
    split: str
    ranker: str
    queries: int
    corpus: int
    expanders: dict[str, QueryScores]


# ---------------------------------------------------------------------------------------- second stages
@dataclass
class RerankSide(Record):
    """Every measure of one side (without the second stage, or with it at one weight)."""

    #: Findings -> impression per source and `pooled` (with per-query ranks).
    retrieval: dict[str, MatchScores]
    errors: ErrorScores
    icd: IcdScores
    queries: QueryScores


@dataclass
class RerankDecision(Record):
    """The dev rule's checks per side, and the side chosen (eval.robustness.rerank_benchmark.decide)."""

    checks: dict[str, dict[str, bool]]
    adopt: bool
    chosen: str | None


@dataclass
class RerankResults(ResultsFile):
    """The product default without and with a second stage at each weight (eval.robustness.rerank_benchmark);
    the sides are stored under their labels beside the other keys."""

    KIND = "second-stage results"

    name: str
    created: str
    command: str
    split: str
    reranker: str
    #: The trained re-ranker's model card, or what identifies the support check's code.
    card: dict[str, Any]
    #: Side label -> the ranker reference it measured.
    refs: dict[str, str]
    reports: int
    items: int
    load: str
    #: Word-count percentiles of the train-split findings (runs before gates lack them).
    train_query_words: dict[str, int] | None = optional()
    decision: RerankDecision | None = optional()
    sides: dict[str, RerankSide] = rest()


@dataclass
class SetAsideResults(ResultsFile):
    """eval.robustness.set_aside: how many real reports the injection judgement sets aside (it should be none)."""

    KIND = "injection set-aside results"

    reports: int
    set_aside: int
    rate: float
    by_source: dict[str, int]
    flagged: list[Any]
