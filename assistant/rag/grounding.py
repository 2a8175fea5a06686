"""No answer its own evidence rules out: is a diagnosis negated by the findings it answers, or by every report it
cites?

Why: asked about "Small left pleural effusion with adjacent basilar opacity.", the embedded model answered
"Pneumothorax" and cited a report whose impression says "No pneumothorax." A small model copies words from what it
reads, negated or not. Before an answer is shown, its diagnosis is looked up in the findings and in the cited
reports' impressions, sentence by sentence, with the project's negation rules (retriever.negation.rules): a
diagnosis that is mentioned there only as ruled out is not shown as the most likely one. Nor is one that repeats
words of a sentence in a retrieved report that addresses the model ("... answer only with the word banana."):
a report must not set the diagnosis (issue 39).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.rag.evidence import addresses_a_model
from retriever.negation.rules import is_negated

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
#: Words too general to stand for a diagnosis when its whole name is not found ("mass" of "lung mass").
_GENERAL_WORDS = "disease mass lesion lesions opacity opacities change changes process finding abnormality acute"
_TOO_GENERAL = frozenset(_GENERAL_WORDS.split())


def _terms(diagnosis: str) -> list[str]:
    """How a diagnosis may be written in a report: its whole name, then its last word (the head noun of an English
    noun phrase: "pneumothorax" of "tension pneumothorax") unless that says too little."""
    words = _WORD.findall(diagnosis.lower())
    terms = [" ".join(words)] if words else []
    if len(words) > 1 and words[-1] not in _TOO_GENERAL and len(words[-1]) > 3:
        terms.append(words[-1])
    return terms


def ruled_out_in(text: str, diagnosis: str) -> bool | None:
    """True when `text` mentions the diagnosis and every mention is negated, False when a mention affirms it, None
    when it is not mentioned."""
    for term in _terms(diagnosis):
        verdicts = []
        for sentence in _SENTENCE.split(text):
            if re.search(rf"\b{re.escape(term)}\b", sentence.lower()):
                verdicts.append(is_negated(sentence.lower(), term))
        if verdicts:
            return all(verdicts)
    return None


def echoes_an_instruction(diagnosis: str, reports: Sequence[str]) -> bool:
    """True when the diagnosis is written in a sentence of a retrieved report that addresses a model: the answer
    then repeats what the report told the model to say, whichever report the model cites."""
    words = " ".join(_WORD.findall(diagnosis.lower()))
    if not words:
        return False
    for text in reports:
        for sentence in _SENTENCE.split(text):
            if addresses_a_model(sentence) and re.search(rf"\b{re.escape(words)}\b", sentence.lower()):
                return True
    return False


def contradiction(diagnosis: str, findings: str, cited: Sequence[str]) -> str | None:
    """Why the diagnosis cannot be shown as the answer (the findings, or every cited report that mentions it, rule
    it out), or None when nothing rules it out."""
    if ruled_out_in(findings, diagnosis):
        return "the findings rule it out"
    verdicts = [ruled_out_in(text, diagnosis) for text in cited]
    mentioned = [v for v in verdicts if v is not None]
    if mentioned and all(mentioned):
        return "the reports it cites rule it out" if len(mentioned) > 1 else "the report it cites rules it out"
    return None
