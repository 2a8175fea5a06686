"""An impression's items: the sentences or numbered points a radiologist's conclusion is made of, and which of them
state something abnormal.

Why here: the diagnosis benchmark makes its reference diagnoses from them (eval/diagnosis/build_cases.py) and the
answer's evidence differential reads retrieved reports' conclusions the same way (assistant/rag/evidence.py), so a
case's reference and a similar report's evidence are cut from their impressions alike.
"""

from __future__ import annotations

import re

#: Items that state nothing abnormal: "No ...", "Normal ...", recommendations and "stable"/"see ..." remarks.
_NORMAL = re.compile(
    r"^\W*(?:\d+\.\s*)?(?:no |normal |negative |clear |otherwise|stable (?:chest|exam|mammographic)|technically"
    r"|recommend|clinical correlation|correlat|follow|consider|further|the need|could |see )"
    r"|\bno (?:acute|active|evidence|findings)\b|\bthere (?:is|are) no\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[a-z)])\.\s+")
_NUMBERED = re.compile(r"(?:^|\s)\d+[.)](?:\s+|(?=[A-Z]))")  # "1. A", "1.A"; not "3.5 cm"
#: MTSamples' numbered impressions arrive as "first.,2. second": the comma hides the item number from _NUMBERED.
_LIST_COMMA = re.compile(r",(?=\d+[.)])")


def clean_item(text: str) -> str:
    """One line without bullets, de-identification marks or trailing punctuation."""
    return " ".join(text.replace("•", " ").replace("XXXX", " ").split()).strip(" .;:-,")


def impression_items(text: str) -> list[str]:
    """Numbered items ("1. A 2. B") split into sentences, or the whole text's sentences, cleaned."""
    parts = [clean_item(s) for p in _NUMBERED.split(" " + text) for s in _SENTENCE.split(p)]
    return [p for p in parts if p]


def conclusion_items(impression: str) -> list[str]:
    """Every item of an impression, numbered lists written "first.,2. second" (MTSamples) included."""
    return impression_items(_LIST_COMMA.sub(" ", impression))


def positive_items(impression: str) -> list[str]:
    """The impression's sentences or numbered items that state something abnormal (not "No ...", "Normal ...")."""
    return [item for item in conclusion_items(impression) if not _NORMAL.search(item)]
