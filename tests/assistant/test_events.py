"""One typed event stream and one JSON codec (issue 49): what the warm server writes is what its client reads."""

from __future__ import annotations

import pytest
from report_fixtures import hit

from assistant.rag.answer import Answer, Retrieval
from assistant.rag.events import Note, Start, decode, encode


def test_every_event_comes_back_from_its_json_as_it_was() -> None:
    retrieved = [hit("r1", 1, 0.9, "impression", "Small left pleural effusion.")]
    answer = Answer(
        query="q",
        diagnosis="pleural effusion",
        differential=[],
        rationale="Affirmed by 1 of 1 similar reports.",
        cited_report_ids=["r1"],
        retrieved=retrieved,
        model_id=None,
        prompt_id="evidence",
        configuration_hash="0123456789abcdef",
    )
    events = [Start("embedded model x", True), Note("older rules"), Retrieval(retrieved, {}), "pie", answer]
    back = [decode(encode(event)) for event in events]
    assert back[:2] == events[:2] and back[3] == "pie"
    assert isinstance(back[2], Retrieval) and back[2].retrieved[0].report.id == "r1"
    assert isinstance(back[4], Answer) and back[4].to_dict() == answer.to_dict()
    assert [encode(e)["kind"] for e in events] == ["start", "note", "retrieval", "piece", "answer"]


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="not an answer event"):
        decode({"kind": "surprise"})
