"""The chat page: settings on the left, the conversation in the middle, the retrieved reports on the right.

Only wiring: every request goes to `ChatService.respond` (service.py), every piece of HTML comes from render.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.chat import render
from assistant.chat.catalog import IndexCatalog
from assistant.chat.service import (
    ANY,
    BUILD_HINT,
    DEFAULT_MODE,
    EXAMPLES,
    MODE_ANSWER,
    MODE_EVIDENCE,
    MODE_SEARCH,
    ChatConfig,
    ChatService,
    Outputs,
    Request,
)
from assistant.llm.base import Message
from assistant.rag import answer_defaults
from retriever.search.methods import DEFAULT_METHOD

if TYPE_CHECKING:
    import gradio as gr

FIELD_CHOICES = [("Similar findings", "findings"), ("Likely impressions", "impression"), ("Full reports", "report")]
MAX_K = 20


def build_app(config: ChatConfig, service: ChatService | None = None) -> gr.Blocks:
    """The page: settings on the left, the conversation in the middle, the retrieved reports on the right."""
    import gradio as gr

    from retriever.search.methods import METHODS

    service = service or ChatService(config)
    catalog = service.catalog
    index_choices = catalog.choices()
    default_index = catalog.default()
    modalities, sources = catalog.filter_values(default_index)

    with gr.Blocks(title="RadSearch Assistant", analytics_enabled=False) as app:
        gr.HTML(render.header_html(service.config.settings.llm.describe()))
        gr.HTML(render.BANNER_HTML)
        with gr.Row(equal_height=False):
            with gr.Column(scale=2, min_width=270):
                with gr.Group():
                    mode = gr.Radio([MODE_EVIDENCE, MODE_ANSWER, MODE_SEARCH], value=DEFAULT_MODE, label="Mode")
                    use_retrieval = gr.Checkbox(value=True, label="Ground the answer in retrieved reports")
                with gr.Accordion("Search settings", open=True):
                    index = gr.Dropdown(index_choices, value=default_index, label="Index (encoder)")
                    field_choice = gr.Radio(FIELD_CHOICES, value=answer_defaults.FIELD, label="Search mode")
                    k = gr.Slider(1, MAX_K, value=config.default_k, step=1, label="Number of reports")
                    method = gr.Dropdown(list(METHODS), value=DEFAULT_METHOD, label="Retrieval method")
                    modality = gr.Dropdown([ANY, *modalities], value=ANY, label="Modality")
                    source = gr.Dropdown([ANY, *sources], value=ANY, label="Source")
            with gr.Column(scale=5, min_width=420):
                notice = gr.HTML("", elem_id="rs-notice", label="Messages")
                chatbot = gr.Chatbot(
                    label="Conversation",
                    elem_id="rs-chat",
                    height=520,
                    buttons=["copy"],
                    feedback_options=None,
                    placeholder="Describe the imaging findings. Follow-up questions refine the current case; "
                    "press **New case** for another patient.",
                )
                message = gr.Textbox(
                    placeholder="e.g. Blunting of the right costophrenic angle with a meniscus sign",
                    label="Finding",
                    show_label=False,
                    lines=2,
                    max_lines=8,
                    elem_id="rs-input",
                )
                with gr.Row():
                    ask = gr.Button("Ask", variant="primary", elem_id="rs-ask", scale=3)
                    new_case = gr.Button("New case", variant="secondary", elem_id="rs-new-case", scale=1)
                gr.Examples(EXAMPLES, inputs=message, label="Examples")
            with gr.Column(scale=4, min_width=340):
                cards = gr.HTML(
                    render.report_cards_html([], empty_message="Retrieved reports appear here."),
                    elem_id="rs-reports",
                    label="Retrieved reports",
                )
        case = gr.State([])

        def respond(
            text: str,
            history: list[dict[str, Any]],
            case_history: list[Message],
            mode_value: str,
            field_value: str,
            k_value: float,
            retrieval_value: bool,
            index_value: str,
            method_value: str,
            modality_value: str,
            source_value: str,
        ) -> Iterator[Outputs]:
            """Answer a finding (or search only); follow-ups use the conversation so far."""
            request = Request(
                mode=mode_value,
                field=field_value,
                k=int(k_value),
                use_retrieval=bool(retrieval_value),
                index=index_value or "",
                method=method_value,
                modality=modality_value,
                source=source_value,
            )
            yield from service.respond(text, history, case_history, request)

        gr.on(
            triggers=[ask.click, message.submit],
            fn=respond,
            inputs=[message, chatbot, case, mode, field_choice, k, use_retrieval, index, method, modality, source],
            outputs=[chatbot, cards, notice, case, message],
            api_name="ask",
            show_progress="minimal",
            show_progress_on=[chatbot],
        )

        def clear() -> tuple[list[Any], str, str, list[Message], str]:
            return [], render.report_cards_html([], empty_message="Retrieved reports appear here."), "", [], ""

        new_case.click(clear, outputs=[chatbot, cards, notice, case, message], api_name="new_case", queue=False)
        # The chat's own trash button must forget the case too, or the next question would still carry it.
        chatbot.clear(clear, outputs=[chatbot, cards, notice, case, message], api_visibility="private", queue=False)

        def on_mode(mode_value: str) -> Any:
            return gr.update(interactive=mode_value != MODE_SEARCH)

        mode.change(on_mode, inputs=mode, outputs=use_retrieval, api_visibility="private", queue=False)

        def on_index(index_value: str) -> tuple[Any, Any, Any, str]:
            return _index_controls(catalog, index_value)

        index.change(
            on_index,
            inputs=index,
            outputs=[field_choice, modality, source, notice],
            api_visibility="private",
            queue=False,
        )

        def on_load(index_value: str) -> tuple[Any, ...]:
            """Re-list the installed indexes on every page load (one built after start-up appears)."""
            choices = catalog.choices()
            values = [v for _, v in choices]
            chosen = index_value if index_value in values else catalog.default()
            return (gr.update(choices=choices, value=chosen), *_index_controls(catalog, chosen))

        app.load(
            on_load,
            inputs=index,
            outputs=[index, field_choice, modality, source, notice],
            api_visibility="private",
            queue=False,
        )
    return app


def _index_controls(catalog: IndexCatalog, folder: str) -> tuple[Any, Any, Any, str]:
    """Search-mode choices and filter values for an index, and a notice if it is not built."""
    import gradio as gr

    from retriever.index.manifest import Manifest

    try:
        fields = set(Manifest.read(Path(folder)).fields)
    except (OSError, ValueError):
        notice = render.notice_html("error", f"No usable report index at {folder}.", detail=BUILD_HINT)
        return gr.update(), gr.update(choices=[ANY], value=ANY), gr.update(choices=[ANY], value=ANY), notice
    modalities, sources = catalog.filter_values(folder)
    choices = [(label, value) for label, value in FIELD_CHOICES if value in fields]
    return (
        gr.update(choices=choices),
        gr.update(choices=[ANY, *modalities], value=ANY),
        gr.update(choices=[ANY, *sources], value=ANY),
        "",
    )
