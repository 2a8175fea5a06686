"""Prompt templates, one text file each, loaded by name: `load("diagnosis_rag")`.

A file starts with `version: N` (recorded in every answer and benchmark result, so a changed prompt is never
mistaken for an old one), an optional `description:` line and an optional `references:` line saying how retrieved
reports are shown (`reports`: each whole report in a <reference_report> block, the default; `impressions`: each
report's impression, shortened, as a ranked <candidate>; `evidence`: the diagnoses the reports affirm, each with its
support, as the choices of a constrained answer: assistant/rag/choice.py), then a `=== system ===` and a
`=== user ===` section.
Placeholders are `$name` (string.Template), so JSON braces in the text need no escaping and inserted values are
never re-read as template syntax.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from string import Template

_SECTION = re.compile(r"^=== (system|user) ===$", re.MULTILINE)
#: How a template wants retrieved reports rendered (assistant/rag/pipeline.py renders them).
REFERENCE_STYLES = ("reports", "impressions", "evidence")


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded template; `id` (`name@version`) is what results record."""

    name: str
    version: str
    description: str
    system: str
    user: str
    references: str = "reports"

    @property
    def id(self) -> str:
        return f"{self.name}@{self.version}"

    def messages(self, **values: str) -> list[dict[str, str]]:
        """System + user messages with placeholders filled; a missing value raises KeyError."""
        return [
            {"role": "system", "content": Template(self.system).substitute(values)},
            {"role": "user", "content": Template(self.user).substitute(values)},
        ]


def available() -> list[str]:
    """Names of the templates shipped in this package."""
    return sorted(p.name[:-4] for p in resources.files(__name__).iterdir() if p.name.endswith(".txt"))


def load(name: str) -> PromptTemplate:
    """Load `prompts/<name>.txt`; raises ValueError naming the available templates or the format problem."""
    if name not in available():
        raise ValueError(f"unknown prompt {name!r}; available: {', '.join(available())}")
    text = resources.files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    header, *rest = _SECTION.split(text)
    meta = dict(line.split(":", 1) for line in header.strip().splitlines() if ":" in line)
    sections = dict(zip(rest[::2], (body.strip() for body in rest[1::2]), strict=True))
    if "version" not in meta or set(sections) != {"system", "user"}:
        raise ValueError(f"prompt {name!r} needs a `version:` line and system and user sections")
    references = meta.get("references", REFERENCE_STYLES[0]).strip()
    if references not in REFERENCE_STYLES:
        raise ValueError(f"prompt {name!r}: `references:` must be one of {', '.join(REFERENCE_STYLES)}")
    return PromptTemplate(
        name=name,
        version=meta["version"].strip(),
        description=meta.get("description", "").strip(),
        system=sections["system"],
        user=sections["user"],
        references=references,
    )
