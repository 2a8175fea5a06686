"""Does a text affirm a finding, only rule it out, or not mention it at all?

Two measurements need the same answer: the negation-detector comparison (eval.negation.detection, judged against
NegBio's Open-i labels) and the negated-hit rate of search (eval.negation.negated_hits: a hit that only rules out the
query's finding). One term list per dataset label (retriever.reports.findings) and one mention rule
(retriever.negation.pairs.mentions) keep them in step.

A mention is one whole-word occurrence of a term in a sentence; where terms overlap ("pleural effusion",
"effusion") the longest wins. A detector judges a concept at its first occurrence in the text it is given (as
retriever.negation.rules.is_negated does), so a later occurrence is judged on the sentence from the end of the previous
one: in "No left effusion, small right effusion" the second mention is affirmed. The term lists are recall-minded
but cannot see every phrasing: "the heart is not enlarged" names no cardiomegaly term, so such a text counts as
not mentioning it (the negated-hit rate is a lower bound for those findings).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum

from retriever.negation.pairs import mentions
from retriever.reports.findings import Finding

#: (text, concept) -> whether the concept's first whole-word occurrence in the text is negated.
Detector = Callable[[str, str], bool]


class Status(StrEnum):
    """What a text says about one finding."""

    ABSENT = "absent"
    AFFIRMED = "affirmed"
    NEGATED = "negated"  # mentioned, and every mention negated


def status_of(negated: Sequence[bool]) -> Status:
    """Absent without mentions; affirmed when any mention is not negated; otherwise negated."""
    if not negated:
        return Status.ABSENT
    return Status.NEGATED if all(negated) else Status.AFFIRMED


def mention_status(text: str, finding: Finding, detector: Detector) -> Status:
    """What `text` says about `finding`, by `detector`."""
    return status_of([detector(part, term) for part, term in mentions(text, finding.terms)])
