"""The pipeline `assistant ask` answers with, built from its options: one place for the CLI and the warm server
(assistant/warm/), so an answer is the same whichever process gives it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from assistant.rag import answer_defaults
from retriever.search.methods import DEFAULT_METHOD

if TYPE_CHECKING:
    from assistant.rag.pipeline import RagPipeline
    from assistant.settings import Settings


@dataclass(frozen=True)
class AskOptions:
    """`assistant ask`'s options other than the question (hashable: the warm server keeps a pipeline per value)."""

    no_retrieval: bool = False
    encoder: str | None = None
    k: int = answer_defaults.K
    prompt: str = answer_defaults.PROMPT
    field: str = answer_defaults.FIELD
    method: str = DEFAULT_METHOD
    #: The index folder, absolute (None: the settings' default index).
    index: str | None = None
    backend: str | None = None
    model: str | None = None
    reranker: str | None = None
    #: Study dates the retrieved reports must lie within (retriever.index.report_index.SearchFilters).
    since: str | None = None
    until: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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


def assemble(options: AskOptions, settings: Settings) -> Assembled:
    """Load the index (unless `no_retrieval`) and build the pipeline. Raises IndexLoadError, ModelNotAvailable or
    ValueError (a field the index lacks, a bad flag) with the message to show."""
    from assistant.llm_factory import make_llm
    from assistant.rag.lc_retriever import ReportRetriever
    from assistant.rag.pipeline import RagPipeline
    from retriever.index.output_paths import named_path
    from retriever.index.report_index import ReportIndex, SearchFilters
    from retriever.search.methods import checked_method

    llm_settings = settings.llm.with_flags(backend=options.backend, model=options.model)
    retriever, notices = None, []
    filters = SearchFilters(since=options.since, until=options.until)
    if options.no_retrieval and filters.any():
        raise ValueError("--since and --until choose the reports retrieved: they need retrieval")
    if not options.no_retrieval:
        folder = named_path(Path(options.index) if options.index else settings.paths.default_index)
        index = ReportIndex.load(folder, options.encoder, device=settings.encoder.device)
        notices = list(index.notices(folder, options.method))
        if options.field not in index.fields:
            raise ValueError(f"field {options.field!r} is not in this index; it has: {', '.join(index.fields)}")
        index.reranker = settings.search.load_reranker(options.reranker)
        retriever = ReportRetriever(
            index=index, field=options.field, k=options.k, method=checked_method(options.method), filters=filters
        )
    pipeline = RagPipeline(make_llm(llm_settings, settings.paths), retriever, rag_prompt=options.prompt)
    label = f"{llm_settings.backend} model {llm_settings.model or '(server default)'}"
    return Assembled(pipeline, notices, label)
