"""The page's feedback controls: a thumb up or down on every answer (the chat's own like buttons), and under the
input a form for the last answer (or the one just thumbed): helpful or not, "the right diagnosis was ...", a comment.

Each answer the page shows has a key (feedback.py); the page keeps the keys by message number, in the browser with
the conversation, and a verdict names its answer by key. The verdict is stored on the server (assistant/feedback/),
with the signed-in user, never in the browser alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from assistant.chat import render
from assistant.chat.feedback import RecentAnswers
from assistant.feedback.store import FeedbackError, Verdict

HELPFUL, NOT_HELPFUL = "Helpful", "Not helpful"
PRIVACY = "Stored on this server for the site's own benchmark, with your user name; no patient identifiers."


@dataclass
class FeedbackPanel:
    """The controls and states of the feedback form."""

    box: gr.Accordion
    verdict: gr.Radio
    right: gr.Textbox
    comment: gr.Textbox
    send: gr.Button
    note: gr.HTML
    keys: gr.State  # message number (str) -> answer key
    target: gr.State  # the key the form sends its verdict for


def feedback_panel() -> FeedbackPanel:
    """The form, closed until a resident opens it or thumbs an answer down."""
    with gr.Accordion("Feedback on the last answer", open=False, elem_id="rs-feedback") as box:
        verdict = gr.Radio([HELPFUL, NOT_HELPFUL], label="Was the answer helpful?", elem_id="rs-verdict")
        right = gr.Textbox(
            label="The right diagnosis was", placeholder="e.g. parapneumonic effusion", max_lines=1, elem_id="rs-right"
        )
        comment = gr.Textbox(label="Comment (optional)", max_lines=3, elem_id="rs-comment")
        send = gr.Button("Send feedback", elem_id="rs-send-feedback", size="sm")
        gr.HTML(f'<div class="rs-muted">{PRIVACY}</div>')
    note = gr.HTML("", elem_id="rs-feedback-note")
    return FeedbackPanel(box, verdict, right, comment, send, note, gr.State({}), gr.State(""))


def wire_feedback(panel: FeedbackPanel, chatbot: gr.Chatbot, answers: RecentAnswers) -> None:
    """The thumbs and the form store verdicts through `answers`."""

    def on_like(keys: dict[str, str], like: gr.LikeData, request: gr.Request) -> tuple[Any, ...]:
        """A thumb on an answer: stored at once; a thumb down opens the form for the right diagnosis."""
        index = like.index if isinstance(like.index, int) else like.index[0]
        key = (keys or {}).get(str(index), "")
        if not isinstance(like.liked, bool):
            return gr.skip(), gr.skip(), gr.skip(), gr.skip()
        note = _judge(answers, key, Verdict(helpful=like.liked), request)
        return note, key, gr.update(open=not like.liked), NOT_HELPFUL if not like.liked else HELPFUL

    chatbot.like(
        on_like,
        inputs=panel.keys,
        outputs=[panel.note, panel.target, panel.box, panel.verdict],
        api_visibility="private",
        queue=False,
    )

    def on_send(key: str, verdict: str | None, right: str, comment: str, request: gr.Request) -> str:
        helpful = None if verdict is None else verdict == HELPFUL
        return _judge(answers, key, Verdict(helpful, right or "", comment or ""), request)

    panel.send.click(
        on_send,
        inputs=[panel.target, panel.verdict, panel.right, panel.comment],
        outputs=panel.note,
        api_visibility="private",
        queue=False,
    )


def _judge(answers: RecentAnswers, key: str, verdict: Verdict, request: gr.Request) -> str:
    """Store the verdict; the note the page shows (thanks, or what to change)."""
    if not key:
        return render.notice_html("warning", "Ask a question first: feedback is given on an answer.")
    try:
        entry, answered = answers.judge(key, verdict, getattr(request, "username", None))
    except FeedbackError as exc:
        return render.notice_html("warning", f"Feedback not stored: {exc}")
    said = answered.diagnosis or "the answer without a diagnosis"
    return render.notice_html("info", f"Thank you: feedback {entry} on “{said}” stored.")


def answered_keys(keys: dict[str, str], history: list[Any], key: str) -> dict[str, str]:
    """The page's keys with the last message's answer added (unchanged when it has none: search only, stopped)."""
    return {**(keys or {}), str(len(history) - 1): key} if key and history else dict(keys or {})
