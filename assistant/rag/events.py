"""The answer's event stream, one type for everyone who shows an answer, and its one JSON codec.

`ask` (in its own process or through the warm server), the warm server and the chat show the same events in the same
order: who answers (`Start`), notices about the index (`Note`), the retrieved reports and their evidence
(`Retrieval`), the model's text as it is written (`str` pieces), and the checked `Answer` last. `encode` and `decode`
are the only place an event becomes JSON and back: the warm server writes them one a line, its client reads them, and
`ask --json` prints the Answer's payload. Imports stay light (the `assistant` script's client loads this before
anything else); the answer types are imported when an answer is decoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assistant.rag.answer import Answer, Retrieval


@dataclass(frozen=True)
class Start:
    """Who answers, and whether a model is asked at all (the evidence alone asks none)."""

    model_label: str
    evidence_only: bool


@dataclass(frozen=True)
class Note:
    """A notice about the index the answer searches (e.g. built under older negation rules)."""

    text: str


if TYPE_CHECKING:
    #: What an answer's stream holds, in order: who answers, notices, the reports, the model's text, the answer.
    Event = Start | Note | Retrieval | str | Answer


def encode(event: Event) -> dict[str, Any]:
    """The event as a JSON object tagged with its `kind` (start, note, retrieval, piece, answer)."""
    if isinstance(event, Start):
        return {"kind": "start", "model_label": event.model_label, "evidence_only": event.evidence_only}
    if isinstance(event, Note):
        return {"kind": "note", "text": event.text}
    if isinstance(event, str):
        return {"kind": "piece", "text": event}
    from assistant.rag.answer import Answer

    if isinstance(event, Answer):
        return {"kind": "answer", "answer": event.to_dict()}
    return {"kind": "retrieval", "retrieval": event.to_dict()}


def decode(data: dict[str, Any]) -> Event:
    """Back from `encode` (ValueError for a kind it does not know)."""
    kind = data.get("kind")
    if kind == "start":
        return Start(data["model_label"], data["evidence_only"])
    if kind == "note":
        return Note(data["text"])
    if kind == "piece":
        return str(data["text"])
    from assistant.rag.answer import Answer, Retrieval

    if kind == "answer":
        return Answer.from_dict(data["answer"])
    if kind == "retrieval":
        return Retrieval.from_dict(data["retrieval"])
    raise ValueError(f"not an answer event: {kind!r}")
