"""Query variants a resident types instead of report language: abbreviated, typo'd, British.

- `abbreviated`: expansions replaced by their shorthand (`tables.abbreviation_table`: the shared radiology table
  first, so "right upper lobe" -> RUL, "ground-glass opacity" -> ggo, "pneumothorax" -> PTX) and small words by
  clinical shorthand (with -> w/, bilateral -> b/l; `tables.SHORT_WORDS` without the ICD-only entries).
  `expand` undoes it for the round-trip test.
- `typos`: each letter, with probability `TYPO_RATE`, gets one edit: deleted, doubled, replaced by a letter next to it
  on a QWERTY keyboard, or swapped with the next letter. Seeded per query.
- `british`: American -> British spelling (`tables.BRITISH`).
"""

from __future__ import annotations

import random
from functools import lru_cache
from pathlib import Path

from eval.robustness.tables import BRITISH, SHORT_WORDS, Rewriter, abbreviation_table

VARIANTS = ("clean", "abbreviated", "typos", "british")
#: Share of letters that get an edit: about one typo every 50 letters, 5-6 in a typical findings section.
TYPO_RATE = 0.02
#: The clinical shorthand a radiology query uses (the ICD-only entries such as trimester -> tri are left out).
QUERY_SHORT_WORDS = ("with", "without", "bilateral", "history of", "secondary", "and")
_KEYBOARD = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


@lru_cache(maxsize=4)
def _abbreviator(data: Path) -> tuple[Rewriter, Rewriter]:
    short = {word: SHORT_WORDS[word] for word in QUERY_SHORT_WORDS}
    return Rewriter(abbreviation_table(data), keep_case=False), Rewriter(short, keep_case=False)


def abbreviated(text: str, data: Path) -> str:
    """Report language rewritten as radiology shorthand."""
    terms, short = _abbreviator(data)
    return short.apply(terms.apply(text))


def expand(text: str, data: Path) -> str:
    """The inverse of `abbreviated` for the abbreviations it writes (first expansion listed for each)."""
    terms, short = _abbreviator(data)
    inverse = {v: k for k, v in reversed(list(terms.table.items()))} | {v: k for k, v in short.table.items()}
    return Rewriter(inverse, keep_case=False).apply(text)


def _neighbours(letter: str) -> str:
    for row in _KEYBOARD:
        at = row.find(letter.lower())
        if at >= 0:
            return row[max(0, at - 1) : at] + row[at + 1 : at + 2]
    return ""


def typos(text: str, seed: str, rate: float = TYPO_RATE) -> str:
    """`text` with seeded keyboard typos on about `rate` of its letters (see the module docstring)."""
    rng = random.Random(seed)
    chars = list(text)
    out: list[str] = []
    position = 0
    while position < len(chars):
        char = chars[position]
        if not char.isalpha() or rng.random() >= rate:
            out.append(char)
            position += 1
            continue
        edit = rng.choice(("delete", "double", "neighbour", "swap"))
        nearby = _neighbours(char)
        if edit == "double":
            out += [char, char]
        elif edit == "neighbour" and nearby:
            out.append(rng.choice(nearby))
        elif edit == "swap" and position + 1 < len(chars) and chars[position + 1].isalpha():
            out += [chars[position + 1], char]
            position += 1
        elif edit != "delete":
            out.append(char)
        position += 1
    return "".join(out)


def british(text: str) -> str:
    """American spellings replaced by British ones."""
    return _british().apply(text)


@lru_cache(maxsize=1)
def _british() -> Rewriter:
    return Rewriter(BRITISH)


def variants(text: str, seed: str, data: Path) -> dict[str, str]:
    """Every variant of one query, by name (`VARIANTS`)."""
    return {"clean": text, "abbreviated": abbreviated(text, data), "typos": typos(text, seed), "british": british(text)}
