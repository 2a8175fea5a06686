"""Writes retriever/concepts/icd10_terms.tsv, the ICD-10-CM fallback layer of the diagnosis vocabulary, from the
`simple-icd-10-cm` package (MIT; its ICD-10-CM data is the US government's, public domain).

Why a generated file and not the package at run time: importing the package parses the whole ICD-10-CM XML (12 s
on the development machine), too slow for `ask`; the product reads a few hundred kilobytes of TSV instead, and only
this generator needs the package (the `eval` extra). Run it again after changing the package version:
    python -m eval.concepts.icd10_terms

Each kept name is a concept: the description's as icd10:CODE, an inclusion term's as icd10:CODE/its_name. What
is kept: descriptions and inclusion terms that read as a diagnosis name ("Sarcoidosis of lung", "Hepatic
fibrosis"), at most MAX_WORDS words once parentheses and the ", unspecified"-style tails are removed, of the chapters
imaging diagnoses come from. Left out: symptoms and lab findings (R), pregnancy and perinatal (O, P), external causes
and encounters (V-Z, U), mental disorders (F), carcinoma in situ (D0), and names that say "other", "with",
"without" or name a side or an encounter (their words are not what a report writes). A name two codes share goes to
the shorter code; a name the radiology layer already has is left to it.
"""

from __future__ import annotations

import re
from pathlib import Path

from retriever.concepts.normalize import key
from retriever.concepts.vocabulary import ICD10_TERMS, RADIOLOGY_TERMS, load

MAX_WORDS = 5
EXCLUDED_CHAPTERS = ("F", "O", "P", "R", "U", "V", "W", "X", "Y", "Z", "D0")
#: Rough body region of a code by its first characters (longest prefix first); () = any.
REGION_PREFIXES = (
    ("I6", "neuro"),
    ("G", "neuro"),
    ("J", "chest"),
    ("K", "abdomen"),
    ("N", "abdomen,pelvis"),
    ("M4", "spine"),
    ("M5", "spine"),
    ("M", "msk"),
    ("H6", "head_neck"),
    ("H7", "head_neck"),
    ("H", "head_neck"),
)
_TAILS = re.compile(
    r",? ?(?:unspecified|not elsewhere classified|nos|site unspecified|of unspecified site|unspecified site"
    r"|unspecified organism|initial encounter|part unspecified)$"
)
_UNWANTED = re.compile(
    r"\b(?:other|others|with|without|unspecified|left|right|bilateral|encounter|sequela|due|classified|elsewhere"
    r"|following|history|personal|family|status|complicating|involving|except|specified|not|and|or|in|of the)\b"
    r"|[,;:\[\]]"
)
#: Names too vague to be a candidate on their own.
_VAGUE = frozenset({"disease", "disorder", "injury", "lesion", "mass", "cyst", "abscess", "fracture", "infection"})
#: Symptoms and complaints (a report's history, not its conclusion) that chapters other than R also hold.
_SYMPTOM = re.compile(
    r"(?:pain|algia|ache|itch|pruritus|tinnitus|insomnia|somnia|otorrh\w*|epiphora|diplopia|malaise|fatigue|"
    r"vertigo|dizziness|cough|dyspnea|wound|burn|sunburn|bite|sting|poisoning|toxic effect|adverse effect|"
    r"underdosing|overweight|dehydration|frostbite|blister|abrasion|superficial|open|puncture|laceration)\b"
)


#: A name must say what is wrong, not only where: one of these words ("aortic arch" alone is anatomy).
_PATHOLOGY = re.compile(
    r"(?:itis|osis|oma|omas|emia|pathy|plasia|ectasis|ectasia|trophy|megaly|iasis|cele|ism|algia|rrhage|rrhea|ptysis"
    r"|ploidy|somy|ectomy)\b|\b(?:disease|syndrome|cancer|neoplasm|carcinoma|tumor|fracture|dislocation|subluxation"
    r"|infection|abscess|cyst|cysts|hernia|ulcer|malformation|anomaly|aneurysm|stenosis|thrombosis|embolism|infarction"
    r"|hemorrhage|hematoma|deformity|defect|atresia|agenesis|absence|rupture|tear|sprain|contusion|obstruction"
    r"|insufficiency|failure|calculus|stone|fistula|polyp|dysplasia|palsy|paralysis|varices|effusion|edema|fibrosis"
    r"|sclerosis|necrosis|gangrene|perforation|torsion|volvulus|prolapse|dissection|occlusion|regurgitation|hypertension"
    r"|hypotension|incompetence|duplication|fusion|coalition|accessory|ectopic|ectopia|hydrocephalus|diverticulum"
    r"|anemia|leukemia|lymphoma|myeloma|sarcoma|melanoma|mesothelioma|pneumonia|bronchiectasis|emphysema|asthma"
    r"|hypertrophy|hyperplasia|atrophy|enlargement|dilatation|dilation|narrowing|stricture|spasm|reflux|collapse)\b"
)


def clean(text: str) -> str | None:
    """An ICD-10-CM description or inclusion term as a diagnosis name, or None if it does not read as one."""
    name = re.sub(r"\([^)]*\)", " ", text.lower())
    name = " ".join(name.replace("-", " - ").split()).replace(" - ", "-").strip(" .")
    previous = None
    while previous != name:
        previous, name = name, _TAILS.sub("", name).strip(" ,")
    words = name.split()
    if not words or len(words) > MAX_WORDS or name in _VAGUE or _UNWANTED.search(name) or _SYMPTOM.search(name):
        return None
    if not _PATHOLOGY.search(name):
        return None
    if words[-1] in {"of", "in", "the", "to", "by", "for", "at", "on"} or (len(words) == 1 and len(name) < 5):
        return None  # a name cut short by a removed parenthesis, or an acronym ("sle") that is no report's word
    return name


def slug(name: str) -> str:
    """A name as the tail of a stable concept id ("goldenhar syndrome" -> "goldenhar_syndrome")."""
    return re.sub(r"[^a-z0-9]+", "_", name).strip("_")


def region(code: str) -> str:
    return next((r for prefix, r in REGION_PREFIXES if code.startswith(prefix)), "")


def rows() -> list[tuple[str, str, list[str], str]]:
    """(code, name, other names, regions), shortest codes first so a shared name stays with the broader code."""
    import simple_icd_10_cm as icd

    radiology = set(load(RADIOLOGY_TERMS, None).radiology.phrases)
    taken: set[tuple[str, ...]] = set(radiology)
    out = []
    codes = [c for c in icd.get_all_codes() if c[0].isalpha() and not c.startswith(EXCLUDED_CHAPTERS) and "-" not in c]
    for code in sorted(codes, key=lambda c: (len(c), c)):
        names = []
        for text in [icd.get_description(code), *icd.get_inclusion_term(code)]:
            name = clean(text)
            if name and key(name) not in taken:
                taken.add(key(name))
                names.append(name)
        if names:
            out.append((code, names[0], names[1:], region(code)))
    return out


def main(out: Path = ICD10_TERMS) -> None:
    lines = ["# Generated by eval/concepts/icd10_terms.py from ICD-10-CM (simple-icd-10-cm 1.5.0); do not edit."]
    lines.append("code\tname\tterms\tkind\tregions")
    for code, name, others, regions in rows():
        lines.append("\t".join([code, name, "", "diagnosis", regions]))
        # an inclusion term is often another disease under the same code (Q87.0 holds both Goldenhar and
        # cryptophthalmos syndromes), so each is its own concept, shown by its own name
        lines += ["\t".join([f"{code}/{slug(o)}", o, "", "diagnosis", regions]) for o in others]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{out}: {len(lines) - 2} concepts")


if __name__ == "__main__":
    main()
