"""The product's settings: one frozen object, read from the environment once, where a command starts, and passed down.

Why one object: each part (paths, encoder, LLM, chat) used to read its own variables wherever it happened to need
them, so which value a run used depended on call order. Now `Settings.from_env(os.environ)` is called by each
`assistant` command (assistant/commands/shared.py) and everything below takes plain values. Flags win over the
environment, which wins over the defaults. Nothing here reads the environment on import.

The embedded model is the default LLM so `assistant ask` works on a laptop with nothing running; setting
`RADSEARCH_LLM_BASE_URL` switches to an OpenAI-compatible server (vLLM, llama.cpp server, Ollama).

Environment:
- paths (models/paths.py): RADSEARCH_HOME, XDG_DATA_HOME, RADSEARCH_INDEX;
- encoder: RADSEARCH_ENCODER_BACKEND (torch|onnx|onnx-int8, what `assistant index` builds with),
  RADSEARCH_ENCODER_DEVICE (cpu|cuda|...);
- LLM: RADSEARCH_LLM_BACKEND (embedded|openai), RADSEARCH_LLM_BASE_URL, RADSEARCH_LLM_MODEL, RADSEARCH_LLM_API_KEY,
  RADSEARCH_LLM_GGUF (qwen1.5b|smollm2|FILE.gguf), RADSEARCH_LLM_TIMEOUT (seconds), RADSEARCH_LLM_RETRIES,
  RADSEARCH_LLM_STRUCTURED (response_format|vllm|off; `off` also turns off the embedded model's JSON grammar, which
  cost 3x generation speed with Qwen's 151k vocabulary here), RADSEARCH_LLM_CONTEXT (tokens), RADSEARCH_LLM_THREADS;
- chat: RADSEARCH_CHAT_AUTH (USER:PASSWORD, kept out of the process list), RADSEARCH_CHAT_TRUSTED_PROXIES (the
  reverse proxies whose X-Forwarded-For names the client; none by default);
- preset: RADSEARCH_PRESET (a named overlay of models/presets/: `default`, `paper`; `--preset` wins);
- search: RADSEARCH_ABBREVIATIONS (a CSV with columns abbr,expansion merged over the built-in shorthand tables),
  RADSEARCH_ABBREVIATION_EXPANSION (on|off; retriever/search/abbreviations.py), RADSEARCH_RERANKER (the second stage
  that re-scores the top hits of every search: `support`, the default, the model-free support check of
  retriever/search/support.py; a re-ranker trained by `assistant train-reranker`, by name or folder; `NAME@0.5` to set
  its share of the score; `off` for none).

One configuration hash (`Settings.configuration_hash`, computed by `configuration_hash` here and nowhere else) covers
everything in the settings that changes an answer, query expansion included: answers carry it (assistant/rag/build.py),
the warm server answers only a client whose settings give its own hash (assistant/warm/address.py), and results
provenance records it (eval/common/provenance.py).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from assistant.llm.base import Structured
from models.paths import DataPaths
from models.preset import DEFAULT_PRESET, PRESET, Preset, SearchCard, SearchPreset, named_preset, search_card

if TYPE_CHECKING:
    from retriever.index.manifest import Manifest
    from retriever.search.abbreviations import QueryExpander
    from retriever.search.configuration import SearchConfiguration
    from retriever.search.rerank import SecondStage

Backend = Literal["embedded", "openai"]

DEFAULT_GGUF = PRESET.answer.llm
#: Characters of the SHA-256 kept: enough to tell configurations apart, short enough to read in a table.
HASH_CHARS = 16


def configuration_hash(configuration: Mapping[str, Any]) -> str:
    """SHA-256 (first HASH_CHARS hex digits) of a configuration's canonical JSON (sorted keys, no spaces): the one
    configuration hash of the project."""
    canonical = json.dumps(configuration, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:HASH_CHARS]


def _index_backend() -> str:
    """The encoder backend measured best for indexing (retriever/encoders/encoder.py), imported only when needed."""
    from retriever.encoders.backends import INDEX_BACKEND

    return INDEX_BACKEND


@dataclass(frozen=True)
class EncoderSettings:
    """How encoders run: `backend` is what new indexes are built with (searches use the index's own), `device`
    where the forward pass runs."""

    backend: str = field(default_factory=_index_backend)
    device: str = "cpu"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> EncoderSettings:
        from retriever.encoders.backends import BACKENDS

        backend = env.get("RADSEARCH_ENCODER_BACKEND") or _index_backend()
        if backend not in BACKENDS:
            raise ValueError(f"RADSEARCH_ENCODER_BACKEND={backend!r}: choose one of {', '.join(BACKENDS)}")
        return cls(backend=backend, device=env.get("RADSEARCH_ENCODER_DEVICE") or "cpu")


def _number(env: Mapping[str, str], name: str, default: str, kind: type, what: str, *, minimum: float) -> Any:
    """The variable `name` read as `kind` (int or float), above `minimum` and finite; ValueError naming the variable
    and what it must be (a negative, zero or nan deadline used to be taken and later reported as a dead backend)."""
    raw = env.get(name) or default
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r}: must be {what}") from None
    if not math.isfinite(value) or value <= minimum:
        raise ValueError(f"{name}={raw!r}: must be {what}")
    return value


@dataclass(frozen=True)
class LLMSettings:
    """Everything needed to build a backend. `model` is the served model name (openai) or a GGUF name/path;
    `served_model` is RADSEARCH_LLM_MODEL, the name `--backend openai` falls back to when the environment chose
    the embedded model."""

    backend: Backend = "embedded"
    model: str = DEFAULT_GGUF
    base_url: str | None = None
    api_key: str = "not-needed"
    timeout_s: float = 120.0
    max_retries: int = 2
    structured: Structured = "response_format"
    context_tokens: int | None = None
    n_threads: int = 2
    served_model: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> LLMSettings:
        """Read RADSEARCH_LLM_* variables; a base URL without an explicit backend means `openai`."""
        base_url = env.get("RADSEARCH_LLM_BASE_URL") or None
        backend = env.get("RADSEARCH_LLM_BACKEND") or ("openai" if base_url else "embedded")
        if backend not in ("embedded", "openai"):
            raise ValueError(f"RADSEARCH_LLM_BACKEND must be embedded or openai, not {backend!r}")
        structured = env.get("RADSEARCH_LLM_STRUCTURED", "response_format")
        if structured not in ("response_format", "vllm", "off"):
            raise ValueError(f"RADSEARCH_LLM_STRUCTURED must be response_format, vllm or off, not {structured!r}")
        served_model = env.get("RADSEARCH_LLM_MODEL", "")
        gguf = env.get("RADSEARCH_LLM_GGUF") or served_model or DEFAULT_GGUF
        model = served_model if backend == "openai" else gguf
        context = env.get("RADSEARCH_LLM_CONTEXT")
        return cls(
            backend=backend,  # type: ignore[arg-type]
            model=model,
            base_url=base_url,
            api_key=env.get("RADSEARCH_LLM_API_KEY", "not-needed"),
            timeout_s=_number(env, "RADSEARCH_LLM_TIMEOUT", "120", float, "a number of seconds above 0", minimum=0),
            max_retries=_number(env, "RADSEARCH_LLM_RETRIES", "2", int, "a whole number, 0 or more", minimum=-1),
            structured=structured,  # type: ignore[arg-type]
            context_tokens=_number(env, "RADSEARCH_LLM_CONTEXT", context, int, "a token count above 0", minimum=0)
            if context
            else None,
            n_threads=_number(env, "RADSEARCH_LLM_THREADS", "2", int, "a thread count above 0", minimum=0),
            served_model=served_model,
        )

    def with_flags(self, *, backend: str | None = None, model: str | None = None) -> LLMSettings:
        """Apply CLI flags. Switching backend by flag drops a model name that belongs to the other backend."""
        settings = self
        if backend is not None and backend != self.backend:
            if backend not in ("embedded", "openai"):
                raise ValueError(f"--backend must be embedded or openai, not {backend!r}")
            default_model = DEFAULT_GGUF if backend == "embedded" else self.served_model
            settings = replace(settings, backend=backend, model=default_model)  # type: ignore[arg-type]
        if model:
            settings = replace(settings, model=model)
        return settings

    def describe(self) -> str:
        """Which model answers, for people: `embedded qwen1.5b`, or the served model and the server."""
        if self.backend == "openai":
            return f"{self.model or 'server default'} at {self.base_url}"
        return f"embedded {self.model}"


@dataclass(frozen=True)
class ChatSettings:
    """The chat's settings from the environment; the rest of its set-up comes from flags (ChatConfig,
    assistant/chat/service.py)."""

    auth: str | None = None
    #: Addresses of reverse proxies whose X-Forwarded-For is believed (RADSEARCH_CHAT_TRUSTED_PROXIES, comma-separated;
    #: none by default): anyone else could name a new address on every sign-in attempt and never be limited.
    trusted_proxies: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ChatSettings:
        proxies = tuple(p.strip() for p in (env.get("RADSEARCH_CHAT_TRUSTED_PROXIES") or "").split(",") if p.strip())
        return cls(auth=env.get("RADSEARCH_CHAT_AUTH") or None, trusted_proxies=proxies)


#: A second stage left to the values measured for the index's encoder (models/preset.json).
MEASURED = "measured"


def reranker_setting(value: str | None) -> str | None:
    """A re-ranker name or folder as given, None for unset, empty or `off`."""
    value = (value or "").strip()
    return None if value.lower() in ("", "off") else value


@cache
def _expander(table: Path | None, enabled: bool) -> QueryExpander:
    from retriever.search.abbreviations import make_expander

    return make_expander(table, enabled=enabled)


@dataclass(frozen=True)
class SearchSettings:
    """Query-side abbreviation expansion: on with the built-in tables unless switched off; `abbreviations` is a
    user table (CSV abbr,expansion) whose rows win over the built-in ones. `method` and `reranker` (a second stage's
    name or folder; None: none) as chosen by a flag or RADSEARCH_RERANKER; left at None and MEASURED, an index is
    searched with its manifest's search card unless the named preset overlays it (`overlaid`); one built before
    cards with `measured`, the preset's per-encoder table (an unmeasured encoder: the default encoder's)."""

    expand_abbreviations: bool = True
    abbreviations: Path | None = None
    reranker: str | None = MEASURED
    method: str | None = None
    measured: tuple[tuple[str, SearchPreset], ...] = tuple(PRESET.search.items())
    default_encoder: str = PRESET.encoder
    overlaid: tuple[str, ...] = ()  # encoders whose values the named preset writes over (`paper`): explicit

    def input_files(self) -> list[Path]:
        """The files these settings read (the abbreviation table): inputs that no output may write over (issue 51:
        `--rejects` once replaced the table)."""
        return [self.abbreviations] if self.abbreviations is not None else []

    @classmethod
    def from_env(cls, env: Mapping[str, str], preset: Preset = PRESET) -> SearchSettings:
        switch = (env.get("RADSEARCH_ABBREVIATION_EXPANSION") or "on").strip().lower()
        if switch not in ("on", "off"):
            raise ValueError(f"RADSEARCH_ABBREVIATION_EXPANSION must be on or off, not {switch!r}")
        table = env.get("RADSEARCH_ABBREVIATIONS") or None
        named = env.get("RADSEARCH_RERANKER")
        return cls(
            expand_abbreviations=switch == "on",
            abbreviations=Path(table) if table else None,
            reranker=reranker_setting(named) if named else MEASURED,
            measured=tuple(preset.search.items()),
            default_encoder=preset.encoder,
            overlaid=preset.overlaid_search,
        )

    def tuned(self, encoder: str | None = None) -> SearchCard:
        """The search values measured for `encoder` (None, or one no rule measured: the default encoder's)."""
        return search_card(dict(self.measured), self.default_encoder, encoder or self.default_encoder)

    def values_for(self, manifest: Manifest | None) -> SearchCard:
        """The values an index is searched with before flags: its manifest's card unless the named preset overlays
        them; an index built before cards (or None, no index) takes the preset's."""
        if manifest is None or manifest.search is None:
            return self.tuned(manifest.encoder.name if manifest is not None else None)
        card = manifest.search
        return self.tuned(card.measured_for) if card.measured_for in self.overlaid else card

    def method_for(self, values: SearchPreset | None = None) -> str:
        """The method with `values` (None: the default encoder's): the flag's, else theirs."""
        return self.method or (values or self.tuned()).method

    def stage_for(self, values: SearchPreset | None = None) -> str | None:
        """The second stage with `values` (None: the default encoder's): the flag's or RADSEARCH_RERANKER's, else
        theirs (None: none)."""
        return (values or self.tuned()).second_stage if self.reranker == MEASURED else self.reranker

    def configure(self, manifest: Manifest) -> SearchConfiguration:
        """How the index of `manifest` is searched under these settings (ReportIndex.load takes this method): its
        values (`values_for`), with the method and second stage the user chose, and these settings' expander."""
        from retriever.search.configuration import SearchConfiguration, second_stage_named
        from retriever.search.methods import checked_method

        values = self.values_for(manifest)
        stage = self.stage_for(values)
        return SearchConfiguration(
            method=checked_method(self.method_for(values)),
            dense_weight=values.dense_weight,
            second_stage=second_stage_named(stage, values.second_stage_weight) if stage else None,
            query_expander=self.expander(),
        )

    def configuration(self) -> dict[str, Any]:
        """What of the search changes an answer: the method and second stage chosen (None and `measured`: the
        per-encoder values, which are included), and query expansion (on or off, and the user table's content
        digest, so an edited table is another configuration)."""
        table = self.abbreviations
        digest = hashlib.sha256(table.read_bytes()).hexdigest()[:HASH_CHARS] if table and table.is_file() else None
        measured = {name: {k: v for k, v in vars(values).items() if k != "chosen_by"} for name, values in self.measured}
        return {
            "method": self.method,
            "second_stage": self.reranker,
            "measured": measured,
            "default_encoder": self.default_encoder,
            "query_expansion": {
                "on": self.expand_abbreviations,
                "table": str(table) if table else None,
                "sha256": digest,
            },
        }

    def load_reranker(self, flag: str | None = None) -> SecondStage | None:
        """The re-ranker `--reranker` (`flag`, which wins; "off": none) or these settings name for an index of the
        default encoder, loaded (None when none is named): a command checks the name before it serves, and a
        benchmark searches with it. ModelNotAvailable when the name is not a trained re-ranker."""
        name = reranker_setting(flag) if flag is not None else self.stage_for()
        from retriever.search.configuration import second_stage_named

        return second_stage_named(name, self.tuned().second_stage_weight) if name else None

    def expander(self) -> QueryExpander:
        """The expander these settings ask for, read once per process (AbbreviationTableError, a ValueError, for a
        malformed table). Every index a command searches is given it: nothing is set process-wide."""
        return _expander(self.abbreviations, self.expand_abbreviations)


@dataclass(frozen=True)
class AnswerSettings:
    """How answers are made (models/preset.json's `answer`, overlaid by the chosen preset): the mode
    (assistant/rag/modes.py), the reports read (k) and the field they are matched on, each mode's prompt, and the
    evidence differential's weighting."""

    mode: str = PRESET.answer.mode
    k: int = PRESET.answer.k
    field: str = PRESET.answer.field
    prompts: tuple[tuple[str, str], ...] = tuple(PRESET.answer.prompts.items())
    evidence_weighting: str = PRESET.answer.evidence_weighting

    @classmethod
    def from_preset(cls, preset: Preset) -> AnswerSettings:
        answer = preset.answer
        return cls(answer.mode, answer.k, answer.field, tuple(answer.prompts.items()), answer.evidence_weighting)

    def prompt(self, mode: str) -> str | None:
        """The prompt `mode` asks a model with (None: the evidence mode asks none)."""
        return dict(self.prompts).get(mode)


def preset_name(env: Mapping[str, str], flag: str | None = None) -> str:
    """The preset chosen: `flag` (`--preset`), else RADSEARCH_PRESET, else `default`."""
    return flag or env.get("RADSEARCH_PRESET") or DEFAULT_PRESET


@dataclass(frozen=True)
class Settings:
    """All settings, by part. `Settings()` is the defaults alone (no environment): what tests start from."""

    paths: DataPaths = field(default_factory=DataPaths)
    encoder: EncoderSettings = field(default_factory=EncoderSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    chat: ChatSettings = field(default_factory=ChatSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    answer: AnswerSettings = field(default_factory=AnswerSettings)
    preset: str = DEFAULT_PRESET

    @classmethod
    def from_env(cls, env: Mapping[str, str], preset: str | None = None) -> Settings:
        """Read every part over the chosen preset (`preset`, the `--preset` flag, else RADSEARCH_PRESET); ValueError
        names the variable or preset whose value is refused."""
        name = preset_name(env, preset)
        chosen = named_preset(name)
        return cls(
            paths=DataPaths.from_env(env),
            encoder=EncoderSettings.from_env(env),
            llm=LLMSettings.from_env(env),
            chat=ChatSettings.from_env(env),
            search=SearchSettings.from_env(env, chosen),
            answer=AnswerSettings.from_preset(chosen),
            preset=name,
        )

    def configuration(self) -> dict[str, Any]:
        """Everything in the settings that changes an answer: the preset, the answer and search values, the model
        (not its API key) and the encoder's backend, and the default index."""
        llm = {name: value for name, value in vars(self.llm).items() if name != "api_key"}
        return {
            "preset": self.preset,
            "answer": vars(self.answer) | {"prompts": dict(self.answer.prompts)},
            "search": self.search.configuration(),
            "llm": llm,
            "encoder": vars(self.encoder),
            "index": str(self.paths.default_index),
        }

    def with_flags(self, **flags: Any) -> Settings:
        """These settings with a command's flags applied (None: not given): `mode`, `k`, `field`,
        `evidence_weighting`, `prompt` (the mode's prompt), `method`, `reranker` (`off`: none), `backend`, `model`
        and `index` (a folder)."""
        given = {name: value for name, value in flags.items() if value is not None}
        answer = replace(
            self.answer, **{n: given[n] for n in ("mode", "k", "field", "evidence_weighting") if n in given}
        )
        if "prompt" in given:
            answer = replace(answer, prompts=tuple({**dict(answer.prompts), answer.mode: given["prompt"]}.items()))
        search = replace(self.search, **({"method": given["method"]} if "method" in given else {}))
        if "reranker" in given:
            search = replace(search, reranker=reranker_setting(given["reranker"]))
        paths = replace(self.paths, index=Path(given["index"])) if "index" in given else self.paths
        llm = self.llm.with_flags(backend=given.get("backend"), model=given.get("model"))
        return replace(self, answer=answer, search=search, paths=paths, llm=llm)

    @property
    def configuration_hash(self) -> str:
        """The one configuration hash (see the module docstring)."""
        return configuration_hash(self.configuration())
