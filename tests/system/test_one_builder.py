"""One pipeline builder (issue 49): `ask`, `assistant serve`, the chat and the benchmarks get their RagPipeline from
`assistant.rag.assemble.build_pipeline`, so an answer is made and hashed the same whichever of them gives it."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILDER = "assistant/rag/assemble.py"


def test_only_the_builder_constructs_a_pipeline() -> None:
    constructed = {
        path.relative_to(REPO).as_posix()
        for top in ("assistant", "retriever", "models", "eval")
        for path in (REPO / top).rglob("*.py")
        if re.search(r"(?<!class )\bRagPipeline\(", path.read_text(encoding="utf-8"))
    }
    assert constructed == {BUILDER}
