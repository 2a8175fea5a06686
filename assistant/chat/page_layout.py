"""The chat page's parts, in the order they stand on it: the header, then a row of three panels, settings on the left,
the question and its conversation in the middle, the retrieved reports on the right (on a phone: the conversation
first). Each part makes its components inside the page being built (page.py) and returns those the events wire
(page_events.py); making them in this order is what lays the page out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from assistant.chat import render, report_cards
from assistant.chat.catalog import IndexCatalog
from assistant.chat.feedback_panel import FeedbackPanel, feedback_panel
from assistant.chat.service import (
    ANY,
    DEFAULT_MODE,
    EXAMPLES,
    MODE_ANSWER,
    MODE_EVIDENCE,
    MODE_FREE_TEXT,
    MODE_SEARCH,
    ChatConfig,
)
from assistant.rag import answer_defaults
from retriever.search.methods import DEFAULT_METHOD

FIELD_CHOICES = [("Similar findings", "findings"), ("Likely impressions", "impression"), ("Full reports", "report")]
MAX_K = answer_defaults.MAX_K
#: The conversation's height: the input and the buttons below it stay on screen at 1280x800 and on a phone (with a
#: notice above the conversation it gives up the notice's room: style.py).
CHAT_HEIGHT = "max(240px, calc(100vh - 420px))"
EMPTY_CARDS = report_cards.report_cards_html([], empty_message="Retrieved reports appear here.")


@dataclass(frozen=True)
class SettingsPanel:
    """The settings panel's controls: what a question is answered with."""

    mode: gr.Radio
    use_retrieval: gr.Checkbox
    index: gr.Dropdown
    field: gr.Radio
    k: gr.Slider
    method: gr.Dropdown
    modality: gr.Dropdown
    source: gr.Dropdown
    since: gr.Textbox
    until: gr.Textbox

    def inputs(self) -> list[Any]:
        """The controls in the order the answer handlers take them (page_events.Handlers.respond)."""
        return [
            self.mode,
            self.field,
            self.k,
            self.use_retrieval,
            self.index,
            self.method,
            self.modality,
            self.source,
            self.since,
            self.until,
        ]


@dataclass(frozen=True)
class QuestionPanel:
    """The question panel: messages, the conversation, the input and its buttons, the feedback form."""

    notice: gr.HTML
    chatbot: gr.Chatbot
    message: gr.Textbox
    ask: gr.Button
    stop: gr.Button
    new_case: gr.Button
    export: gr.Button
    feedback: FeedbackPanel


@dataclass(frozen=True)
class Page:
    """The components the events wire: the three panels, the user line, and the states of the conversation (the
    case's messages on the server, the whole conversation in the browser)."""

    signed_in: gr.HTML
    settings: SettingsPanel
    question: QuestionPanel
    cards: gr.HTML
    case: gr.State
    saved: gr.BrowserState


def header(model: str) -> gr.HTML:
    """The title with the model that answers, who is signed in (filled when the page opens), the safety banner."""
    gr.HTML(render.header_html(model))
    signed_in = gr.HTML("", elem_id="rs-user")
    gr.HTML(render.BANNER_HTML)
    return signed_in


def settings_panel(config: ChatConfig, catalog: IndexCatalog) -> SettingsPanel:
    """The left column: the answer mode, then the search settings (index, field, k, method, filters)."""
    from retriever.search.methods import METHODS

    with gr.Column(scale=2, min_width=260, elem_id="rs-settings-col"):
        with gr.Group():
            mode = gr.Radio([MODE_EVIDENCE, MODE_ANSWER, MODE_FREE_TEXT, MODE_SEARCH], value=DEFAULT_MODE, label="Mode")
            use_retrieval = gr.Checkbox(value=True, label="Ground the answer in retrieved reports")
        with gr.Accordion("Search settings", open=True):
            index = gr.Dropdown(catalog.choices(), value=catalog.key(catalog.default()), label="Index (encoder)")
            field = gr.Radio(FIELD_CHOICES, value=answer_defaults.FIELD, label="Search mode")
            k = gr.Slider(1, MAX_K, value=config.default_k, step=1, label="Number of reports")
            method = gr.Dropdown(list(METHODS), value=DEFAULT_METHOD, label="Retrieval method")
            # Filled when the page opens (on_load): choices given here would be on the sign-in page.
            modality = gr.Dropdown([ANY], value=ANY, label="Modality")
            source = gr.Dropdown([ANY], value=ANY, label="Source")
            with gr.Row():
                since = gr.Textbox(label="Studies since", placeholder="YYYY-MM-DD", max_lines=1)
                until = gr.Textbox(label="Studies until", placeholder="YYYY-MM-DD", max_lines=1)
    return SettingsPanel(mode, use_retrieval, index, field, k, method, modality, source, since, until)


def question_panel() -> QuestionPanel:
    """The middle column: messages, the conversation, the input with Ask, Stop, New case and Export, the feedback
    form and the examples."""
    with gr.Column(scale=5, min_width=300, elem_id="rs-chat-col"):
        notice = gr.HTML("", elem_id="rs-notice", label="Messages")
        chatbot = gr.Chatbot(
            label="Conversation",
            show_label=False,  # its label sat over the first line of a scrolled answer
            elem_id="rs-chat",
            height=CHAT_HEIGHT,
            buttons=["copy"],
            feedback_options=("Like", "Dislike"),
            autoscroll=False,  # page_script.py shows each new question and its answer from the top
            placeholder="Describe the imaging findings. Follow-up questions refine the current case; "
            "press **New case** for another patient.",
        )
        message = gr.Textbox(
            placeholder="A finding, e.g. meniscus sign at the right costophrenic angle (Enter sends)",
            label="Finding",
            show_label=False,
            lines=1,  # one line that grows: Enter sends (with lines > 1 Gradio sends on Shift+Enter)
            max_lines=6,
            elem_id="rs-input",
        )
        with gr.Row(elem_id="rs-actions"):
            ask = gr.Button("Ask", variant="primary", elem_id="rs-ask", scale=1, min_width=56)
            stop = gr.Button("Stop", variant="stop", elem_id="rs-stop", scale=1, min_width=50)
            new_case = gr.Button("New case", variant="secondary", elem_id="rs-new-case", scale=1, min_width=100)
            export = gr.Button("Export", variant="secondary", elem_id="rs-export", scale=1, min_width=50)
        feedback = feedback_panel()
        gr.Examples(EXAMPLES, inputs=message, label="Examples", elem_id="rs-examples")
    return QuestionPanel(notice, chatbot, message, ask, stop, new_case, export, feedback)


def reports_panel() -> gr.HTML:
    """The right column: the retrieved reports' cards."""
    with gr.Column(scale=4, min_width=300, elem_id="rs-cards-col"):
        return gr.HTML(EMPTY_CARDS, elem_id="rs-reports", label="Retrieved reports")
