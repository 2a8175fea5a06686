"""The preset: the one place every tuned default of the product is written (models/preset.json).

Why one file: the defaults were constants in seven modules, and an index built with one encoder was searched with the
method and weights measured for another. Each value here is written by the benchmark rule that chose it (on the dev
split; the file each came from is named beside it), settings and commands read it, and tests/models/test_preset.py fails
when a product module defines a tuned default of its own. Search values belong to the encoder they were measured
with: `search_for(encoder)` is None for an encoder no rule has measured, and search then says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

PRESET_FILE = Path(__file__).resolve().parent / "preset.json"
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class SearchPreset:
    """How indexes built with one encoder are searched: the fusion method, its dense share, and the second stage
    (None: none) with its share of a re-scored hit's score."""

    method: str
    dense_weight: float
    second_stage: str | None
    second_stage_weight: float
    chosen_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnswerPreset:
    """How `assistant ask`, the chat and the diagnosis benchmark answer: the report field matched, the reports the
    model reads (k; the evidence differential reads them all), the prompts with and without retrieval, the embedded
    LLM, and how the evidence differential weighs a report by its rank (assistant/rag/evidence.py)."""

    field: str
    k: int
    prompt: str
    norag_prompt: str
    llm: str
    evidence_weighting: str = "rank"
    chosen_by: str = ""


@dataclass(frozen=True)
class Preset:
    """The default encoder (and the recipe that trains it), search values per encoder, and the answer settings."""

    encoder: str
    recipe: dict[str, Any]
    search: dict[str, SearchPreset]
    answer: AnswerPreset
    encoder_chosen_by: str = ""
    source: Path = field(default=PRESET_FILE, compare=False)

    def search_for(self, encoder: str) -> SearchPreset | None:
        """The search values measured best for indexes of `encoder` (its registry or trained name), None if none."""
        return self.search.get(encoder)

    @property
    def default_search(self) -> SearchPreset:
        """The search values of the default encoder (what a fresh `assistant index` builds with)."""
        found = self.search_for(self.encoder)
        if found is None:
            raise ValueError(f"{self.source}: no search values for the default encoder {self.encoder!r}")
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "encoder": {"name": self.encoder, "chosen_by": self.encoder_chosen_by, "recipe": self.recipe},
            "search": {
                name: {**vars(values), "chosen_by": list(values.chosen_by)} for name, values in self.search.items()
            },
            "answer": vars(self.answer),
        }


def parse_preset(raw: dict[str, Any], source: Path = PRESET_FILE) -> Preset:
    """A Preset from the JSON object (ValueError naming the file and what is wrong)."""
    try:
        if raw["schema_version"] != SCHEMA_VERSION:
            raise ValueError(f"schema_version {raw['schema_version']!r}, expected {SCHEMA_VERSION}")
        search = {
            name: SearchPreset(**{**values, "chosen_by": tuple(values.get("chosen_by", ()))})
            for name, values in raw["search"].items()
        }
        return Preset(
            encoder=raw["encoder"]["name"],
            recipe=raw["encoder"]["recipe"],
            search=search,
            answer=AnswerPreset(**raw["answer"]),
            encoder_chosen_by=raw["encoder"].get("chosen_by", ""),
            source=source,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{source}: not a valid preset ({exc})") from exc


@cache
def load_preset(path: Path = PRESET_FILE) -> Preset:
    """The preset in `path` (read once per process)."""
    return parse_preset(json.loads(path.read_text(encoding="utf-8")), path)


def write_preset(preset: Preset, path: Path = PRESET_FILE) -> None:
    """Write `preset` (the benchmark rules call this when told to adopt their choice) and forget the cached read."""
    from models.atomic import write_atomic

    write_atomic(path, json.dumps(preset.to_json(), indent=2) + "\n")
    load_preset.cache_clear()


def adopt_search(encoder: str, source: str, path: Path = PRESET_FILE, **values: Any) -> Preset:
    """Write the search `values` a benchmark rule chose for `encoder` (a new entry starts from the default encoder's
    values), naming `source`, the results file of the choice, among those it was chosen by; the new preset."""
    from dataclasses import replace

    current = load_preset(path)
    before = current.search_for(encoder) or replace(current.default_search, chosen_by=())
    chosen_by = tuple(dict.fromkeys((*before.chosen_by, source)))
    updated = replace(current, search={**current.search, encoder: replace(before, **values, chosen_by=chosen_by)})
    write_preset(updated, path)
    return updated


PRESET = load_preset()
