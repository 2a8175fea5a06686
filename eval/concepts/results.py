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
