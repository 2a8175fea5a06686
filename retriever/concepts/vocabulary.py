"""The diagnosis vocabulary: the hand-written radiology layer (radiology_terms.tsv) over an ICD-10-CM fallback layer
(icd10_terms.tsv, generated from the public-domain ICD-10-CM by eval/concepts/icd10_terms.py).

Why two layers: ICD-10-CM is the public list of diagnoses, but it is too coarse for what radiologists write
("atelectasis", "ground-glass opacity", "degenerative changes" are findings, not codes) and too clinical in its
names ("Calculus of gallbladder without cholecystitis without obstruction"). The radiology layer names those
findings and diagnoses as reports do, with their synonyms; ICD-10-CM only answers where no radiology phrase matched.

A radiology concept may "refine" its generic words: bare "effusion" is a pleural effusion unless the clause names a
joint or the pericardium, "nodule" becomes a pulmonary nodule beside "lobe" (see the file's header). The file is
checked as it is read: a phrase that would name two concepts, an unknown kind, region or refine target is a
VocabularyError naming the line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from retriever.concepts.concept import KINDS, REGIONS, Concept
from retriever.concepts.normalize import key

HERE = Path(__file__).resolve().parent
RADIOLOGY_TERMS = HERE / "radiology_terms.tsv"
ICD10_TERMS = HERE / "icd10_terms.tsv"
Phrase = tuple[str, ...]


class VocabularyError(ValueError):
    """A vocabulary file cannot be used; the message names the file, the line and what is wrong."""


#: The refine target that drops a generic word: its clause shows it names no diagnosis or finding.
NONE = "none"
#: Refine words that match any clause: the rule of last resort ("none=*": the generic word alone names nothing).
ANY = "*"
#: The first character of an additive refine rule.
ADDITIVE = "+"
#: The key under which a trie node stores the phrase ending there (no folded word is empty).
END = ""


@dataclass
class Layer:
    """The phrases of one layer: folded words -> concept id, and the same as a word trie (nested dicts, the phrase
    that ends at a node under END) for the matcher's longest-match walk."""

    phrases: dict[Phrase, str] = field(default_factory=dict)
    trie: dict = field(default_factory=dict)

    def add(self, phrase: Phrase, concept_id: str, where: str) -> None:
        if not phrase:
            return
        known = self.phrases.get(phrase)
        if known is not None and known != concept_id:
            raise VocabularyError(f"{where}: {' '.join(phrase)!r} already names {known}")
        if known is None:
            self.phrases[phrase] = concept_id
            node = self.trie
            for word in phrase:
                node = node.setdefault(word, {})
            node[END] = phrase


@dataclass
class Vocabulary:
    """Concepts by id, the radiology and ICD-10-CM layers, and the refine rules of generic words."""

    concepts: dict[str, Concept] = field(default_factory=dict)
    radiology: Layer = field(default_factory=Layer)
    icd10: Layer = field(default_factory=Layer)
    #: concept id -> [(target id, context words, context phrases of several words)], tried in order.
    refine: dict[str, list[tuple[str, frozenset[str], tuple[Phrase, ...]]]] = field(default_factory=dict)
    #: (concept id, phrase) pairs the refine rules apply to.
    generic: set[tuple[str, Phrase]] = field(default_factory=set)
    #: Concepts whose refine rule is additive (its cell starts with ADDITIVE): every target whose words the clause
    #: holds, not only the first ("calcified plaques in the aorta and coronary arteries").
    additive: set[str] = field(default_factory=set)

    def names(self) -> dict[Phrase, str]:
        """Every phrase of both layers -> concept id (the radiology layer wins): how a hand label's name is read."""
        return {**self.icd10.phrases, **self.radiology.phrases}


def _rows(path: Path) -> Iterator[tuple[str, list[str]]]:
    """(where, cells) per data line: comments, blank lines and the header skipped."""
    if not path.is_file():
        raise VocabularyError(f"vocabulary file {path} does not exist")
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip() and not line.startswith("#") and not line.startswith(("id\t", "code\t")):
            yield f"{path.name}, line {number}", line.split("\t")


def _concept(where: str, cells: list[str]) -> Concept:
    concept_id, name, kind, regions = cells[0], cells[1], cells[3], cells[4]
    if not regions and kind == "diagnosis" and name.islower():  # the common case, checked quickly
        return Concept(concept_id, name, kind)
    if kind not in KINDS:
        raise VocabularyError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
    region_list = tuple(r for r in regions.split(",") if r)
    unknown = [r for r in region_list if r not in REGIONS]
    if unknown:
        raise VocabularyError(f"{where}: unknown region {unknown[0]!r} (known: {', '.join(REGIONS)})")
    if not name or name != name.lower():
        raise VocabularyError(f"{where}: the preferred name must be lower case and not empty, got {name!r}")
    return Concept(concept_id, name, kind, region_list)  # type: ignore[arg-type]


def _read_radiology(vocabulary: Vocabulary, path: Path) -> dict[str, tuple[str, str]]:
    """Adds the radiology layer; returns each concept's unparsed refine rule and where it was written."""
    rules: dict[str, tuple[str, str]] = {}
    for where, cells in _rows(path):
        if len(cells) != 6:
            raise VocabularyError(f"{where}: {len(cells)} columns, expected 6 (id name synonyms kind regions refine)")
        concept = _concept(where, cells)
        if concept.id in vocabulary.concepts:
            raise VocabularyError(f"{where}: concept {concept.id} is defined twice")
        vocabulary.concepts[concept.id] = concept
        synonyms = [s.strip() for s in cells[2].split("|") if s.strip()]
        starred = [s[1:] for s in synonyms if s.startswith("*")]
        for phrase in [concept.name, *(s.lstrip("*") for s in synonyms)]:
            vocabulary.radiology.add(key(phrase), concept.id, where)
        if cells[5]:
            rules[concept.id] = (where, cells[5])
            generic = starred or [concept.name, *synonyms]
            vocabulary.generic.update((concept.id, key(s)) for s in generic)
    return rules


def _parse_refine(vocabulary: Vocabulary, rules: dict[str, tuple[str, str]]) -> None:
    for concept_id, (where, rule) in rules.items():
        targets = []
        if rule.startswith(ADDITIVE):
            vocabulary.additive.add(concept_id)
            rule = rule[len(ADDITIVE) :]
        for part in rule.split(";"):
            target, _, words = part.partition("=")
            if (target not in vocabulary.concepts and target != NONE) or not words:
                raise VocabularyError(f"{where}: refine {part!r} names no known concept or no words")
            context = [key(w) for w in words.split(",") if w.strip()]
            single = frozenset(c[0] for c in context if len(c) == 1) | ({ANY} if words.strip() == ANY else set())
            targets.append((target, single, tuple(c for c in context if len(c) > 1)))
        vocabulary.refine[concept_id] = targets


def _read_icd10(vocabulary: Vocabulary, path: Path) -> None:
    """The fallback layer: code, name, terms, kind, regions. A concept or phrase the radiology layer has is skipped."""
    for where, cells in _rows(path):
        if len(cells) != 5:
            raise VocabularyError(f"{where}: {len(cells)} columns, expected 5 (code name terms kind regions)")
        phrases = [key(t) for t in [cells[1], *cells[2].split("|")] if t]
        phrases = [p for p in phrases if p not in vocabulary.radiology.phrases]
        if phrases:
            concept = _concept(where, ["icd10:" + cells[0], cells[1], "", cells[3], cells[4]])
            vocabulary.concepts[concept.id] = concept
            for phrase in phrases:
                vocabulary.icd10.add(phrase, concept.id, where)


def load(radiology: Path = RADIOLOGY_TERMS, icd10: Path | None = ICD10_TERMS) -> Vocabulary:
    """Both layers read and checked (VocabularyError on a bad line); `icd10=None` leaves the fallback out."""
    vocabulary = Vocabulary()
    rules = _read_radiology(vocabulary, radiology)
    _parse_refine(vocabulary, rules)
    if icd10 is not None:
        _read_icd10(vocabulary, icd10)
    return vocabulary


@lru_cache(maxsize=1)
def default_vocabulary() -> Vocabulary:
    """The shipped vocabulary, read once per process."""
    return load()
