"""A diagnosis named by a user (`assistant search --diagnosis "pleural effusions"`) as a concept of the vocabulary.

Any name or synonym of either layer is read as the linker reads report text (retriever.concepts.normalize.key, after
look-alike letters and invisible characters are made plain), so case, plurals, British spellings and hyphens do not
matter; a concept id ("rad:pleural_effusion", "icd10:K80.20") is accepted too. An unknown name is an error that
lists the closest names of the vocabulary.
"""

from __future__ import annotations

import difflib
from functools import cache

from retriever.concepts.concept import Concept
from retriever.concepts.normalize import key
from retriever.concepts.vocabulary import default_vocabulary
from retriever.reports.judged_text import plain

#: Close names an error lists.
CLOSE = 5


class UnknownDiagnosis(ValueError):
    """A name no concept of the vocabulary has; the message lists the closest names."""


@cache
def _names() -> dict[str, str]:
    """Every name and synonym of the vocabulary, folded and joined by spaces -> concept id."""
    return {" ".join(phrase): concept_id for phrase, concept_id in default_vocabulary().names().items()}


def concept_named(name: str) -> Concept:
    """The concept `name` names (a name, synonym or concept id); UnknownDiagnosis listing close names otherwise."""
    concepts = default_vocabulary().concepts
    if name.strip() in concepts:
        return concepts[name.strip()]
    folded = " ".join(key(plain(name)))
    if folded in _names():
        return concepts[_names()[folded]]
    close = difflib.get_close_matches(folded, _names(), n=CLOSE, cutoff=0.75) if folded else []
    shown = [f"{concepts[_names()[c]].name} ({c})" if concepts[_names()[c]].name != c else c for c in close]
    known = f"close names: {'; '.join(dict.fromkeys(shown))}" if shown else "no name of the vocabulary is close"
    raise UnknownDiagnosis(f"no diagnosis named {name!r} in the vocabulary (radiology names over ICD-10-CM); {known}")
