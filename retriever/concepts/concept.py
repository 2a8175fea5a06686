"""The concept a report's item is linked to: one diagnosis or imaging finding of the vocabulary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["diagnosis", "finding"]
KINDS: tuple[Kind, ...] = ("diagnosis", "finding")
#: Body regions a concept occurs in; a concept without regions occurs anywhere.
REGIONS = ("chest", "abdomen", "pelvis", "neuro", "spine", "msk", "breast", "vascular", "head_neck")


@dataclass(frozen=True)
class Concept:
    """A diagnosis or imaging finding: `id` is stable ("rad:pleural_effusion", "icd10:K80.20"), `name` is the
    preferred radiology name shown to users (lower case), `regions` the body regions it occurs in (() = any)."""

    id: str
    name: str
    kind: Kind
    regions: tuple[str, ...] = ()
