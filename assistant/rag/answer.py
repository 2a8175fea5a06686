"""The structured answer the assistant gives, and a parser that gets one out of whatever a model wrote.

Small CPU models (and servers without structured output) do not always return clean JSON: they wrap it in code
fences, stop mid-object at the token limit, or answer in prose. The parser tries, in order: the whole text as
JSON, fenced blocks, the outermost {...}, a repaired truncated object, then labelled plain text
("Diagnosis: ...").
Only output with nothing usable in it (empty, or JSON debris) is `UnparseableOutput`; which
route succeeded is recorded as `parse_mode` so benchmarks can count them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from assistant.text import shorten
from retriever.search.hit import Hit

MAX_DIAGNOSIS_CHARS = 300
MAX_ITEM_CHARS = 200
MAX_RATIONALE_CHARS = 2000
MAX_DIFFERENTIAL = 8

#: Why an answer has no diagnosis; `ruled_out`: the model's diagnosis is negated by the findings or by every report
#: it cites, and no diagnosis of the evidence is left in its place (assistant/rag/grounding.py); `no_evidence`: an
#: answer from the evidence alone, and no similar report affirms a diagnosis; `no_abnormality`: the findings describe
#: nothing abnormal ("No pneumothorax."), so there is no disease to name; `no_finding`: the question names nothing a
#: finding is made of ("hello", "N/A"), so nothing is searched (both: assistant/rag/question.py).
DegradedKind = Literal[
    "backend_unavailable", "timeout", "unparseable", "ruled_out", "no_evidence", "no_abnormality", "no_finding"
]
#: The kinds that say something about the question or its evidence, not that a part failed: there is no diagnosis to
#: give. Every view words them as "No diagnosis", never as a failure of the language model (which no evidence answer
#: even asks).
NO_DIAGNOSIS_KINDS: frozenset[str] = frozenset({"ruled_out", "no_evidence", "no_abnormality", "no_finding"})
#: `fallback`: the model was asked to choose among the evidence and its choice could not be read (or named nothing),
#: so the evidence's best candidate was given (assistant/rag/pipeline.py); benchmarks count these.
ParseMode = Literal["json", "fenced_json", "embedded_json", "repaired_json", "plain_text", "fallback"]


class UnparseableOutput(ValueError):
    """The model's output holds no usable answer (empty, or JSON debris without a diagnosis)."""


#: A retrieved report in an answer's JSON (`Answer.to_dict`, `ask --json`): these keys of the hit's metadata, the
#: shape answers have always had.
RETRIEVED_KEYS = (
    "report_id",
    "rank",
    "score",
    "field",
    "impression",
    "findings",
    "modality",
    "source",
    "contradicts",
    "partly_contradicts",
)


def retrieved_json(hit: Hit) -> dict[str, Any]:
    """A retrieved report as an answer's JSON shows it (its shown impression; an unknown field as ""), as it always
    was."""
    shown = {"field": hit.field or "", "impression": hit.report.shown_impression}
    metadata = hit.to_metadata() | shown
    return {key: metadata[key] for key in RETRIEVED_KEYS}


def retrieved_hit(data: Mapping[str, Any]) -> Hit:
    """A retrieved report back from an answer's JSON (`retrieved_json`): all that ask shows of it; the report's whole
    text, labels and metadata and the search method are not in that shape, and stay empty or unknown."""
    return Hit.from_metadata(data, rank=data["rank"], report_id=data["report_id"], text="")


@dataclass(frozen=True)
class Retrieval:
    """What an answer will rest on, streamed before the model is asked (it can take minutes on a CPU): the
    retrieved reports and the evidence differential read from them (`Answer.evidence`'s shape)."""

    retrieved: list[Hit]
    evidence: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"retrieved": [retrieved_json(hit) for hit in self.retrieved], "evidence": self.evidence}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Retrieval:
        """Back from `to_dict` (the warm server's stream, assistant/warm/)."""
        return cls([retrieved_hit(r) for r in data["retrieved"]], dict(data["evidence"]))


@dataclass(frozen=True)
class ParsedOutput:
    """The model's answer fields, before the pipeline adds retrieval and provenance."""

    diagnosis: str
    differential: list[str]
    rationale: str
    cited_report_ids: list[str]
    mode: ParseMode


@dataclass
class Answer:
    """What `assistant ask`, the chat and the benchmarks get back.

    `degraded` answers carry no diagnosis but still the retrieved reports (retrieval-only result) and say why.
    `notes` lists everything the user should know happened on the way (truncation, dropped citations).
    """

    query: str
    diagnosis: str | None
    differential: list[str]
    rationale: str
    cited_report_ids: list[str]
    retrieved: list[Hit]
    model_id: str | None
    prompt_id: str
    timings: dict[str, float] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    parse_mode: ParseMode | None = None
    notes: list[str] = field(default_factory=list)
    degraded: bool = False
    degraded_kind: DegradedKind | None = None
    degraded_reason: str | None = None
    raw_output: str = ""
    #: What produced the answer (encoder, index, search, prompt, model and sampling: assistant/rag/configuration.py)
    #: and one hash over it: equal hashes, equal configurations.
    configuration: dict[str, Any] = field(default_factory=dict)
    configuration_hash: str = ""
    #: The evidence differential of the retrieved reports (assistant/rag/evidence.py, EvidenceDifferential.to_dict):
    #: the diagnoses they affirm, each with its supporting report ids; empty without retrieval.
    evidence: dict[str, Any] = field(default_factory=dict)
    #: Set when the model's own diagnosis was ruled out by its evidence and replaced: {"replaced": ..., "reason": ...}.
    grounding: dict[str, str] = field(default_factory=dict)
    #: How strong the evidence for the diagnosis is (assistant/rag/strength.py): {"level", "measure", "words"}; empty
    #: without a diagnosis or without retrieval.
    strength: dict[str, Any] = field(default_factory=dict)
    #: The model's own diagnosis and differential from the findings alone, shown beside weak evidence and labelled as
    #: such (assistant/rag/beside.py): {"diagnosis", "differential", "model_id"}; empty otherwise.
    model_knowledge: dict[str, Any] = field(default_factory=dict)

    @property
    def no_diagnosis(self) -> bool:
        """Degraded because there is nothing to diagnose or nothing affirms a diagnosis (NO_DIAGNOSIS_KINDS), not
        because the model or its backend failed."""
        return self.degraded and self.degraded_kind in NO_DIAGNOSIS_KINDS

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (for `--json` and benchmark result files)."""
        data = asdict(replace(self, retrieved=[]))
        data["retrieved"] = [retrieved_json(hit) for hit in self.retrieved]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Answer:
        """Back from `to_dict` (the warm server's stream, assistant/warm/)."""
        return cls(**{**data, "retrieved": [retrieved_hit(r) for r in data["retrieved"]]})


def answer_schema(report_ids: Sequence[str]) -> dict[str, Any]:
    """JSON schema for the model's output. Citations are limited to the ids actually retrieved, so a
    constrained model cannot invent report ids. String lengths are deliberately not bounded: llama-cpp-python
    expands `maxLength` into one grammar rule per character, which made generation 3x slower; `max_tokens`
    bounds the answer instead."""
    ids = list(dict.fromkeys(report_ids))
    cited: dict[str, Any] = {"type": "array", "items": {"type": "string"}, "maxItems": 0}
    if ids:
        cited = {"type": "array", "items": {"type": "string", "enum": ids}, "maxItems": len(ids)}
    return {
        "type": "object",
        "properties": {
            "diagnosis": {"type": "string"},
            "differential": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
            "rationale": {"type": "string"},
            "cited_report_ids": cited,
        },
        "required": ["diagnosis", "differential", "rationale", "cited_report_ids"],
        "additionalProperties": False,
    }


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)(?:```|$)", re.DOTALL)
_LABEL = re.compile(r"^\W*(?:most likely )?(diagnosis|impression)\s*[:\-]\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_DIFF_LABEL = re.compile(r"^\W*differential(?: diagnos[ie]s)?\s*[:\-]\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_RATIONALE_LABEL = re.compile(r"^\W*(?:rationale|reason(?:ing)?)\s*[:\-]\s*(.+)$", re.IGNORECASE | re.MULTILINE)


def _clip(text: str, limit: int) -> str:
    """One line (whitespace runs collapsed), shortened like every other preview."""
    return shorten(" ".join(text.split()), limit)


def _once(text: str) -> str:
    """The text with every sentence that repeats an earlier one (case and spacing aside) left out, and a cut-off last
    sentence that only starts one again: a small model at temperature 0 can loop on a sentence until its token budget
    ends, and a resident should read it once."""
    seen: set[str] = set()
    kept = []
    for sentence in re.split(r"(?<=[.!?])\s+", " ".join(text.split())):
        key = sentence.lower()
        if key not in seen:
            seen.add(key)
            kept.append(sentence)
    if len(kept) > 1 and not kept[-1].endswith((".", "!", "?")):
        cut = kept[-1].lower()
        if any(earlier.lower().startswith(cut) for earlier in kept[:-1]):
            kept.pop()
    return " ".join(kept)


def _as_list(value: Any) -> list[str]:
    if isinstance(value, str):
        value = re.split(r"[;,\n]", value)
    if not isinstance(value, list):
        return []
    items = [_clip(str(v), MAX_ITEM_CHARS) for v in value if isinstance(v, str | int | float) and str(v).strip()]
    return list(dict.fromkeys(items))[:MAX_DIFFERENTIAL]


def _from_mapping(data: Mapping[str, Any], mode: ParseMode) -> ParsedOutput | None:
    """Fields from a decoded object, tolerating near-miss key names; None when there is no diagnosis."""
    keys = {str(k).lower().replace(" ", "_"): v for k, v in data.items()}
    diagnosis = next(
        (keys[k] for k in ("diagnosis", "most_likely_diagnosis", "final_diagnosis", "answer") if k in keys),
        None,
    )
    if isinstance(diagnosis, list):
        diagnosis = diagnosis[0] if diagnosis else None
    if not isinstance(diagnosis, str) or not re.search(r"\w", diagnosis):
        return None
    differential = _as_list(keys.get("differential", keys.get("differential_diagnosis", [])))
    rationale = keys.get("rationale", keys.get("reasoning", ""))
    cited = keys.get("cited_report_ids", keys.get("citations", []))
    return ParsedOutput(
        diagnosis=_clip(diagnosis, MAX_DIAGNOSIS_CHARS),
        differential=differential,
        rationale=_clip(_once(rationale) if isinstance(rationale, str) else "", MAX_RATIONALE_CHARS),
        cited_report_ids=[str(c).strip() for c in cited if str(c).strip()] if isinstance(cited, list) else [],
        mode=mode,
    )


def loads_or_none(text: str) -> Any:
    """`text` decoded as JSON, or None when it is not JSON or is nested too deep for the decoder (a model's reply
    of 100,000 brackets raised RecursionError)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _repair_truncated(text: str) -> Any:
    """Close a JSON object cut off mid-way (token limit): finish an open string, then close brackets; if that
    fails, fall back to the last complete member before a comma. Returns the decoded value or None."""
    stack: list[str] = []
    in_string = escaped = False
    cuts: list[tuple[int, str]] = []  # (position of a top-level-ish comma, closers needed there)
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack:
                break
            stack.pop()
        elif ch == ",":
            cuts.append((i, "".join(reversed(stack))))
    closers = "".join(reversed(stack))
    attempts = [text + ('"' if in_string else "") + closers]
    attempts += [text[:pos] + needed for pos, needed in reversed(cuts)]
    return next((data for attempt in attempts if (data := loads_or_none(attempt)) is not None), None)


def _plain_text(text: str) -> ParsedOutput | None:
    """Prose answers: labelled lines if present, else the first line as the diagnosis. JSON-looking debris
    (starts with a bracket or a quote) is not taken as prose."""
    label = _LABEL.search(text)
    if label:
        diagnosis = label.group(2)
    elif text.lstrip()[:1] in "{[\"'`":
        return None
    else:
        diagnosis = re.split(r"(?<=[.!?])\s|\n", text.strip(), maxsplit=1)[0]
    diagnosis = diagnosis.strip(" *\"'.")
    if not re.search(r"[^\W\d_]{2}", diagnosis):
        return None
    diff = _DIFF_LABEL.search(text)
    rationale = _RATIONALE_LABEL.search(text)
    return ParsedOutput(
        diagnosis=_clip(diagnosis, MAX_DIAGNOSIS_CHARS),
        differential=_as_list(diff.group(1)) if diff else [],
        rationale=_clip(_once(rationale.group(1) if rationale else text), MAX_RATIONALE_CHARS),
        cited_report_ids=[],
        mode="plain_text",
    )


def parse_output(text: str) -> ParsedOutput:
    """Best answer found in `text`; raises UnparseableOutput saying why when there is none."""
    stripped = text.strip()
    if not stripped:
        raise UnparseableOutput("the model returned an empty answer")
    candidates: list[tuple[str, ParseMode]] = [(stripped, "json")]
    candidates += [(m.group(1).strip(), "fenced_json") for m in _FENCE.finditer(stripped)]
    start, end = stripped.find("{"), stripped.rfind("}")
    if start != -1 and end > start:
        candidates.append((stripped[start : end + 1], "embedded_json"))
    for candidate, mode in candidates:
        data = loads_or_none(candidate)
        if isinstance(data, dict) and (parsed := _from_mapping(data, mode)):
            return parsed
    if start != -1:
        repaired = _repair_truncated(stripped[start:].split("```")[0])
        if isinstance(repaired, dict) and (parsed := _from_mapping(repaired, "repaired_json")):
            return parsed
    parsed = _plain_text(stripped)
    if parsed is None:
        raise UnparseableOutput(f"no diagnosis found in the model's output: {_clip(stripped, 120)!r}")
    return parsed
