"""How every view shows the model's own knowledge beside weak evidence (assistant/rag/beside.py asks for it).

Apart from beside.py because the views import it: `ask`'s printing runs in the client of a warm server, which must
not import the prompt machinery (langchain-core, pydantic) that asking the model needs (tests/assistant/
test_warm_server.py).
"""

from __future__ import annotations

from typing import Any

#: How the views label it, so it is never read as the archive's evidence.
LABEL = "The model's own knowledge (not this archive's evidence)"


def knowledge_line(knowledge: dict[str, Any]) -> str:
    """The line every view shows ("The model's own knowledge (not this archive's evidence): X; also Y, Z"), ""
    when there is none."""
    if not knowledge.get("diagnosis"):
        return ""
    also = f"; also {', '.join(knowledge['differential'])}" if knowledge.get("differential") else ""
    return f"{LABEL}: {knowledge['diagnosis']}{also}"
