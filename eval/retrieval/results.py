"""The retrieval benchmark's results file (eval/results/retrieval.json) as typed, versioned records.

eval.retrieval.benchmark writes a `RetrievalResults` and every reader (its report, the target check, the choice of
the default, `--reuse`, the tests) reads one, so the file's shape is stated here once instead of in the code that
happens to index into it. Metric values stay named as in the literature (`match@5`, `mrr@10`, `map@100`, `p@10`):
they are the JSON keys; the Python names spell them out.

Versions: 1 = files written before the version was recorded (no `schema_version`, no `encoder_backend`: every such
run encoded with torch); 2 adds both. Reading takes any version up to SCHEMA_VERSION and ignores keys it does not
know; a newer file is refused with a message (eval/common/records.py, shared by every results kind).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eval.common.records import Record, ResultsFile, key, optional

SCHEMA_VERSION = 2
#: Encoder backend of every run before the version was recorded (eval.retrieval.findings_impression.make_ranker's
#: default then).
VERSION_1_BACKEND = "torch"
#: A set's findings -> impression metrics (eval.retrieval.findings_impression.summarize): n, match@1/5/10, mrr@10.
Metrics = dict[str, float]


# ------------------------------------------------------------------------------------------------- per ranker
@dataclass
class MatchQueries(Record):
    """Per query of a set, in the same order for every ranker: report id, rank of its own impression (None: not in
    the top 10) and whether the report is abnormal; for paired tests between rankers (McNemar)."""

    id: list[str]
    rank: list[int | None]
    abnormal: list[bool]


@dataclass
class MatchScores(Record):
    """Findings -> impression on one set of reports (eval.retrieval.findings_impression.findings_to_impression)."""

    ranker: str
    corpus_impressions: int
    all: Metrics
    without_top20_impressions: Metrics
    abnormal: Metrics
    per_query: MatchQueries | None = optional()

    def subset(self, name: str) -> Metrics:
        """The metrics of a subset by its JSON name (eval.retrieval.benchmark.SUBSETS)."""
        return {
            "all": self.all,
            "without_top20_impressions": self.without_top20_impressions,
            "abnormal": self.abnormal,
        }[name]


@dataclass
class LabelQueries(Record):
    """Per scored query: report id and its P@10, for paired permutation tests."""

    id: list[str]
    p_at_10: list[float] = key("p@10")


@dataclass
class LabelScores(Record):
    """One label kind on one set (eval.retrieval.label_metrics.label_retrieval)."""

    queries: int
    map_at_100: float = key("map@100")
    p_at_10: float = key("p@10")
    per_query: LabelQueries | None = optional()


@dataclass
class FreeTextScores(Record):
    """Free-text queries of a BEIR folder (eval.retrieval.beir.evaluate at depth 10)."""

    queries: int
    p_at_10: float = key("p@10")
    ndcg_at_10: float = key("ndcg@10")
    mrr_at_10: float = key("mrr@10")


@dataclass
class RankerResult(Record):
    """Every metric of one ranker: findings -> impression by set (each source, `overall`), label retrieval by set
    (`pooled`, each source) and kind, free-text queries when a BEIR folder was given."""

    findings_to_impression: dict[str, MatchScores]
    labels: dict[str, dict[str, LabelScores]]
    free_text: FreeTextScores | None = optional()
    #: When the result was taken from an earlier run (`--reuse`, `--reuse-missing`): that run's date.
    reused_from: str | None = optional()

    def pooled(self) -> MatchScores:
        """Findings -> impression over all reports: `overall`, or the only set when there is one source."""
        return self.findings_to_impression.get("overall") or next(iter(self.findings_to_impression.values()))


# ------------------------------------------------------------------------------------------ the verdicts
@dataclass
class TargetRow(Record):
    """One comparison of the default retriever with a rival; `p` is the paired two-sided test (None without
    per-query results)."""

    metric: str
    set_name: str = key("set")
    rival: str
    default_score: float = key("default")
    rival_score: float
    n: int
    passed: bool = key("pass")
    p: float | None


@dataclass
class Targets(Record):
    default: str
    rows: list[TargetRow]
    all_pass: bool


@dataclass
class Candidate(Record):
    ranker: str
    passed: int
    rows: int
    match_at_5: float = key("match@5")
    mrr_at_10: float = key("mrr@10")


@dataclass
class Choice(Record):
    """The default retriever chosen by eval.retrieval.benchmark.choose_default, and every candidate's standing."""

    best: str | None
    candidates: list[Candidate]


# ------------------------------------------------------------------------------------------------- the file
@dataclass
class RetrievalResults(ResultsFile):
    """One run of the retrieval benchmark (eval/results/<name>.json)."""

    SCHEMA_VERSION = SCHEMA_VERSION
    KIND = "retrieval results"

    name: str
    created: str
    command: str
    split: str
    #: Reports evaluated per source.
    reports: dict[str, int]
    queries_folder: str
    encoder_backend: str
    rankers: dict[str, RankerResult]
    missing: list[str] = field(default_factory=list)
    product_default: str | None = optional()
    choice: Choice | None = optional()
    targets: Targets | None = optional()
    plot: str | None = optional()

    @classmethod
    def upgrade(cls, data: dict[str, Any], version: int) -> dict[str, Any]:
        return {**data, "encoder_backend": VERSION_1_BACKEND} if version == 1 else data
