"""The one pipeline builder: `build_pipeline` makes every RagPipeline of the product (`assistant ask`, `assistant
serve`, the chat) and of the benchmarks from Settings, so an answer is made, and hashed, the same whichever process
gives it. `assemble` is `ask`'s and the warm server's road to it: load the index its options name, then build."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from langchain_core.retrievers import BaseRetriever

    from assistant.llm.base import LLM
    from assistant.rag.pipeline import RagPipeline
    from assistant.settings import Settings


@dataclass(frozen=True)
class AskOptions:
    """`assistant ask`'s options other than the question (hashable: the warm server keeps a pipeline per value).
    None: the settings' value (the preset's, unless the environment says otherwise)."""

    mode: str | None = None
    no_retrieval: bool = False
    encoder: str | None = None
    k: int | None = None
    prompt: str | None = None
    field: str | None = None
    method: str | None = None
    #: The index folder, absolute (None: the settings' default index).
    index: str | None = None
    backend: str | None = None
    model: str | None = None
    reranker: str | None = None
    #: Study dates the retrieved reports must lie within (retriever.index.report_index.SearchFilters).
    since: str | None = None
    until: str | None = None
    #: The named preset the settings are read over (None: RADSEARCH_PRESET, else `default`).
    preset: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def settings(self, settings: Settings) -> Settings:
        """`settings` with these options applied as flags."""
        mode = "no-retrieval" if self.no_retrieval else self.mode
        flags = {n: getattr(self, n) for n in ("k", "field", "prompt", "method", "reranker", "backend", "model")}
        return settings.with_flags(mode=mode, index=self.index, **flags)


#: How `ask` prints an answer: streamed as it is written, or whole at the end as JSON or as a Markdown document.
Output = Literal["stream", "json", "markdown"]


@dataclass(frozen=True)
class AskCall:
    """One `assistant ask`: the question, the options its pipeline is built from, how the answer is printed and
    whether a warm server may answer it (`--no-server`: no). The CLI and the warm server build it alike
    (assistant.commands.ask_cmd.ask_call), so a question is answered the same whichever process reads it."""

    query: str
    options: AskOptions
    output: Output = "stream"
    server: bool = True


@dataclass
class Assembled:
    """A ready pipeline, the notices its index gave (an index built under older rules...) and who answers."""

    pipeline: RagPipeline
    notices: list[str] = field(default_factory=list)
    model_label: str = ""


def build_pipeline(
    settings: Settings,
    llm: LLM,
    retriever: BaseRetriever | None,
    *,
    max_tokens: int | None = None,
) -> RagPipeline:
    """The pipeline `settings` describe (their answer mode, its prompt and the evidence weighting) over `retriever`
    (None: the model alone), answering with `llm`; its answers carry the settings' configuration hash."""
    from assistant.rag.modes import AnswerMode, answer_mode
    from assistant.rag.pipeline import ANSWER_MAX_TOKENS, RagPipeline
    from assistant.rag.weighting import weighting_named

    mode = answer_mode(settings.answer.mode) if retriever is not None else AnswerMode.NO_RETRIEVAL
    return RagPipeline(
        llm,
        retriever,
        mode=mode,
        prompt=settings.answer.prompt(mode),
        max_tokens=max_tokens or ANSWER_MAX_TOKENS,
        evidence_weighting=weighting_named(settings.answer.evidence_weighting),
        settings_hash=settings.configuration_hash,
    )


def assemble(options: AskOptions, settings: Settings) -> Assembled:
    """Load the index (unless no retrieval) and build the pipeline. Raises IndexLoadError, ModelNotAvailable or
    ValueError (a field the index lacks, a bad flag) with the message to show."""
    from assistant.llm_factory import make_llm
    from assistant.rag.lc_retriever import ReportRetriever
    from assistant.rag.modes import answer_mode
    from retriever.index.output_paths import named_path
    from retriever.index.report_index import ReportIndex, SearchFilters
    from retriever.reports.record import checked_field

    chosen = options.settings(settings)
    answer = chosen.answer
    retriever, notices = None, []
    filters = SearchFilters(since=options.since, until=options.until)
    retrieves = answer_mode(answer.mode).retrieves
    if not retrieves and filters.any():
        raise ValueError("--since and --until choose the reports retrieved: they need retrieval")
    if retrieves:
        folder = named_path(chosen.paths.default_index)
        index = ReportIndex.load(folder, options.encoder, device=chosen.encoder.device, search=chosen.search.configure)
        method = index.search_configuration.method
        notices = list(index.notices(folder, method))
        if answer.field not in index.fields:
            raise ValueError(f"field {answer.field!r} is not in this index; it has: {', '.join(index.fields)}")
        retriever = ReportRetriever(
            index=index,
            field=checked_field(answer.field),
            k=answer.k,
            method=method,
            filters=filters,
        )
    pipeline = build_pipeline(chosen, make_llm(chosen.llm, chosen.paths), retriever)
    label = f"{chosen.llm.backend} model {chosen.llm.model or '(server default)'}"
    return Assembled(pipeline, notices, label)
