"""Which vocabulary and linking rules a report's stored concepts were linked with: an index records it
(Manifest.concept_rules) so concepts linked by another vocabulary or linker are known to be stale (an answer then
links the conclusions itself, `assistant info` says so, and `assistant update` links every report anew) and are never
used silently.

Why the files themselves and not only a version number: the vocabulary is edited often (a synonym, a refine rule),
and a version someone forgets to bump would let an index answer with concepts the current vocabulary no longer
links. So the fingerprint is a hash of the vocabulary files and of the source of every module the linking reads
(LINKED_BY), with LINKER_VERSION for a change elsewhere. A change that leaves the links as they were still marks an
index stale: its answers stay right, only slower, until the next update.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

#: Bumped when linking changes in a way the files below do not show.
LINKER_VERSION = 1
_RETRIEVER = Path(__file__).resolve().parents[1]
#: The vocabulary files and the modules whose rules decide what a conclusion affirms (retriever/concepts/conclusion.py
#: and what it imports), relative to retriever/.
LINKED_BY = (
    "concepts/radiology_terms.tsv",
    "concepts/icd10_terms.tsv",
    "concepts/conclusion.py",
    "concepts/affirmed.py",
    "concepts/matcher.py",
    "concepts/normalize.py",
    "concepts/vocabulary.py",
    "concepts/concept.py",
    "negation/rules.py",
    "negation/scope.py",
    "negation/triggers.py",
    "negation/inflection.py",
    "reports/impression.py",
    "reports/judged_text.py",
)


@cache
def concept_rules() -> str:
    """The fingerprint of this program's vocabulary and linker (16 hex digits), computed once per process."""
    digest = hashlib.sha256(f"linker {LINKER_VERSION}\n".encode())
    for name in LINKED_BY:
        digest.update(f"{name}\n".encode())
        digest.update((_RETRIEVER / name).read_bytes())
    return digest.hexdigest()[:16]
