"""Answers a resident's message: `ChatService.respond` yields the page's outputs as the answer builds up.

A plain generator, shared by all sessions (per-session state travels in the arguments), so tests drive it without a
browser. Retrieval goes through `retriever.index.report_index` and answers through `assistant.rag.pipeline`:

- the retrieved reports are shown as soon as retrieval is done, before the model starts writing (the pipeline
  streams its `Retrieval` first);
- follow-up questions send the conversation as `history` to the pipeline, and retrieve with every finding of
  the case so far; "New case" clears both;
- nothing raises into the page: empty input, a missing index and a failing backend each give a message, and a
  failing backend still shows the retrieval-only result.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document

from assistant.chat import render, report_cards
from assistant.chat.catalog import IndexCatalog
from assistant.chat.export import export_html
from assistant.chat.feedback import RecentAnswers
from assistant.chat.sign_in_limit import SignInPolicy
from assistant.feedback.store import Answered, FeedbackStore
from assistant.llm.background import in_background
from assistant.llm.base import LLM, Message
from assistant.llm_factory import make_llm
from assistant.rag import answer_defaults
from assistant.rag.answer import Answer
from assistant.rag.assemble import build_pipeline
from assistant.rag.lc_retriever import ReportRetriever
from assistant.rag.modes import AnswerMode
from assistant.rag.pipeline import ANSWER_MAX_TOKENS, Retrieval
from assistant.settings import Settings
from retriever.reports.record import Field
from retriever.search.methods import DEFAULT_METHOD, Method

if TYPE_CHECKING:
    from retriever.index.report_index import ReportIndex, SearchFilters

log = logging.getLogger(__name__)

MODE_EVIDENCE = "Answer from the evidence (no LLM)"
MODE_ANSWER = "Answer (LLM + reports)"
MODE_FREE_TEXT = "Free text (LLM + top reports, the paper)"
MODE_SEARCH = "Search only (no LLM)"
#: The Mode control's answer modes (assistant/rag/modes.py; unticking retrieval asks the model alone).
ANSWER_MODES = {
    MODE_EVIDENCE: AnswerMode.EVIDENCE,
    MODE_ANSWER: AnswerMode.CHOICE,
    MODE_FREE_TEXT: AnswerMode.FREE_TEXT,
}
#: The mode a page opens in: ask's default answer mode (models/preset.json).
DEFAULT_MODE = {mode: label for label, mode in ANSWER_MODES.items()}.get(answer_defaults.MODE, MODE_EVIDENCE)
ANY = "Any"
STREAM_INTERVAL_S = 0.12  # page updates while streaming: often enough to look live, rarely enough to stay cheap
EXAMPLES = [
    "Blunting of the right costophrenic angle with a meniscus sign.",
    "Enlarged cardiac silhouette with cephalization of the pulmonary vessels.",
    "Patchy air space opacity in the right lower lobe with air bronchograms.",
]
BUILD_HINT = "Build the demo index with `make demo`, or your own with `assistant index CORPUS... --out DIR`."


@dataclass(frozen=True)
class ChatConfig:
    """How the chat is set up: `settings` (paths, encoder, LLM) as the command read them, `indexes` to offer besides
    those installed, and the serving limits."""

    settings: Settings = field(default_factory=Settings)
    indexes: tuple[Path, ...] = ()
    concurrency: int = 4
    queue_size: int = 64
    default_k: int = answer_defaults.K
    max_tokens: int = ANSWER_MAX_TOKENS
    sign_in: SignInPolicy = field(default_factory=SignInPolicy)
    #: Streams (open pages, answers being streamed) one address may hold at once (stream_limit.py): a page holds one
    #: or two; behind a reverse proxy that is not a trusted proxy every resident shares its address.
    streams_per_client: int = 32
    #: The feedback file residents' verdicts go to (assistant/feedback/store.py); None: the data folder's.
    feedback: Path | None = None


class CaseRetriever(ReportRetriever):
    """`ReportRetriever` that searches with the whole case (every finding the resident typed in this
    conversation, not only the follow-up)."""

    case_query: str = ""

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return super()._get_relevant_documents(self.case_query or query, run_manager=run_manager)

    def query_notice(self, query: str) -> str:
        return super().query_notice(self.case_query or query)


@dataclass
class Request:
    """The controls' values for one question."""

    mode: str = DEFAULT_MODE
    field: Field = answer_defaults.FIELD
    k: int = answer_defaults.K
    use_retrieval: bool = True
    index: str = ""  # the index folder (the page sends its catalog key, page.py maps it)
    method: Method = DEFAULT_METHOD
    modality: str = ANY
    source: str = ANY
    since: str = ""  # study dates, as the resident typed them ("": no bound)
    until: str = ""
    #: Set by the page's Stop button (ChatService.stop): the answer ends, and the model's call with it (also while
    #: the embedded model reads the prompt).
    stop: threading.Event = dataclasses.field(default_factory=threading.Event)
    user: str | None = None  # the signed-in resident (None: no sign-in)
    #: Set when an answer is finished: the key the page's feedback names it by (feedback.py).
    answer_key: str = ""

    def filters(self) -> SearchFilters:
        """The search's filters (ValueError for a study date that is not one)."""
        from retriever.index.report_index import SearchFilters

        return SearchFilters(
            modality=None if self.modality in ("", ANY, None) else self.modality,
            source=None if self.source in ("", ANY, None) else self.source,
            since=(self.since or "").strip() or None,
            until=(self.until or "").strip() or None,
        )


Outputs = tuple[list[dict[str, Any]], Any, str, list[Message], str]


class ChatService:
    """Answers one resident's message; shared by all sessions (per-session state travels in the arguments)."""

    def __init__(self, config: ChatConfig, llm: LLM | None = None) -> None:
        self.config = config
        settings = config.settings
        self.catalog = IndexCatalog(
            settings.paths, config.indexes, device=settings.encoder.device, search=settings.search.configure
        )
        self._llm = llm
        self._llm_lock = threading.Lock()
        self._stops: dict[str, threading.Event] = {}  # each session's running answer, for its Stop button
        store = FeedbackStore(config.feedback) if config.feedback else FeedbackStore.at(settings.paths)
        self.answers = RecentAnswers(store)  # the answers shown, for residents' verdicts on them

    def llm(self) -> LLM:
        """The backend, built on first use (the embedded model loads lazily and is cached per file)."""
        with self._llm_lock:
            if self._llm is None:
                self._llm = make_llm(self.config.settings.llm, self.config.settings.paths)
            return self._llm

    def warm_up(self) -> None:
        """Load the default index's encoder and the model ahead of the first question (run in a thread at
        start-up; a failure here is only logged, the page explains it when a resident asks)."""
        try:
            self.catalog.load(self.catalog.default()).encoder()
        except Exception as exc:  # noqa: BLE001
            log.warning("index not preloaded: %s", exc)
        if self.config.settings.llm.backend == "embedded":
            try:
                self.llm().count_tokens("warm up")
            except Exception as exc:  # noqa: BLE001
                log.warning("model not preloaded: %s", exc)

    def stop_signal(self, session: str) -> threading.Event:
        """A fresh stop signal for the session's next answer (the one its Stop button sets)."""
        self._stops[session] = threading.Event()
        return self._stops[session]

    def stop(self, session: str) -> bool:
        """Stop the session's running answer (False: none is running): `respond` ends it within a poll, and the
        model's call ends too (the signal is the pipeline's `cancel`): an HTTP stream is closed at its next piece,
        the embedded model abandons the prompt it is reading or stops after its current token, and its lock is
        free for the next question."""
        if (signal := self._stops.get(session)) is None:
            return False
        signal.set()
        return True

    def release(self, session: str, signal: threading.Event) -> None:
        """The session's answer with this signal has ended (answered, stopped or failed)."""
        if self._stops.get(session) is signal:
            del self._stops[session]

    def respond(
        self,
        message: str | None,
        chat: list[dict[str, Any]] | None,
        case: list[Message] | None,
        request: Request,
    ) -> Iterator[Outputs]:
        """Yield (chat, report cards, notice, case history, textbox) as the answer builds up."""
        import gradio as gr

        chat = [{"role": m["role"], "content": m["content"]} for m in (chat or [])]
        case = list(case or [])
        text = (message or "").strip()
        if not text:
            notice = render.notice_html("warning", "Type a finding first, e.g. “" + EXAMPLES[0] + "”")
            yield chat, gr.skip(), notice, case, message or ""
            return
        try:
            request.filters()
        except ValueError as exc:  # a study date that is not one: say so before anything is searched
            yield chat, gr.skip(), render.notice_html("warning", f"Study dates: {exc}."), case, message or ""
            return
        chat += [{"role": "user", "content": render.md_escape(text)}, {"role": "assistant", "content": ""}]
        try:
            if request.mode == MODE_SEARCH:
                yield from self._search_only(text, chat, case, request)
            else:
                yield from self._answer(text, chat, case, request)
        except Exception as exc:  # noqa: BLE001 - the page shows a message, never a traceback
            log.exception("chat request failed")
            chat[-1]["content"] = "**No answer:** an unexpected error occurred (details in the server log)."
            yield chat, gr.skip(), render.notice_html("error", f"Unexpected error: {exc}"), case, ""

    def _index(self, request: Request) -> tuple[ReportIndex | None, str]:
        """The chosen index, or None and the notice explaining why it cannot be used."""
        from retriever.index.errors import IndexLoadError

        if not request.index:
            return None, render.notice_html("error", "No report index is installed.", detail=BUILD_HINT)
        try:
            index = self.catalog.load(request.index)
        except IndexLoadError as exc:
            return None, render.notice_html("error", f"Report index unavailable: {exc}", detail=BUILD_HINT)
        if request.field not in index.fields:
            message = f"This index has no {request.field!r} vectors; choose one of: {', '.join(index.fields)}."
            return None, render.notice_html("error", message)
        return index, ""

    def _search_only(
        self, text: str, chat: list[dict[str, Any]], case: list[Message], request: Request
    ) -> Iterator[Outputs]:
        index, notice = self._index(request)
        if index is None:
            chat[-1]["content"] = "**No search:** the report index is unavailable (see the message above)."
            yield chat, report_cards.report_cards_html([]), notice, case, ""
            return
        hits = index.search(text, field=request.field, k=request.k, filters=request.filters(), method=request.method)
        chat[-1]["content"] = render.search_markdown(hits, request.field)
        cards = report_cards.report_cards_html(
            hits,
            method=request.method,
            empty_message="No report matched.",
            query=text,
        )
        yield chat, cards, "", case, ""

    def _answer(
        self, text: str, chat: list[dict[str, Any]], case: list[Message], request: Request
    ) -> Iterator[Outputs]:
        import gradio as gr

        retriever: CaseRetriever | None = None
        case_query = "\n".join([*(m["content"] for m in case if m["role"] == "user"), text])
        if request.use_retrieval:
            index, notice = self._index(request)
            if index is None:
                chat[-1]["content"] = (
                    "**No answer:** the report index is unavailable (see the message above). Untick "
                    "*Ground the answer in retrieved reports* to ask the model alone."
                )
                yield chat, report_cards.report_cards_html([]), notice, case, ""
                return
            retriever = CaseRetriever(
                index=index,
                field=request.field,
                k=request.k,
                filters=request.filters(),
                method=request.method,
                case_query=case_query,
            )
        placeholder = "Searching the archive…" if retriever else "Retrieval is off: the answer rests on no report."
        chat[-1]["content"] = "_Searching similar reports…_" if retriever else "_Thinking…_"
        yield chat, report_cards.report_cards_html([], empty_message=placeholder), "", case, ""

        mode = ANSWER_MODES[request.mode] if retriever is not None else AnswerMode.NO_RETRIEVAL
        settings = self.config.settings.with_flags(mode=mode, k=request.k, field=request.field, method=request.method)
        pipeline = build_pipeline(settings, self.llm(), retriever, max_tokens=self.config.max_tokens)
        pieces: list[str] = []
        last = 0.0
        answer = pipeline.iter_answer({"query": text, "history": case}, cancel=request.stop)
        with contextlib.closing(in_background(answer)) as items:
            for item in items:
                if request.stop.is_set():
                    chat[-1]["content"] = render.STOPPED_MARKDOWN
                    yield chat, gr.skip(), "", case, ""
                    return
                if isinstance(item, Answer):
                    yield self._finish(item, text, chat, case, request, case_query)
                    return
                if isinstance(item, Retrieval):
                    chat[-1]["content"] = (
                        "_Reports found; reading what they affirm…_"
                        if pipeline.evidence_only
                        else "_Reports found; the model is reading them…_"
                    )
                    cards = report_cards.report_cards_html(item.retrieved, method=request.method, query=case_query)
                    yield chat, cards, "", case, ""
                elif item is not None:
                    pieces.append(item)
                    chat[-1]["content"] = render.partial_answer_markdown("".join(pieces))
                    if time.monotonic() - last >= STREAM_INTERVAL_S:
                        last = time.monotonic()
                        yield chat, gr.skip(), "", case, ""
        raise RuntimeError("the pipeline ended without an Answer")

    def _finish(
        self,
        answer: Answer,
        text: str,
        chat: list[dict[str, Any]],
        case: list[Message],
        request: Request,
        case_query: str,
    ) -> Outputs:
        chat[-1]["content"] = render.answer_markdown(answer)
        cards = (
            report_cards.evidence_html(answer)
            + report_cards.report_cards_html(
                answer.retrieved,
                cited=answer.cited_report_ids,
                method=request.method,
                query=case_query,
            )
            if request.use_retrieval
            else report_cards.report_cards_html([], empty_message="Retrieval is off: the answer rests on no report.")
        ) + export_html(answer, earlier=[m["content"] for m in case if m["role"] == "user"])
        request.answer_key = self.answers.keep(
            Answered(text, case_query, answer.to_dict(), request.index, "chat", request.user)
        )
        notice = render.notes_html(answer.notes)
        if answer.degraded:
            shown = " The retrieval-only result is shown instead." if answer.retrieved else ""
            heading, why = render.degraded_heading(answer), render.degraded_why(answer)
            level = "info" if answer.no_diagnosis else "warning"
            notice = render.notice_html(level, f"{heading}: {why}.{shown}", detail=answer.degraded_reason or "")
            notice += render.notes_html(answer.notes)
        case = [
            *case,
            {"role": "user", "content": text},
            {"role": "assistant", "content": render.history_content(answer)},
        ]
        return chat, cards, notice, case, ""
