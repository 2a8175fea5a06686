"""Shared by the chat tests: a small report index built with the real MiniLM, and the app served on loopback.

The corpus is the LLM tests' fixture reports plus two written for the chat: one whose text is markup (the page
must show it, not run it) and a dated CT report so the modality and date filters have something to separate.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"  # before gradio is imported
from llm_fixtures import REPORTS  # noqa: E402

from eval.perf.ports import free_port  # noqa: E402
from retriever.reports.record import Report  # noqa: E402

MARKUP_REPORT = Report(
    id="xr-markup-<b>007</b>",
    findings="Rib fracture <script>document.title='pwned'</script> of the left seventh rib, no pneumothorax.",
    impression="<img src=x onerror=\"document.title='pwned'\"> Acute left seventh rib fracture. **not bold**",
    modality="XR",
    source="fixture-markup",
)
CT_REPORT = Report(
    id="ct-008",
    findings="Small right pleural effusion layering dependently, adjacent compressive atelectasis.",
    impression="Small right pleural effusion with compressive atelectasis.",
    modality="CT",
    source="fixture",
    meta={"date": "2026-11-24"},  # the one dated report: the study-date filter's
)
CHAT_REPORTS = [*REPORTS, MARKUP_REPORT, CT_REPORT]
EFFUSION_QUERY = "Blunting of the right costophrenic angle with a meniscus sign"
#: The page's name for the first `--index` (assistant/chat/catalog.py): what an API client passes as the index.
FIRST_INDEX = "index-1"


def build_chat_index(folder: Path, encoder) -> Path:
    """Build and save the chat fixture index; returns the folder."""
    from retriever.index.report_index import ReportIndex

    ReportIndex.build(CHAT_REPORTS, encoder=encoder).save(folder)
    return folder


@contextmanager
def served(config, service=None, auth=None) -> Iterator[str]:
    """Serve the chat on 127.0.0.1 for the duration of the block (with sign-in for the `auth` accounts, if any);
    yields its URL."""
    from assistant.chat.page import build_app
    from assistant.chat.serve import launch_app

    app = build_app(config, service)
    port = free_port()
    launch_app(app, config, host="127.0.0.1", port=port, auth=auth, block=False)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        app.close()
