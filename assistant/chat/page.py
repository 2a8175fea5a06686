"""The chat page: settings on the left, the conversation in the middle, the retrieved reports on the right (on a
phone: the conversation first).

Only wiring: every request goes to `ChatService.respond` (service.py), every piece of HTML comes from render.py and
report_cards.py. Enter sends and Shift+Enter adds a line (a one-line textbox that grows), ArrowUp recalls the last
question (page_script.py); Stop ends a running answer; Regenerate (the chat's retry button) asks the last question
again; the conversation is kept in the browser's localStorage (gr.BrowserState, encrypted with a key of this server
run), never on the server, so a reload restores it; Export saves the last answer as Markdown in the browser
(export.py); feedback on answers goes to the server's feedback file (feedback_panel.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from assistant.chat import render, report_cards
from assistant.chat.catalog import IndexCatalog
from assistant.chat.escape import md_unescape
from assistant.chat.feedback_panel import answered_keys, feedback_panel, wire_feedback
from assistant.chat.page_script import EXPORT_JS, PAGE_JS, SHOW_ANSWER_JS
from assistant.chat.service import (
    ANY,
    BUILD_HINT,
    DEFAULT_MODE,
    EXAMPLES,
    MODE_ANSWER,
    MODE_EVIDENCE,
    MODE_FREE_TEXT,
    MODE_SEARCH,
    ChatConfig,
    ChatService,
    Outputs,
    Request,
)
from assistant.llm.base import Message
from assistant.rag import answer_defaults
from retriever.search.methods import DEFAULT_METHOD

FIELD_CHOICES = [("Similar findings", "findings"), ("Likely impressions", "impression"), ("Full reports", "report")]
MAX_K = answer_defaults.MAX_K
#: The conversation's height: the input and the buttons below it stay on screen at 1280x800 and on a phone.
CHAT_HEIGHT = "max(240px, calc(100vh - 420px))"
#: Where the browser keeps the conversation (gr.BrowserState's localStorage key).
STORAGE_KEY = "radsearch-conversation"
EMPTY_CARDS = report_cards.report_cards_html([], empty_message="Retrieved reports appear here.")


def build_app(config: ChatConfig, service: ChatService | None = None) -> gr.Blocks:
    """The page: settings on the left, the conversation in the middle, the retrieved reports on the right."""
    from retriever.search.methods import METHODS

    service = service or ChatService(config)
    catalog = service.catalog
    index_choices = catalog.choices()
    default_index = catalog.key(catalog.default())

    with gr.Blocks(title="RadSearch Assistant", analytics_enabled=False) as app:
        gr.HTML(render.header_html(service.config.settings.llm.describe()))
        signed_in = gr.HTML("", elem_id="rs-user")
        gr.HTML(render.BANNER_HTML)
        with gr.Row(equal_height=False, elem_id="rs-layout"):
            with gr.Column(scale=2, min_width=260, elem_id="rs-settings-col"):
                with gr.Group():
                    mode = gr.Radio(
                        [MODE_EVIDENCE, MODE_ANSWER, MODE_FREE_TEXT, MODE_SEARCH], value=DEFAULT_MODE, label="Mode"
                    )
                    use_retrieval = gr.Checkbox(value=True, label="Ground the answer in retrieved reports")
                with gr.Accordion("Search settings", open=True):
                    index = gr.Dropdown(index_choices, value=default_index, label="Index (encoder)")
                    field_choice = gr.Radio(FIELD_CHOICES, value=answer_defaults.FIELD, label="Search mode")
                    k = gr.Slider(1, MAX_K, value=config.default_k, step=1, label="Number of reports")
                    method = gr.Dropdown(list(METHODS), value=DEFAULT_METHOD, label="Retrieval method")
                    # Filled when the page opens (on_load): choices given here would be on the sign-in page.
                    modality = gr.Dropdown([ANY], value=ANY, label="Modality")
                    source = gr.Dropdown([ANY], value=ANY, label="Source")
                    with gr.Row():
                        since = gr.Textbox(label="Studies since", placeholder="YYYY-MM-DD", max_lines=1)
                        until = gr.Textbox(label="Studies until", placeholder="YYYY-MM-DD", max_lines=1)
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
                panel = feedback_panel()
                gr.Examples(EXAMPLES, inputs=message, label="Examples", elem_id="rs-examples")
            with gr.Column(scale=4, min_width=300, elem_id="rs-cards-col"):
                cards = gr.HTML(EMPTY_CARDS, elem_id="rs-reports", label="Retrieved reports")
        case = gr.State([])
        saved = gr.BrowserState({}, storage_key=STORAGE_KEY)

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
            since_value: str,
            until_value: str,
            session: gr.Request,
        ) -> Iterator[Outputs]:
            """Answer a finding (or search only); follow-ups use the conversation so far."""
            signal = service.stop_signal(session.session_hash or "")
            request = Request(
                user=getattr(session, "username", None),
                mode=mode_value,
                field=field_value,
                k=int(k_value),
                use_retrieval=bool(retrieval_value),
                index=catalog.folder(index_value or "") or "",
                method=method_value,
                modality=modality_value,
                source=source_value,
                since=since_value or "",
                until=until_value or "",
                stop=signal,
            )
            try:
                yield from service.respond(text, history, case_history, request)
            finally:
                service.release(session.session_hash or "", signal)
                finished[session.session_hash or ""] = request.answer_key

        def regenerate(
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
            since_value: str,
            until_value: str,
            session: gr.Request,
        ) -> Iterator[Outputs]:
            """Ask the last question again (the chat's retry button): its answer, and its turn in the case, replaced."""
            asked = [n for n, m in enumerate(history or []) if m["role"] == "user"]
            if not asked:
                return
            text = md_unescape(message_text(history[asked[-1]]))
            case_history = list(case_history or [])
            if len(case_history) >= 2 and case_history[-2] == {"role": "user", "content": text}:
                case_history = case_history[:-2]
            controls = (mode_value, field_value, k_value, retrieval_value, index_value, method_value)
            filters = (modality_value, source_value, since_value, until_value)
            yield from respond(text, history[: asked[-1]], case_history, *controls, *filters, session)

        finished: dict[str, str] = {}  # each session's last answer key, until the page takes it

        def take_key(history: list[Any], keys: dict[str, str], session: gr.Request) -> tuple[Any, ...]:
            """The finished answer's key, for the feedback on it; the form is cleared for it."""
            key = finished.pop(session.session_hash or "", "")
            return answered_keys(keys, history, key), key, gr.update(value=None), "", "", ""

        def save(
            history: list[dict[str, Any]], case_history: list[Message], cards_html: str, keys: dict[str, str]
        ) -> dict[str, Any]:
            """What the browser keeps of the conversation (so a reload restores it)."""
            return {"chat": history, "case": case_history, "cards": cards_html, "keys": keys}

        def restore(stored: Any) -> tuple[Any, Any, Any, Any]:
            """The conversation the browser kept, if any."""
            if not isinstance(stored, dict) or not stored.get("chat"):
                return gr.skip(), gr.skip(), gr.skip(), gr.skip()
            cards_html = stored.get("cards") or EMPTY_CARDS
            return stored["chat"], stored.get("case") or [], cards_html, stored.get("keys") or {}

        controls = [mode, field_choice, k, use_retrieval, index, method, modality, source, since, until]
        outputs = [chatbot, cards, notice, case, message]
        asked = gr.on(
            triggers=[ask.click, message.submit],
            fn=respond,
            inputs=[message, chatbot, case, *controls],
            outputs=outputs,
            api_name="ask",
            show_progress="minimal",
            show_progress_on=[chatbot],
        )
        retried = chatbot.retry(
            regenerate, inputs=[chatbot, case, *controls], outputs=outputs, api_visibility="private"
        )
        stored = [chatbot, case, cards, panel.keys]
        for answered in (asked, retried):
            answered.then(
                take_key,
                inputs=[chatbot, panel.keys],
                outputs=[panel.keys, panel.target, panel.verdict, panel.right, panel.comment, panel.note],
                api_visibility="private",
                queue=False,
            ).then(None, js=SHOW_ANSWER_JS).then(
                save, inputs=stored, outputs=saved, api_visibility="private", queue=False
            )
        wire_feedback(panel, chatbot, service.answers)

        def stop_answer(history: list[dict[str, Any]], session: gr.Request) -> Any:
            """Stop this session's running answer; its message says so (a finished answer is left as it is)."""
            if not service.stop(session.session_hash or "") or not history or history[-1]["role"] != "assistant":
                return gr.skip()
            return [*history[:-1], {"role": "assistant", "content": render.STOPPED_MARKDOWN}]

        stopped = stop.click(
            stop_answer,
            inputs=chatbot,
            outputs=chatbot,
            cancels=[asked, retried],
            api_visibility="private",
            queue=False,
        )
        stopped.then(save, inputs=stored, outputs=saved, api_visibility="private", queue=False)
        export.click(None, js=EXPORT_JS, api_visibility="private")

        def clear() -> tuple[list[Any], str, str, list[Message], str, dict[str, Any], dict[str, str], str, str]:
            return [], EMPTY_CARDS, "", [], "", {}, {}, "", ""

        cleared = [chatbot, cards, notice, case, message, saved, panel.keys, panel.target, panel.note]
        new_case.click(clear, outputs=cleared, api_name="new_case", queue=False)
        # The chat's own trash button must forget the case too, or the next question would still carry it.
        chatbot.clear(clear, outputs=cleared, api_visibility="private", queue=False)
        app.load(restore, inputs=saved, outputs=stored, api_visibility="private", queue=False)
        app.load(None, js=PAGE_JS)
        app.load(_signed_in, outputs=signed_in, api_visibility="private", queue=False)

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
            chosen = index_value if index_value in values else catalog.key(catalog.default())
            return (gr.update(choices=choices, value=chosen), *_index_controls(catalog, chosen))

        app.load(
            on_load,
            inputs=index,
            outputs=[index, field_choice, modality, source, notice],
            api_visibility="private",
            queue=False,
        )
    return app


def _signed_in(session: gr.Request) -> str:
    """Who is signed in, with a sign-out link ("" without sign-in)."""
    return render.signed_in_html(getattr(session, "username", None))


def message_text(message: dict[str, Any]) -> str:
    """A chat message's text: Gradio hands it back as a string or as a list of parts."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _index_controls(catalog: IndexCatalog, key: str) -> tuple[Any, Any, Any, str]:
    """Search-mode choices and filter values for the index of `key`, and a notice if it is not built."""
    from retriever.index.manifest import Manifest

    folder = catalog.folder(key) or ""
    try:
        fields = set(Manifest.read(Path(folder)).fields)
    except (OSError, ValueError):
        notice = render.notice_html("error", f"No usable report index at {folder or key}.", detail=BUILD_HINT)
        return gr.update(), gr.update(choices=[ANY], value=ANY), gr.update(choices=[ANY], value=ANY), notice
    modalities, sources = catalog.filter_values(folder)
    choices = [(label, value) for label, value in FIELD_CHOICES if value in fields]
    return (
        gr.update(choices=choices),
        gr.update(choices=[ANY, *modalities], value=ANY),
        gr.update(choices=[ANY, *sources], value=ANY),
        "",
    )
