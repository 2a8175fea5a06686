"""How the vocabulary and a report's text are cut into comparable words: lower case, British spellings and plurals
folded, hyphens and apostrophes dropped.

Why one function for both sides: a phrase of the vocabulary and the words of an impression meet only if they were
folded alike, so "Pleural effusions", "pleural effusion" and "PLEURAL EFFUSION" are one key, "ground-glass" meets
"ground glass", "oedema" meets "edema" and "Crohn's" meets "Crohn". The plural fold is deliberately crude (strip
the "s") with a table of the Latin and Greek plurals reports use ("metastases", "calculi", "pneumothoraces"): it only
has to fold both sides the same way, not produce dictionary words.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

_TOKEN = re.compile(r"[a-z0-9]+")
#: Latin and Greek plurals (and a few words the "strip the s" rule would fold into another word).
_IRREGULAR = {
    "metastases": "metastasis",
    "stenoses": "stenosis",
    "anastomoses": "anastomosis",
    "thromboses": "thrombosis",
    "diagnoses": "diagnosis",
    "prostheses": "prosthesis",
    "exostoses": "exostosis",
    "bronchiectases": "bronchiectasis",
    "atelectases": "atelectasis",
    "lymphadenopathies": "lymphadenopathy",
    "emboli": "embolus",
    "calculi": "calculus",
    "bronchi": "bronchus",
    "thrombi": "thrombus",
    "foci": "focus",
    "nuclei": "nucleus",
    "menisci": "meniscus",
    "tophi": "tophus",
    "diverticula": "diverticulum",
    "septa": "septum",
    "hila": "hilum",
    "bullae": "bulla",
    "sequelae": "sequela",
    "vertebrae": "vertebra",
    "lacunae": "lacuna",
    "bursae": "bursa",
    "fistulae": "fistula",
    "ganglia": "ganglion",
    "pneumothoraces": "pneumothorax",
    "hemothoraces": "hemothorax",
    "apices": "apex",
    "varices": "varix",
    "cortices": "cortex",
}
#: British spellings CT-RATE and MedPix write, folded to the American ones the vocabulary uses.
_SPELLINGS = {
    "oedema": "edema",
    "haemorrhage": "hemorrhage",
    "haemorrhagic": "hemorrhagic",
    "haematoma": "hematoma",
    "haematomas": "hematoma",
    "haemangioma": "hemangioma",
    "haemothorax": "hemothorax",
    "tumour": "tumor",
    "tumours": "tumor",
    "oesophagus": "esophagus",
    "oesophageal": "esophageal",
    "ischaemia": "ischemia",
    "ischaemic": "ischemic",
    "leukaemia": "leukemia",
    "anaemia": "anemia",
    "oedematous": "edematous",
    "calcular": "calculus",
    "dilation": "dilatation",
    "disk": "disc",
    "disks": "disc",
    "subsegmentary": "subsegmental",
    "centriacinar": "centrilobular",
    "grey": "gray",
}


@lru_cache(maxsize=1 << 16)
def fold(word: str) -> str:
    """One lower-case word in its folded form: American spelling, singular."""
    word = _SPELLINGS.get(word, word)
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or word.endswith(("ss", "us", "is", "ys")) or not word.endswith("s"):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    return _SPELLINGS.get(word[:-1], word[:-1])


class Token(NamedTuple):
    """A folded word and where it stands in the text it was cut from (character offsets)."""

    word: str
    start: int
    end: int


#: Apostrophes as reports type them: straight, curly, and the double quote some exports put instead.
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", '"': "'"})


def tokens(text: str) -> list[Token]:
    """The words of `text`, folded, with their offsets in `text`: a possessive "'s" is part of its word ("crohn's"), and
    "non" joins the word after it ("non-malignant", "non small cell"), so a negated adjective is no concept word."""
    lowered = text.lower().translate(_APOSTROPHES)
    if "'" not in lowered and "non" not in lowered:  # the common case, without joins
        return [Token(fold(m.group()), m.start(), m.end()) for m in _TOKEN.finditer(lowered)]
    found: list[Token] = []
    joined_start = -1
    for match in _TOKEN.finditer(lowered):
        word, start, end = match.group(), match.start(), match.end()
        if found and start < found[-1].end:  # the "s" of a possessive already taken
            continue
        if lowered.startswith("'s", end) and not lowered[end + 2 : end + 3].isalnum():
            end += 2  # "crohn's" is "crohn", as "crohns" folds to it
        if joined_start >= 0:
            word, start, joined_start = "non" + word, joined_start, -1
        elif word == "non" and lowered[end : end + 1] in ("-", " "):
            joined_start = start
            continue
        found.append(Token(fold(word), start, end))
    return found


def key(phrase: str) -> tuple[str, ...]:
    """A vocabulary phrase as the tuple of folded words the matcher compares (as `tokens` folds text)."""
    return tuple(t.word for t in tokens(phrase))
