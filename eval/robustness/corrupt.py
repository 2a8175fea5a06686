"""Corrupted copies of a report text, one error type at a time (LLM2VEC4CXR's error discrimination, 2025).

Each generator returns every distinct corruption of its type that it can make of a text; the benchmark draws three
(seeded) and skips a text that allows fewer. Types:
- `false_finding`: a sentence stating a finding the text does not mention is added (`FALSE_FINDINGS`);
- `negation`: one or two findings' polarity flipped with `retriever.negation.rules` (negate / affirm);
- `laterality`: one left/right/bilateral changed (to the other side or both), or all of them;
- `severity`: one severity or size word changed (mild -> severe, small -> large, ...), or all of them;
- `measurement`: one number with a unit scaled (x2, x3, x0.5, x10);
- `device`: a named device replaced by another, or, when none is named, a device stated where there is none.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from itertools import combinations

from retriever.negation.rules import affirm, is_negated, negate

ERROR_TYPES = ("false_finding", "negation", "laterality", "severity", "measurement", "device")
CORRUPTIONS_PER_TEXT = 3

FALSE_FINDINGS: dict[str, str] = {
    "pneumothorax": "There is a large right pneumothorax.",
    "effusion": "Small left pleural effusion.",
    "consolidation": "Right lower lobe consolidation.",
    "enlarged": "The heart is enlarged.",
    "edema": "Moderate pulmonary edema.",
    "fracture": "Acute displaced left rib fracture.",
    "nodule": "A 12 mm nodule in the left upper lobe.",
    "mass": "A 4 cm mass in the right hilum.",
    "free air": "Free air under the right hemidiaphragm.",
    "hemorrhage": "Acute intraparenchymal hemorrhage.",
    "hydronephrosis": "Moderate right hydronephrosis.",
    "lymphadenopathy": "Mediastinal lymphadenopathy.",
}
#: Findings whose polarity the negation corruption flips (longest first when matched).
CONCEPTS = (
    "acute cardiopulmonary abnormality",
    "acute cardiopulmonary process",
    "acute cardiopulmonary disease",
    "acute intracranial abnormality",
    "acute abnormality",
    "acute disease",
    "active disease",
    "pleural effusion",
    "effusion",
    "effusions",
    "pneumothorax",
    "consolidation",
    "focal consolidation",
    "pulmonary edema",
    "edema",
    "cardiomegaly",
    "atelectasis",
    "infiltrate",
    "opacity",
    "opacities",
    "nodule",
    "nodules",
    "mass",
    "fracture",
    "pneumonia",
    "hemorrhage",
    "infarct",
    "lymphadenopathy",
    "hernia",
    "emphysema",
    "fibrosis",
    "metastasis",
    "metastatic disease",
    "malignancy",
    "abnormality",
)
SEVERITY: dict[str, tuple[str, ...]] = {
    "mild": ("severe", "moderate", "marked"),
    "mildly": ("severely", "moderately", "markedly"),
    "moderate": ("mild", "severe", "minimal"),
    "moderately": ("mildly", "severely", "minimally"),
    "severe": ("mild", "moderate", "minimal"),
    "severely": ("mildly", "moderately", "minimally"),
    "small": ("large", "moderate", "massive"),
    "large": ("small", "tiny", "moderate"),
    "minimal": ("extensive", "severe", "moderate"),
    "tiny": ("large", "moderate", "massive"),
    "trace": ("large", "moderate", "massive"),
    "marked": ("mild", "minimal", "slight"),
    "markedly": ("mildly", "minimally", "slightly"),
    "extensive": ("minimal", "mild", "focal"),
    "slight": ("marked", "severe", "extensive"),
    "slightly": ("markedly", "severely", "moderately"),
}
LATERALITY: dict[str, tuple[str, ...]] = {
    "left": ("right", "bilateral"),
    "right": ("left", "bilateral"),
    "bilateral": ("left", "right"),
}
DEVICES = (
    "endotracheal tube",
    "nasogastric tube",
    "central venous catheter",
    "pacemaker",
    "chest tube",
    "tracheostomy tube",
    "feeding tube",
    "picc line",
    "sternotomy wires",
    "port catheter",
)
_MEASURE = re.compile(r"(\d+(?:\.\d+)?)(\s*(?:cm|mm|ml|cc|%))\b", re.IGNORECASE)
SCALES = (2.0, 3.0, 0.5, 10.0)


def _sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.;])\s+", text.strip())


def _word_edits(text: str, table: dict[str, tuple[str, ...]]) -> list[tuple[re.Match[str], str]]:
    """(occurrence, replacement) for each table word in the text and each of its replacements."""
    pattern = re.compile(r"\b(" + "|".join(table) + r")\b", re.IGNORECASE)
    return [(m, alt) for m in pattern.finditer(text) for alt in table[m.group().lower()]]


def _cased(original: str, new: str) -> str:
    return new[:1].upper() + new[1:] if original[:1].isupper() else new


def _apply(text: str, edits: list[tuple[re.Match[str], str]]) -> str:
    for match, new in sorted(edits, key=lambda e: -e[0].start()):
        text = text[: match.start()] + _cased(match.group(), new) + text[match.end() :]
    return text


def _single_and_all(text: str, table: dict[str, tuple[str, ...]]) -> list[str]:
    edits = _word_edits(text, table)
    candidates = [_apply(text, [edit]) for edit in edits]
    first_per_word = list({m.start(): (m, alt) for m, alt in reversed(edits)}.values())
    if len(first_per_word) > 1:
        candidates.append(_apply(text, first_per_word))
    return candidates


def false_finding(text: str) -> list[str]:
    lowered = text.lower()
    return [f"{text.rstrip()} {sentence}" for key, sentence in FALSE_FINDINGS.items() if key not in lowered]


def negation(text: str) -> list[str]:
    sentences = _sentences(text)
    flips: list[tuple[int, str]] = []
    for position, sentence in enumerate(sentences):
        lowered = sentence.lower()
        for concept in sorted(CONCEPTS, key=len, reverse=True):
            if re.search(rf"\b{re.escape(concept)}\b", lowered):
                flipped = affirm(sentence, concept) if is_negated(sentence, concept) else negate(sentence, concept)
                if flipped and flipped != sentence:
                    flips.append((position, flipped))
                    break
    candidates = []
    for size in (1, 2):
        for chosen in combinations(flips, size):
            changed = list(sentences)
            for position, flipped in chosen:
                changed[position] = flipped
            candidates.append(" ".join(changed))
    return candidates


def laterality(text: str) -> list[str]:
    return _single_and_all(text, LATERALITY)


def severity(text: str) -> list[str]:
    return _single_and_all(text, SEVERITY)


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:.1f}"


def measurement(text: str) -> list[str]:
    candidates = []
    for match in _MEASURE.finditer(text):
        value = float(match.group(1))
        for scale in SCALES:
            new = _number(value * scale)
            if new != match.group(1):
                candidates.append(text[: match.start()] + new + match.group(2) + text[match.end() :])
    return candidates


def device(text: str) -> list[str]:
    lowered = text.lower()
    named = [d for d in DEVICES if d in lowered]
    if not named:
        return [f"{text.rstrip()} {_cased('X', d)} in place." for d in DEVICES]
    at = lowered.index(named[0])
    original = text[at : at + len(named[0])]
    return [text[:at] + _cased(original, d) + text[at + len(original) :] for d in DEVICES if d != named[0]]


GENERATORS: dict[str, Callable[[str], list[str]]] = {
    "false_finding": false_finding,
    "negation": negation,
    "laterality": laterality,
    "severity": severity,
    "measurement": measurement,
    "device": device,
}


def corruptions(text: str, error_type: str, seed: str, n: int = CORRUPTIONS_PER_TEXT) -> list[str] | None:
    """`n` distinct corruptions of one type (a seeded draw), or None when the text allows fewer."""
    distinct = [c for c in dict.fromkeys(GENERATORS[error_type](text)) if c.strip() != text.strip()]
    if len(distinct) < n:
        return None
    return random.Random(f"{seed}:{error_type}").sample(distinct, n)
