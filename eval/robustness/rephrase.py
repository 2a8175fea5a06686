"""ICD-10-CM codes for the rephrasing benchmark and ten rule-made rephrasings of each code's description.

Code selection (`select_codes`): billable (leaf) codes of `simple-icd-10-cm`, grouped by chapter; with a fixed seed
each chapter's codes are shuffled and one code is taken from each chapter in turn until 100 are chosen, so every
chapter is represented (about 4-5 codes each; chapter 22 has only 3 billable codes) instead of 55% injuries. The
dev set (`split_codes(..., "dev")`) is 100 other codes chosen the same way with `DEV_SEED` (every chapter but 22,
whose codes are all in test): rules and rankers are compared on it, the test codes are for reporting once.

Rephrasing (`rephrasings`): each rule below rewrites the description; RECIPES combine them; the first ten results
whose words differ from the description and from each other are kept (ties in a table resolved the same way on every
run: the whole generator is a function of the seed and the code). Rules:
- `drop`: remove qualifiers a searcher leaves out (`tables.QUALIFIERS`: ", unspecified", "of unspecified site", ...);
- `reorder`: "A of B" -> "B A", else "A, B" -> "B A" (an encounter suffix stays last);
- `abbreviate`: expansions -> abbreviations (`tables.abbreviation_table`) and clinical shorthand (`SHORT_WORDS`);
- `synonym`: a phrase of `eval.diagnosis.synonyms.SYNONYM_GROUPS` -> the next phrase of its group, then near-equivalent
  words (`tables.WORD_SYNONYMS`: disorder -> disease, acute -> sudden, ...);
- `bare`: nonessential modifiers (ICD-10-CM's parenthesised or bracketed words) removed;
- `lay`: clinical term -> lay word (`tables.LAY`);
- `british`: American -> British spelling (`tables.BRITISH`);
- `casual`: lowercase, punctuation dropped;
- `template`: the text put in a phrase a resident types ("pt w/ ...", "... noted"), chosen by the seeded generator.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from eval.diagnosis.synonyms import SYNONYM_GROUPS
from eval.robustness.tables import (
    BRITISH,
    LAY,
    NONESSENTIAL,
    QUALIFIERS,
    SHORT_WORDS,
    WORD_SYNONYMS,
    Rewriter,
    abbreviation_table,
)

SEED = 20
DEV_SEED = 21
CODES = 100
PER_CODE = 10
TEMPLATES: tuple[str, ...] = (
    "pt w/ {}",
    "{} noted",
    "dx: {}",
    "known {}",
    "case of {}",
    "{} on imaging",
    "consistent with {}",
    "patient presenting with {}",
    "{} (clinical dx)",
    "? {}",
    "findings of {}",
    "{} in this patient",
)
_ENCOUNTER = re.compile(r",\s*(?:initial|subsequent) encounter.*$|,\s*sequela$", re.IGNORECASE)


def billable_codes() -> list[str]:
    """Every billable ICD-10-CM code (a leaf of the hierarchy), in the package's order."""
    import simple_icd_10_cm as icd

    return [code for code in icd.get_all_codes() if icd.is_leaf(code)]


def chapter_of(code: str) -> str:
    """The chapter number of a code ("19" for S72.001A): the last of its ancestors."""
    import simple_icd_10_cm as icd

    return icd.get_ancestors(code)[-1]


def select_codes(
    codes: list[str], n: int = CODES, seed: int = SEED, exclude: frozenset[str] = frozenset()
) -> list[str]:
    """`n` codes spread over chapters: per chapter a seeded shuffle, then one code per chapter in turn (codes in
    `exclude` are never chosen)."""
    by_chapter: dict[str, list[str]] = {}
    for code in (c for c in codes if c not in exclude):
        by_chapter.setdefault(chapter_of(code), []).append(code)
    rng = random.Random(seed)
    queues = []
    for chapter in sorted(by_chapter, key=lambda c: int(c) if c.isdigit() else 99):
        members = sorted(by_chapter[chapter])
        rng.shuffle(members)
        queues.append(members)
    chosen: list[str] = []
    while len(chosen) < min(n, len(codes)):
        for queue in queues:
            if queue and len(chosen) < n:
                chosen.append(queue.pop())
    return sorted(chosen)


def split_codes(codes: list[str], split: str) -> list[str]:
    """The benchmark's codes of a split: "test" (the reported set) or "dev" (disjoint from test, for choosing)."""
    test = select_codes(codes)
    if split == "test":
        return test
    if split == "dev":
        return select_codes(codes, seed=DEV_SEED, exclude=frozenset(test))
    raise ValueError(f"unknown split {split!r}: dev or test")


def _tidy(text: str) -> str:
    text = re.sub(r"\s+([,)\]])", r"\1", re.sub(r"\s{2,}", " ", text))
    return re.sub(r"^[,\s]+|[,\s]+$", "", text.replace(",,", ","))


def drop_qualifiers(text: str) -> str:
    """The description without ICD-10-CM's boilerplate qualifiers."""
    for qualifier in QUALIFIERS:
        text = re.sub(re.escape(qualifier), " ", text, flags=re.IGNORECASE)
    return _tidy(text)


def reorder(text: str) -> str:
    """Head noun after its complement, as searches are typed: "Fracture of right femur" -> "right femur fracture",
    "Pneumonia, unspecified organism" -> "unspecified organism pneumonia"; an encounter suffix stays last."""
    suffix = _ENCOUNTER.search(text)
    head = text[: suffix.start()] if suffix else text
    if " of " in head:
        first, rest = head.split(" of ", 1)
        head = f"{rest} {first[:1].lower()}{first[1:]}"
    elif ", " in head:
        first, rest = head.split(", ", 1)
        head = f"{rest} {first[:1].lower()}{first[1:]}"
    return _tidy(head + (suffix.group() if suffix else ""))


def casual(text: str) -> str:
    """Lowercase, punctuation dropped: how a search box is typed into."""
    return " ".join(re.findall(r"[a-z0-9/&?']+", text.lower()))


@lru_cache(maxsize=1)
def _synonym_rewriters() -> tuple[Rewriter, Rewriter]:
    table: dict[str, str] = {}
    for group in SYNONYM_GROUPS:
        if len(group) > 1:
            for position, phrase in enumerate(group):
                table.setdefault(phrase, group[(position + 1) % len(group)])
    return Rewriter(table), Rewriter(WORD_SYNONYMS)


def synonym(text: str) -> str:
    """Grading-table synonym phrases first; near-equivalent words only when no phrase applied."""
    phrases, single = _synonym_rewriters()
    rewritten = phrases.apply(text)
    return rewritten if rewritten != text else single.apply(text)


def bare(text: str) -> str:
    """Nonessential modifiers removed: "asthma with (acute) exacerbation" -> "asthma with exacerbation"."""
    return _tidy(re.sub(NONESSENTIAL, "", text))


@lru_cache(maxsize=4)
def _abbreviators(data: Path) -> tuple[Rewriter, Rewriter]:
    return Rewriter(abbreviation_table(data), keep_case=False), Rewriter(SHORT_WORDS, keep_case=False)


def abbreviate(text: str, data: Path) -> str:
    """Expansions replaced by their abbreviations, then small words by clinical shorthand."""
    terms, short = _abbreviators(data)
    return short.apply(terms.apply(text))


@dataclass(frozen=True)
class Rephrasing:
    """One rephrased query: the code it must retrieve, its text and the rules that changed it (in order)."""

    code: str
    text: str
    rules: str


def _rules(data: Path) -> dict[str, Callable[[str], str]]:
    return {
        "drop": drop_qualifiers,
        "reorder": reorder,
        "abbreviate": lambda t: abbreviate(t, data),
        "synonym": synonym,
        "bare": bare,
        "lay": Rewriter(LAY).apply,
        "british": Rewriter(BRITISH).apply,
        "casual": casual,
    }


#: Rule chains tried in order (each applied left to right); `template` wraps the result in a resident's phrase.
RECIPES: tuple[str, ...] = (
    "drop",
    "reorder",
    "abbreviate",
    "synonym",
    "lay",
    "bare+british",
    "drop+reorder",
    "drop+abbreviate+casual",
    "lay+reorder",
    "synonym+abbreviate",
    "bare+synonym+reorder",
    "british+casual",
    "drop+lay+abbreviate",
    "drop+synonym+casual",
    "bare+drop+reorder+abbreviate",
    "lay+british+reorder",
    "drop+synonym+lay+abbreviate",
    "drop+template",
    "lay+drop+template",
    "abbreviate+template",
    "reorder+casual+template",
    *(["template"] * (len(TEMPLATES) - 5)),
)


def words(text: str) -> tuple[str, ...]:
    """Lowercase word tokens: two texts with the same words are the same query, whatever their punctuation."""
    return tuple(re.findall(r"[a-z0-9]+", text.lower()))


def rephrasings(code: str, description: str, data: Path, n: int = PER_CODE, seed: int = SEED) -> list[Rephrasing]:
    """The first `n` recipe results whose words differ from the description's and from each other's."""
    rng = random.Random(f"{seed}:{code}")
    rules = _rules(data)
    templates = list(TEMPLATES)
    rng.shuffle(templates)
    seen = {words(description)}
    found: list[Rephrasing] = []
    for recipe in RECIPES:
        text, applied = description, []
        for rule in recipe.split("+"):
            changed = templates.pop().format(text) if rule == "template" else rules[rule](text)
            if changed != text:
                text = changed
                applied.append(rule)
        key = words(text)
        if key and key not in seen:
            seen.add(key)
            found.append(Rephrasing(code, text, "+".join(applied)))
        if len(found) == n:
            break
    return found
