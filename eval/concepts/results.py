"""The concept linker's results file as a typed, versioned record (eval/common/records.py): what
eval.concepts.linker_benchmark writes (eval/results/concept_linker*.json) and the tests read back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eval.common.records import Record, ResultsFile, optional


@dataclass
class LinkerScores(Record):
    """Pooled (item, concept) pairs of one group of items, with the items linked wrongly."""

    items: int
    gold_pairs: int
    predicted_pairs: int
    correct_pairs: int
    precision: float
    recall: float
    errors: list[dict[str, Any]] = optional()


@dataclass
class LinkerResults(ResultsFile):
    """eval.concepts.linker_benchmark: the linker against hand labels, overall and by source."""

    KIND = "concept linker results"

    split: str
    definition: str
    targets: dict[str, float]
    overall: LinkerScores
    by_source: dict[str, LinkerScores]
    #: Whose labels were the gold ("first", "second", "final"); absent in files written before there was a choice.
    gold: str | None = optional()


@dataclass
class TermListProbe(ResultsFile):
    """eval.concepts.term_list_probe: how the linker reads each term of a list of radiology terms."""

    KIND = "term list probe results"

    terms: int
    #: Terms the linker reads as the concept of their own name.
    own_name: int
    #: Every other term -> the concept names the linker reads in it (alone).
    others: dict[str, list[str]]
    command: str


@dataclass
class AgreementScores(Record):
    """Two readings' pooled (item, concept) pairs: the second scored against the first."""

    items: int
    #: Items whose two readings name the same concepts.
    same_items: int
    first_pairs: int
    second_pairs: int
    agreed_pairs: int
    precision: float | None
    recall: float | None
    #: Of the items the readings differ on, how many final labels are the first reading, the second, or neither.
    adjudicated_as: dict[str, int] | None = optional()
    #: Each reading scored against the final labels: {"first": {"precision", "recall"}, "second": {...}}. The second
    #: shaped most adjudications, so the first's score is the nearer to an independent reader's.
    against_final: dict[str, dict[str, float]] | None = optional()


@dataclass
class AnnotatorAgreement(ResultsFile):
    """eval.concepts.agreement: how far two blind hand readings of the linker's items agree."""

    KIND = "annotator agreement results"

    definition: str
    #: "all", "<split>", "<split> <source>" -> the agreement of those items.
    groups: dict[str, AgreementScores]
