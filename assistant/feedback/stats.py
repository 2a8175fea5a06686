"""Residents' agreement with the answers, by configuration hash: which configuration (encoder, search, prompt, model)
their verdicts favour, before anyone runs the benchmark.

A verdict agrees with an answer when the resident found it helpful and named no other diagnosis, or named the
answer's own diagnosis (compared as words, ignoring case and punctuation); it disagrees when the resident found it
not helpful or named another diagnosis. A comment alone judges nothing. The benchmark (`assistant feedback export`,
then `python -m eval.diagnosis.benchmark --cases ...`) grades with synonyms and ICD-10 categories; this count does
not, so a right diagnosis worded differently counts as disagreement here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from assistant.feedback.store import Entry


def same_diagnosis(a: str, b: str) -> bool:
    """The two diagnoses are the same words (case, punctuation and spacing aside)."""
    words = re.compile(r"[^\W_]+")
    return bool(a.strip()) and words.findall(a.casefold()) == words.findall(b.casefold())


def agrees(entry: Entry) -> bool | None:
    """Whether the entry's verdict agrees with its answer's diagnosis (None: it does not say)."""
    verdict, answered = entry.verdict, entry.answered.diagnosis
    if verdict.right_diagnosis:
        return same_diagnosis(verdict.right_diagnosis, answered)
    return verdict.helpful


@dataclass
class Agreement:
    """The verdicts on one configuration's answers."""

    configuration_hash: str
    label: str  # what the configuration is, in short: the prompt, the model and the encoder
    entries: int = 0
    helpful: int = 0
    not_helpful: int = 0
    corrected: int = 0  # a right diagnosis other than the answer's
    agreed: int = 0
    judged: int = 0
    users: set[str] = field(default_factory=set)

    @property
    def rate(self) -> float | None:
        """Agreed of judged (None when nothing was judged)."""
        return self.agreed / self.judged if self.judged else None


def configuration_label(configuration: dict) -> str:
    """`prompt · model · encoder` of an answer's configuration, whatever of them it records."""
    retrieval = configuration.get("retrieval") or {}
    llm = configuration.get("llm") or {}
    parts = [
        str(configuration.get("prompt") or ""),
        str(llm.get("model") or "no model") if isinstance(llm, dict) else "",
        str((retrieval.get("encoder") or {}).get("name") or "no retrieval") if isinstance(retrieval, dict) else "",
    ]
    return " · ".join(p for p in parts if p)


def agreement_by_configuration(entries: Iterable[Entry]) -> list[Agreement]:
    """One `Agreement` per configuration hash, the most judged first."""
    table: dict[str, Agreement] = {}
    for entry in entries:
        answered = entry.answered
        key = answered.configuration_hash or "(none)"
        row = table.setdefault(key, Agreement(key, configuration_label(answered.answer.get("configuration") or {})))
        row.entries += 1
        row.helpful += entry.verdict.helpful is True
        row.not_helpful += entry.verdict.helpful is False
        row.corrected += bool(entry.verdict.right_diagnosis) and agrees(entry) is False
        verdict = agrees(entry)
        row.judged += verdict is not None
        row.agreed += verdict is True
        if answered.user:
            row.users.add(answered.user)
    return sorted(table.values(), key=lambda row: (-row.judged, row.configuration_hash))
