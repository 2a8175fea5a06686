"""The Gradio chat for radiology residents: a finding in, a streamed answer out, the reports it rests on beside it.

`build_app(ChatConfig(...))` returns the `gr.Blocks`; `launch_app` serves it with the project's safe defaults
(loopback, no share link, no analytics, no run history). The request handler `ChatService.respond` is a plain
generator so tests can drive it without a browser. Retrieval goes through `retriever.index` and answers through
`assistant.rag`; this module only wires them to the page:

- the retrieved reports are shown as soon as retrieval is done, before the model starts writing (a recording
  retriever hands them over);
- follow-up questions send the conversation as `history` to the pipeline, and retrieve with every finding of
  the case so far; "New case" clears both;
- nothing raises into the page: empty input, a missing index and a failing backend each give a message, and a
  failing backend still shows the retrieval-only result.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from pydantic import Field

from assistant import chat_render as render
from assistant.answer import Answer, RetrievedReport
from assistant.background import in_background
from assistant.lc_retriever import ReportRetriever, document_to_report, hit_to_document
from assistant.llm import LLM, Message
from assistant.rag import DEFAULT_MAX_TOKENS, RagPipeline
from assistant.settings import LLMSettings, make_llm
from assistant.sign_in_limit import FailedSignIns, SignInPolicy, SignInRateLimit
from retriever.methods import DEFAULT_METHOD

if TYPE_CHECKING:
    import gradio as gr

    from retriever.index import ReportIndex, SearchFilters

log = logging.getLogger(__name__)

MODE_ANSWER = "Answer (LLM + reports)"
MODE_SEARCH = "Search only (no LLM)"
FIELD_CHOICES = [("Similar findings", "findings"), ("Likely impressions", "impression"), ("Full reports", "report")]
ANY = "Any"
MAX_K = 20
DEFAULT_CHAT_K = 3  # more evidence on screen than the paper's k=1; the slider goes down to 1
STREAM_INTERVAL_S = 0.12  # page updates while streaming: often enough to look live, rarely enough to stay cheap
EXAMPLES = [
    "Blunting of the right costophrenic angle with a meniscus sign.",
    "Enlarged cardiac silhouette with cephalization of the pulmonary vessels.",
    "Patchy air space opacity in the right lower lobe with air bronchograms.",
]
BUILD_HINT = "Build the demo index with `make demo`, or your own with `assistant index CORPUS... --out DIR`."


@dataclass(frozen=True)
class ChatConfig:
    """How the app is set up. `indexes`: extra index folders to offer besides those installed."""

    llm_settings: LLMSettings = field(default_factory=LLMSettings.from_env)
    indexes: tuple[Path, ...] = ()
    concurrency: int = 4
    queue_size: int = 64
    default_k: int = DEFAULT_CHAT_K
    max_tokens: int = DEFAULT_MAX_TOKENS
    sign_in: SignInPolicy = field(default_factory=SignInPolicy)


# ------------------------------------------------------------------------------------------------ indexes
class LockedIndex:
    """A `ReportIndex` shared by all residents: searches are serialised because the encoder's fast tokenizer
    and the SQLite connection are not safe to use from several threads at once (a search takes milliseconds,
    so the lock costs nothing noticeable)."""

    def __init__(self, index: ReportIndex) -> None:
        self._index = index
        self._lock = threading.Lock()

    @property
    def fields(self) -> tuple[str, ...]:
        return self._index.fields

    @property
    def manifest(self) -> Any:
        return self._index.manifest

    def search(self, *args: Any, **kwargs: Any) -> list[Any]:
        with self._lock:
            return self._index.search(*args, **kwargs)

    def prepare(self, query: str) -> Any:
        with self._lock:
            return self._index.prepare(query)

    def warm_up(self) -> None:
        """Load the encoder now, so the first resident does not wait for it."""
        with self._lock:
            self._index.encoder()


class IndexCatalog:
    """The indexes a resident can choose from: the default (demo) index, every index under `indexes_dir()`,
    and any given with `--index`. Each is loaded once and shared."""

    def __init__(self, extra: Sequence[Path] = ()) -> None:
        self._extra = [Path(p).expanduser() for p in extra]
        self._loaded: dict[str, LockedIndex] = {}
        self._lock = threading.Lock()

    def folders(self) -> list[Path]:
        """Candidate folders, `--index` ones first, then the default index, then the installed ones."""
        from models.paths import default_index_dir, indexes_dir

        found = [*self._extra, default_index_dir()]
        root = indexes_dir()
        if root.is_dir():
            # hidden folders are an index being written or the previous one kept during a swap (index_swap.py)
            found += sorted(
                p for p in root.iterdir() if not p.name.startswith(".") and (p / "manifest.json").is_file()
            )
        unique: dict[str, Path] = {}
        for folder in found:
            unique.setdefault(str(folder.resolve()), folder)
        return list(unique.values())

    def choices(self) -> list[tuple[str, str]]:
        """(label, folder) pairs; the label names the encoder and size, or says the index is not built."""
        from retriever.manifest import Manifest

        choices = []
        for folder in self.folders():
            try:
                manifest = Manifest.read(folder)
                label = f"{folder.name} · {manifest.encoder.name} · {manifest.reports:,} reports"
            except (OSError, ValueError):
                label = f"{folder.name} · not built"
            choices.append((label, str(folder)))
        return choices

    def default(self) -> str:
        """The first built index, else the first candidate (whose absence the page then explains)."""
        choices = self.choices()
        built = [value for label, value in choices if not label.endswith("not built")]
        return (built or [value for _, value in choices])[0]

    def load(self, folder: str) -> LockedIndex:
        """The loaded index (IndexLoadError, saying what command builds it, when it is missing or broken)."""
        from retriever.index import ReportIndex

        key = str(Path(folder).expanduser().resolve())
        with self._lock:
            if key not in self._loaded:
                self._loaded[key] = LockedIndex(ReportIndex.load(Path(folder)))
            return self._loaded[key]

    @staticmethod
    def filter_values(folder: str) -> tuple[list[str], list[str]]:
        """Modalities and sources in an index (empty lists when it cannot be read)."""
        from retriever.index import STORE_FILE
        from retriever.report_store import ReportStore

        try:
            store = ReportStore(Path(folder) / STORE_FILE)
            return store.values("modality"), store.values("source")
        except Exception:  # noqa: BLE001 - a missing/corrupt index is reported when it is searched
            return [], []


class CaseRetriever(ReportRetriever):
    """`ReportRetriever` that searches with the whole case (every finding the resident typed in this
    conversation, not only the follow-up) and keeps what it found so the page can show it before the
    model has finished."""

    case_query: str = ""
    found: list[Document] = Field(default_factory=list)
    done: threading.Event = Field(default_factory=threading.Event)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        docs = super()._get_relevant_documents(self.case_query or query, run_manager=run_manager)
        self.found[:] = docs
        self.done.set()
        return docs

    def query_notice(self, query: str) -> str:
        return super().query_notice(self.case_query or query)


# ---------------------------------------------------------------------------------------------- requests
@dataclass
class Request:
    """The controls' values for one question."""

    mode: str = MODE_ANSWER
    field: str = "impression"
    k: int = DEFAULT_CHAT_K
    use_retrieval: bool = True
    index: str = ""
    method: str = DEFAULT_METHOD
    modality: str = ANY
    source: str = ANY

    def filters(self) -> SearchFilters:
        from retriever.index import SearchFilters

        return SearchFilters(
            modality=None if self.modality in ("", ANY, None) else self.modality,
            source=None if self.source in ("", ANY, None) else self.source,
        )


Outputs = tuple[list[dict[str, Any]], Any, str, list[Message], str]


class ChatService:
    """Answers one resident's message; shared by all sessions (per-session state travels in the arguments)."""

    def __init__(self, config: ChatConfig, llm: LLM | None = None) -> None:
        self.config = config
        self.catalog = IndexCatalog(config.indexes)
        self._llm = llm
        self._llm_lock = threading.Lock()

    def llm(self) -> LLM:
        """The backend, built on first use (the embedded model loads lazily and is cached per file)."""
        with self._llm_lock:
            if self._llm is None:
                self._llm = make_llm(self.config.llm_settings)
            return self._llm

    def warm_up(self) -> None:
        """Load the default index's encoder and the model ahead of the first question (run in a thread at
        start-up; a failure here is only logged, the page explains it when a resident asks)."""
        try:
            self.catalog.load(self.catalog.default()).warm_up()
        except Exception as exc:  # noqa: BLE001
            log.warning("index not preloaded: %s", exc)
        if self.config.llm_settings.backend == "embedded":
            try:
                self.llm().count_tokens("warm up")
            except Exception as exc:  # noqa: BLE001
                log.warning("model not preloaded: %s", exc)

    def backend_label(self) -> str:
        s = self.config.llm_settings
        if s.backend == "openai":
            return f"{s.model or 'server default'} at {s.base_url}"
        return f"embedded {s.model}"

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

    def _index(self, request: Request) -> tuple[LockedIndex | None, str]:
        """The chosen index, or None and the notice explaining why it cannot be used."""
        from retriever.index import IndexLoadError

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
            yield chat, render.report_cards_html([]), notice, case, ""
            return
        hits = index.search(text, field=request.field, k=request.k, filters=request.filters(), method=request.method)
        reports = [document_to_report(hit_to_document(hit), hit.rank) for hit in hits]
        chat[-1]["content"] = render.search_markdown(reports, request.field)
        cards = render.report_cards_html(reports, method=request.method, empty_message="No report matched.")
        yield chat, cards, "", case, ""

    def _answer(
        self, text: str, chat: list[dict[str, Any]], case: list[Message], request: Request
    ) -> Iterator[Outputs]:
        import gradio as gr

        retriever: CaseRetriever | None = None
        if request.use_retrieval:
            index, notice = self._index(request)
            if index is None:
                chat[-1]["content"] = (
                    "**No answer:** the report index is unavailable (see the message above). Untick "
                    "*Ground the answer in retrieved reports* to ask the model alone."
                )
                yield chat, render.report_cards_html([]), notice, case, ""
                return
            earlier = [m["content"] for m in case if m["role"] == "user"]
            retriever = CaseRetriever(
                index=index,
                field=request.field,
                k=request.k,
                filters=request.filters(),
                method=request.method,
                case_query="\n".join([*earlier, text]),
            )
        placeholder = "Searching the archive…" if retriever else "Retrieval is off: the answer rests on no report."
        chat[-1]["content"] = "_Searching similar reports…_" if retriever else "_Thinking…_"
        yield chat, render.report_cards_html([], empty_message=placeholder), "", case, ""

        pipeline = RagPipeline(self.llm(), retriever, max_tokens=self.config.max_tokens)
        pieces: list[str] = []
        cards_shown = retriever is None
        last = 0.0
        for item in in_background(pipeline.iter_answer({"query": text, "history": case})):
            if isinstance(item, Answer):
                yield self._finish(item, text, chat, case, request)
                return
            fresh_cards = False
            if not cards_shown and retriever is not None and retriever.done.is_set():
                fresh_cards = cards_shown = True
                chat[-1]["content"] = "_Reports found; the model is reading them…_"
            if item is not None:
                pieces.append(item)
                chat[-1]["content"] = render.partial_answer_markdown("".join(pieces))
            if fresh_cards or (item is not None and time.monotonic() - last >= STREAM_INTERVAL_S):
                last = time.monotonic()
                cards = (
                    render.report_cards_html(self._found(retriever), method=request.method)
                    if fresh_cards and retriever is not None
                    else gr.skip()
                )
                yield chat, cards, "", case, ""
        raise RuntimeError("the pipeline ended without an Answer")

    @staticmethod
    def _found(retriever: CaseRetriever) -> list[RetrievedReport]:
        return [document_to_report(doc, rank) for rank, doc in enumerate(retriever.found, start=1)]

    @staticmethod
    def _finish(
        answer: Answer, text: str, chat: list[dict[str, Any]], case: list[Message], request: Request
    ) -> Outputs:
        chat[-1]["content"] = render.answer_markdown(answer)
        cards = (
            render.report_cards_html(answer.retrieved, cited=answer.cited_report_ids, method=request.method)
            if request.use_retrieval
            else render.report_cards_html([], empty_message="Retrieval is off: the answer rests on no report.")
        )
        notice = render.notes_html(answer.notes)
        if answer.degraded:
            why = render.DEGRADED_LABELS.get(answer.degraded_kind or "", "the language model failed")
            shown = " The retrieval-only result is shown instead." if answer.retrieved else ""
            notice = render.notice_html("warning", f"No LLM answer: {why}.{shown}", detail=answer.degraded_reason or "")
            notice += render.notes_html(answer.notes)
        case = [
            *case,
            {"role": "user", "content": text},
            {"role": "assistant", "content": render.history_content(answer)},
        ]
        return chat, cards, notice, case, ""


# -------------------------------------------------------------------------------------------------- page
def build_app(config: ChatConfig, service: ChatService | None = None) -> gr.Blocks:
    """The page: settings on the left, the conversation in the middle, the retrieved reports on the right."""
    import gradio as gr

    from retriever.methods import METHODS

    service = service or ChatService(config)
    catalog = service.catalog
    index_choices = catalog.choices()
    default_index = catalog.default()
    modalities, sources = catalog.filter_values(default_index)

    with gr.Blocks(title="RadSearch Assistant", analytics_enabled=False) as app:
        gr.HTML(render.header_html(service.backend_label()))
        gr.HTML(render.BANNER_HTML)
        with gr.Row(equal_height=False):
            with gr.Column(scale=2, min_width=270):
                with gr.Group():
                    mode = gr.Radio([MODE_ANSWER, MODE_SEARCH], value=MODE_ANSWER, label="Mode")
                    use_retrieval = gr.Checkbox(value=True, label="Ground the answer in retrieved reports")
                with gr.Accordion("Search settings", open=True):
                    index = gr.Dropdown(index_choices, value=default_index, label="Index (encoder)")
                    field_choice = gr.Radio(FIELD_CHOICES, value="impression", label="Search mode")
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

    from retriever.manifest import Manifest

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


def launch_app(
    app: gr.Blocks,
    config: ChatConfig,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    auth: tuple[str, str] | None = None,
    root_path: str | None = None,
    block: bool = True,
) -> Any:
    """Serve with a bounded queue: `config.concurrency` requests run at once (the embedded model answers one
    at a time anyway; searches and HTTP backends run in parallel), the rest wait and see their position.
    No share link, analytics, run history, monitoring endpoint or MCP server: report text stays on the host.
    Sign-in is rate limited per address (assistant/sign_in_limit.py)."""
    from starlette.middleware import Middleware

    from assistant.chat_render import CSS

    app.queue(default_concurrency_limit=config.concurrency, max_size=config.queue_size)
    return app.launch(
        server_name=host,
        server_port=port,
        auth=auth,
        auth_message="RadSearch Assistant: sign in with the account your department gave you.",
        root_path=root_path,
        share=False,
        inbrowser=False,
        prevent_thread_lock=not block,
        show_error=False,
        quiet=not block,
        max_threads=max(40, config.concurrency * 4),
        footer_links=["api", "settings"],
        run_history=False,
        enable_monitoring=False,
        mcp_server=False,
        ssr_mode=False,
        pwa=False,
        theme=_theme(),
        css=CSS,
        app_kwargs={"middleware": [Middleware(SignInRateLimit, failures=FailedSignIns(config.sign_in))]},
    )


def _theme() -> Any:
    """A calm clinical palette with system-installed or bundled fonts only (no font CDN: hospital networks
    often block the internet, and report text should not trigger outside requests)."""
    import gradio as gr

    return gr.themes.Soft(
        primary_hue=gr.themes.colors.blue,
        neutral_hue=gr.themes.colors.slate,
        font=["system-ui", "-apple-system", "Segoe UI", "Roboto", "Helvetica Neue", "Arial", "sans-serif"],
        font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "monospace"],
    )
