"""Hard negatives that differ from an impression in one detail: the side, the severity or a measurement.

Why: findings about a left effusion must sit closer to "Small left pleural effusion." than to "Small right pleural
effusion.", and a 4 mm nodule closer to "4 mm nodule" than to "8 mm nodule". In-batch and BM25 negatives are other
reports, so contrastive training rarely sets two texts apart that differ in one word, and the encoder learns the
topic but not the detail (issue 20: laterality- and measurement-aware negatives, measured against training without
them by eval.training.benchmark's `detail-2ep` variant). Only edits that keep a sentence grammatical are made: a side
swapped (left <-> right), a severity word moved to the other end of its scale, a number with a unit doubled or
halved. One negative per impression, picked by a hash of the text, so a run is repeatable.
"""

from __future__ import annotations

import re
import zlib

SIDES = {"left": "right", "right": "left"}
SEVERITY = {
    "mild": "severe",
    "mildly": "severely",
    "minimal": "extensive",
    "minimally": "markedly",
    "moderate": "mild",
    "moderately": "mildly",
    "severe": "mild",
    "severely": "mildly",
    "marked": "mild",
    "markedly": "mildly",
    "extensive": "minimal",
    "small": "large",
    "tiny": "large",
    "trace": "large",
    "large": "small",
}
_WORDS = {**SIDES, **SEVERITY}
_WORD = re.compile(r"\b(" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_MEASURE = re.compile(r"\b(\d+(?:\.\d+)?)(\s*(?:mm|cm))\b", re.IGNORECASE)


def _cased(original: str, new: str) -> str:
    return new[:1].upper() + new[1:] if original[:1].isupper() else new


def _scaled(number: str) -> str:
    """Double a measurement, or halve it when it is large enough that half still reads as a size."""
    value = float(number)
    new = value / 2 if value >= 10 else value * 2
    return f"{new:g}" if "." in number or new != int(new) else str(int(new))


def detail_variants(text: str) -> list[str]:
    """Every copy of `text` with one side, severity word or measurement changed (see the module docstring)."""
    variants = [
        text[: m.start()] + _cased(m.group(), _WORDS[m.group().lower()]) + text[m.end() :] for m in _WORD.finditer(text)
    ]
    variants += [text[: m.start(1)] + _scaled(m.group(1)) + text[m.end(1) :] for m in _MEASURE.finditer(text)]
    return list(dict.fromkeys(v for v in variants if v != text))


def detail_negative(text: str) -> str | None:
    """One variant of `text`, the same on every run, or None when it names no side, severity or measurement."""
    variants = detail_variants(text)
    return variants[zlib.crc32(text.encode("utf-8")) % len(variants)] if variants else None
