"""The chat page's events: what each button, key, control and page load does (the parts are page_layout.py's).

Every request goes to `ChatService.respond` (service.py). Gradio numbers the events in the order they are
registered, so `wire_events` registers them in one fixed order. The handlers' annotations are imported at run time,
not for type checking only: Gradio reads them to hand a handler its `gr.Request`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from assistant.chat import render
from assistant.chat.catalog import IndexCatalog
from assistant.chat.escape import md_unescape
from assistant.chat.feedback_panel import answered_keys, wire_feedback
from assistant.chat.page_layout import EMPTY_CARDS, FIELD_CHOICES, Page
from assistant.chat.page_script import EXPORT_JS, PAGE_JS, SHOW_ANSWER_JS
from assistant.chat.service import ANY, BUILD_HINT, MODE_SEARCH, ChatService, Outputs, Request
from assistant.llm.base import Message


class Handlers:
    """The handlers that need the service: answering (a question, the last one again), the finished answer's key
    for the feedback form, Stop, and the index's controls. `finished` keeps each session's last answer key from the
    end of its answer until the page takes it."""

    def __init__(self, service: ChatService) -> None:
        self.service = service
        self.catalog = service.catalog
        self.finished: dict[str, str] = {}

    def respond(
        self,
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
        signal = self.service.stop_signal(session.session_hash or "")
        request = Request(
            user=getattr(session, "username", None),
            mode=mode_value,
            field=field_value,
            k=int(k_value),
            use_retrieval=bool(retrieval_value),
            index=self.catalog.folder(index_value or "") or "",
            method=method_value,
            modality=modality_value,
            source=source_value,
            since=since_value or "",
            until=until_value or "",
            stop=signal,
        )
        try:
            yield from self.service.respond(text, history, case_history, request)
        finally:
            self.service.release(session.session_hash or "", signal)
            self.finished[session.session_hash or ""] = request.answer_key

    def regenerate(
        self,
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
        yield from self.respond(text, history[: asked[-1]], case_history, *controls, *filters, session)

    def take_key(self, history: list[Any], keys: dict[str, str], session: gr.Request) -> tuple[Any, ...]:
        """The finished answer's key, for the feedback on it; the form is cleared for it."""
        key = self.finished.pop(session.session_hash or "", "")
        return answered_keys(keys, history, key), key, gr.update(value=None), "", "", ""

    def stop_answer(self, history: list[dict[str, Any]], session: gr.Request) -> Any:
        """Stop this session's running answer; its message says so (a finished answer is left as it is)."""
        if not self.service.stop(session.session_hash or "") or not history or history[-1]["role"] != "assistant":
            return gr.skip()
        return [*history[:-1], {"role": "assistant", "content": render.STOPPED_MARKDOWN}]

    def on_index(self, index_value: str) -> tuple[Any, Any, Any, str]:
        return _index_controls(self.catalog, index_value)

    def on_load(self, index_value: str) -> tuple[Any, ...]:
        """Re-list the installed indexes on every page load (one built after start-up appears)."""
        choices = self.catalog.choices()
        values = [v for _, v in choices]
        chosen = index_value if index_value in values else self.catalog.key(self.catalog.default())
        return (gr.update(choices=choices, value=chosen), *_index_controls(self.catalog, chosen))


def wire_events(app: gr.Blocks, page: Page, service: ChatService) -> None:
    """Every event of the page, in the order they are registered: answering, feedback, the buttons under the input
    and the chat's own clear button, restoring the page when it opens, the settings."""
    handlers = Handlers(service)
    asked, retried = _wire_answers(page, handlers)
    wire_feedback(page.question.feedback, page.question.chatbot, service.answers)
    _wire_buttons(page, handlers, asked, retried)
    _wire_page_load(app, page)
    _wire_settings(app, page, handlers)


def _wire_answers(page: Page, handlers: Handlers) -> tuple[Any, Any]:
    """Ask (or Enter) and the chat's retry button answer; then the feedback form is pointed at the new answer, the
    page shows it from the top and the browser keeps the conversation. The two answering events are returned: Stop
    cancels them."""
    question, feedback = page.question, page.question.feedback
    outputs = [question.chatbot, page.cards, question.notice, page.case, question.message]
    asked = gr.on(
        triggers=[question.ask.click, question.message.submit],
        fn=handlers.respond,
        inputs=[question.message, question.chatbot, page.case, *page.settings.inputs()],
        outputs=outputs,
        api_name="ask",
        show_progress="minimal",
        show_progress_on=[question.chatbot],
    )
    retried = question.chatbot.retry(
        handlers.regenerate,
        inputs=[question.chatbot, page.case, *page.settings.inputs()],
        outputs=outputs,
        api_visibility="private",
    )
    for answered in (asked, retried):
        answered.then(
            handlers.take_key,
            inputs=[question.chatbot, feedback.keys],
            outputs=[feedback.keys, feedback.target, feedback.verdict, feedback.right, feedback.comment, feedback.note],
            api_visibility="private",
            queue=False,
        ).then(None, js=SHOW_ANSWER_JS).then(
            save, inputs=_stored(page), outputs=page.saved, api_visibility="private", queue=False
        )
    return asked, retried


def _wire_buttons(page: Page, handlers: Handlers, asked: Any, retried: Any) -> None:
    """Stop (ends the running answer, which is then kept), Export (in the browser), New case and the chat's own
    clear button (both forget the case: the next question would still carry it otherwise)."""
    question = page.question
    stopped = question.stop.click(
        handlers.stop_answer,
        inputs=question.chatbot,
        outputs=question.chatbot,
        cancels=[asked, retried],
        api_visibility="private",
        queue=False,
    )
    stopped.then(save, inputs=_stored(page), outputs=page.saved, api_visibility="private", queue=False)
    question.export.click(None, js=EXPORT_JS, api_visibility="private")
    cleared = [
        question.chatbot,
        page.cards,
        question.notice,
        page.case,
        question.message,
        page.saved,
        question.feedback.keys,
        question.feedback.target,
        question.feedback.note,
    ]
    question.new_case.click(clear, outputs=cleared, api_name="new_case", queue=False)
    question.chatbot.clear(clear, outputs=cleared, api_visibility="private", queue=False)


def _wire_page_load(app: gr.Blocks, page: Page) -> None:
    """When the page opens: the conversation the browser kept, the page's script, who is signed in."""
    app.load(restore, inputs=page.saved, outputs=_stored(page), api_visibility="private", queue=False)
    app.load(None, js=PAGE_JS)
    app.load(_signed_in, outputs=page.signed_in, api_visibility="private", queue=False)


def _wire_settings(app: gr.Blocks, page: Page, handlers: Handlers) -> None:
    """Search only cannot ground an answer; another index (or a page load) offers its own fields and filters."""
    settings = page.settings
    controls = [settings.field, settings.modality, settings.source, page.question.notice]
    settings.mode.change(
        on_mode, inputs=settings.mode, outputs=settings.use_retrieval, api_visibility="private", queue=False
    )
    settings.index.change(
        handlers.on_index, inputs=settings.index, outputs=controls, api_visibility="private", queue=False
    )
    app.load(
        handlers.on_load,
        inputs=settings.index,
        outputs=[settings.index, *controls],
        api_visibility="private",
        queue=False,
    )


def _stored(page: Page) -> list[Any]:
    """What the browser keeps of the conversation, in the order `save` takes and `restore` gives it."""
    return [page.question.chatbot, page.case, page.cards, page.question.feedback.keys]


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


def clear() -> tuple[list[Any], str, str, list[Message], str, dict[str, Any], dict[str, str], str, str]:
    return [], EMPTY_CARDS, "", [], "", {}, {}, "", ""


def on_mode(mode_value: str) -> Any:
    return gr.update(interactive=mode_value != MODE_SEARCH)


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
