"""The chat page: settings on the left, the conversation in the middle, the retrieved reports on the right (on a
phone: the conversation first).

Only wiring: the page's parts are made by page_layout.py and wired by page_events.py; every request goes to
`ChatService.respond` (service.py), every piece of HTML comes from render.py and report_cards.py. Enter sends and
Shift+Enter adds a line (a one-line textbox that grows), ArrowUp recalls the last question (page_script.py); Stop
ends a running answer; Regenerate (the chat's retry button) asks the last question again; the conversation is kept
in the browser's localStorage (gr.BrowserState, encrypted with a key of this server run), never on the server, so a
reload restores it; Export saves the last answer as Markdown in the browser (export.py); feedback on answers goes to
the server's feedback file (feedback_panel.py).
"""

from __future__ import annotations

import gradio as gr

from assistant.chat.page_events import wire_events
from assistant.chat.page_layout import Page, header, question_panel, reports_panel, settings_panel
from assistant.chat.service import ChatConfig, ChatService

#: Where the browser keeps the conversation (gr.BrowserState's localStorage key).
STORAGE_KEY = "radsearch-conversation"


def build_app(config: ChatConfig, service: ChatService | None = None) -> gr.Blocks:
    """The page: the header, then settings on the left, the conversation in the middle, the retrieved reports on
    the right; the conversation's states; then its events."""
    service = service or ChatService(config)
    with gr.Blocks(title="RadSearch Assistant", analytics_enabled=False) as app:
        signed_in = header(service.config.settings.llm.describe())
        with gr.Row(equal_height=False, elem_id="rs-layout"):
            settings = settings_panel(config, service.catalog)
            question = question_panel()
            cards = reports_panel()
        case = gr.State([])
        saved = gr.BrowserState({}, storage_key=STORAGE_KEY)
        wire_events(app, Page(signed_in, settings, question, cards, case, saved), service)
    return app
