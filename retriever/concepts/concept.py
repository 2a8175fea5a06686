"""The concept a report's item is linked to: one diagnosis or imaging finding of the vocabulary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: "appearance": a finding that names only a shape or a density, no disease or tissue process (opacity, lesion,
#: mass, nodule, cyst): true but uninformative, so the evidence ranks it after the specific ones (issue 48,
#: docs/decisions/2026-11-28-concept-candidates.md).
Kind = Literal["diagnosis", "finding", "appearance"]
KINDS: tuple[Kind, ...] = ("diagnosis", "finding", "appearance")
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
