"""The preset: the one place every tuned default of the product is written (models/preset.json).

Why one file: the defaults were constants in seven modules, and an index built with one encoder was searched with the
method and weights measured for another. Each value here is written by the benchmark rule that chose it (on the dev
split; the file each came from is named beside it), settings and commands read it, and tests/models/test_preset.py fails
when a product module defines a tuned default of its own. Search values belong to the encoder they were measured
with: `search_for(encoder)` is None for an encoder no rule has measured, and search then says so.

Named presets (models/presets/NAME.json) are partial overlays on the tuned file, as paper-qa's configs are: `default`
overlays nothing, `paper` is the RadSearch paper's setting (dense search, the top report, the free-text prompt).
`assistant --preset NAME` or RADSEARCH_PRESET chooses one (assistant/settings.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

PRESET_FILE = Path(__file__).resolve().parent / "preset.json"
PRESETS_DIR = Path(__file__).resolve().parent / "presets"
DEFAULT_PRESET = "default"
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
class SearchCard(SearchPreset):
    """The search values an index was built with, written into its manifest (retriever/index/manifest.py) so the
    index says how it is searched: those measured for `measured_for`, its encoder, or the default encoder's when no
    rule measured its own. Why: a later benchmark that writes new values into the preset must not change how an
    index built before it is searched; the values travel with the encoder that was measured."""

    measured_for: str = ""


def search_card(measured: Mapping[str, SearchPreset], default_encoder: str, encoder: str) -> SearchCard:
    """The card of an index of `encoder` under the per-encoder table `measured`: its own values, else (no rule
    measured it) the default encoder's."""
    chosen = encoder if encoder in measured else default_encoder
    if chosen not in measured:
        raise ValueError(f"no search values for the default encoder {default_encoder!r}")
    return SearchCard(**vars(measured[chosen]), measured_for=chosen)


@dataclass(frozen=True)
class AnswerPreset:
    """How `assistant ask`, the chat and the diagnosis benchmark answer: the answer mode (assistant/rag/modes.py), the
    report field matched, the reports the answer reads (k; the evidence differential reads them all), the prompt of
    each mode that asks a model, the embedded LLM, and how the evidence differential weighs a report by its rank
    (assistant/rag/evidence.py)."""

    mode: str
    field: str
    k: int
    prompts: dict[str, str]
    llm: str
    evidence_weighting: str = "rank"
    #: How much an appearance (a concept of kind "appearance": opacity, lesion, mass) counts against a specific
    #: concept when the evidence ranks its candidates (assistant/rag/evidence.py).
    evidence_appearance_weight: float = 1.0
    chosen_by: str = ""
    evidence_appearance_weight_chosen_by: str = ""


@dataclass(frozen=True)
class Preset:
    """The default encoder (and the recipe that trains it), search values per encoder, and the answer settings."""

    encoder: str
    recipe: dict[str, Any]
    search: dict[str, SearchPreset]
    answer: AnswerPreset
    encoder_chosen_by: str = ""
    #: The encoder backend `assistant index` builds with (retriever/encoders/backends.py), and the cross-encoder
    #: re-ranker's share of a re-scored hit's score (retriever/search/rerank.py).
    index_backend: str = ""
    rerank_weight: float = 0.0
    #: The results files the two were chosen by.
    index_backend_chosen_by: str = ""
    rerank_chosen_by: str = ""
    #: The encoders whose search values the named preset (models/presets/NAME.json) writes over: a user's explicit
    #: choice, which wins over the values an index's manifest records (`paper` searches every index densely).
    overlaid_search: tuple[str, ...] = ()
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

    def card_for(self, encoder: str) -> SearchCard:
        """The search card an index built with `encoder` records (`search_card`)."""
        return search_card(self.search, self.encoder, encoder)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "encoder": {
                "name": self.encoder,
                "chosen_by": self.encoder_chosen_by,
                "index_backend": self.index_backend,
                "index_backend_chosen_by": self.index_backend_chosen_by,
                "recipe": self.recipe,
            },
            "rerank": {"weight": self.rerank_weight, "chosen_by": self.rerank_chosen_by},
            "search": {
                name: {**vars(values), "chosen_by": list(values.chosen_by)} for name, values in self.search.items()
            },
            "answer": vars(self.answer),
        }


def parse_preset(raw: dict[str, Any], source: Path = PRESET_FILE, overlaid: Iterable[str] = ()) -> Preset:
    """A Preset from the JSON object (ValueError naming the file and what is wrong); `overlaid`: the encoders whose
    search values a named preset wrote over."""
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
            index_backend=raw["encoder"]["index_backend"],
            rerank_weight=float(raw["rerank"]["weight"]),
            index_backend_chosen_by=raw["encoder"].get("index_backend_chosen_by", ""),
            rerank_chosen_by=raw["rerank"].get("chosen_by", ""),
            overlaid_search=tuple(overlaid),
            source=source,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{source}: not a valid preset ({exc})") from exc


@cache
def load_preset(path: Path = PRESET_FILE) -> Preset:
    """The preset in `path` (read once per process)."""
    return parse_preset(json.loads(path.read_text(encoding="utf-8")), path)


def overlay(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    """`base` with `layer` written over it, key by key into nested objects (a layer's value replaces a base value
    that is not an object)."""
    merged = dict(base)
    for key, value in layer.items():
        merged[key] = (
            overlay(base[key], value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
        )
    return merged


def preset_names() -> list[str]:
    """The named presets (models/presets/*.json)."""
    return sorted(p.stem for p in PRESETS_DIR.glob("*.json"))


@cache
def named_preset(name: str = DEFAULT_PRESET) -> Preset:
    """The tuned preset with the overlay `name` written over it (ValueError naming the presets there are)."""
    layer_file = PRESETS_DIR / f"{name}.json"
    if not layer_file.is_file():
        raise ValueError(f"no preset named {name!r}: choose one of {', '.join(preset_names())}")
    layer = json.loads(layer_file.read_text(encoding="utf-8"))
    layer.pop("description", None)
    raw = json.loads(PRESET_FILE.read_text(encoding="utf-8"))
    return parse_preset(overlay(raw, layer), layer_file, layer.get("search", {}))


def write_preset(preset: Preset, path: Path = PRESET_FILE) -> None:
    """Write `preset` (the benchmark rules call this when told to adopt their choice) and forget the cached read."""
    from models.atomic import write_atomic

    write_atomic(path, json.dumps(preset.to_json(), indent=2) + "\n")
    load_preset.cache_clear()
    named_preset.cache_clear()


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
