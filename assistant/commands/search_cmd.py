"""`assistant search`: ranked reports for a finding, as a table or JSON.

A hit whose text says the opposite of the query (negates the finding it asks for, or affirms one it rules out;
`Hit.contradicts`, ranked after the others by the index) is marked: YES in a red "contradicts" column of the table,
with a note below it saying what that means, and `"contradicts": true` in the JSON (false on every other hit). A
mixed hit, which matches the query but rules one of its findings out somewhere (`Hit.partly_contradicts`, ranked as
usual), gets `partly` in that column, its own note and `"partly_contradicts": true`.

Each hit shows the sentence of the searched field that holds most of the query's words, those words marked and the
ones the report negates marked so (assistant/excerpt.py; `matching_sentence` in the JSON), a strength word beside
the method's raw score (assistant/readable.py) and the modality in words; `assistant show ID` prints the whole report.

`--diagnosis NAME` keeps the reports whose conclusion affirms that diagnosis, by the concepts the index stored for
each report when it was built or updated (retriever/index/concept_rows.py): NAME is any name or synonym of the
vocabulary, in any case and spelling the linker folds, or a concept id (retriever/concepts/lookup.py). The filter
is applied before ranking, like the others: the k hits are the most similar of the reports affirming it, and a note
says how many reports of the index affirm it. An unknown name is an error listing close names; an index without
concepts of this program's vocabulary is an error saying to run `assistant update --relink`.

Exit codes as `assistant ask`: 0 results (or none matched), 2 bad input (empty query, missing or mismatched
index, bad option value, an unknown diagnosis, or one asked of an index without stored diagnoses).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from assistant.commands.output import contradiction_marks
from assistant.commands.shared import (
    EXIT_BAD_INPUT,
    FIELD_HELP,
    IndexOption,
    RerankerOption,
    SearchEncoderOption,
    SinceOption,
    UntilOption,
)
from retriever.search.hit import Hit
from retriever.search.methods import DEFAULT_METHOD

if TYPE_CHECKING:
    from rich.console import Console

    from assistant.settings import SearchSettings, Settings
    from retriever.index.report_index import ReportIndex
    from retriever.search.rerank import SecondStage


QueryArgument = Annotated[str, typer.Argument(help="Finding text to search for.")]
KOption = Annotated[int, typer.Option("-k", "--k", min=1, max=100, help="Number of reports.")]
MethodOption = Annotated[
    str,
    typer.Option(help="dense (the index's encoder), bm25, hybrid (reciprocal rank fusion of both) or hybrid-weighted."),
]
ModalityOption = Annotated[str | None, typer.Option(help="Only reports of this modality (XR, CT, MR, US, ...).")]
SourceOption = Annotated[str | None, typer.Option(help="Only reports from this source (openi, ctrate, ...).")]
LabelOption = Annotated[str | None, typer.Option(help="Only reports carrying this label.")]
StatusOption = Annotated[
    str | None, typer.Option(help="Only reports of this status (final, preliminary, corrected, ...).")
]
ExamOption = Annotated[
    str | None, typer.Option(help="Only studies whose description contains this (e.g. 'CHEST 2 VIEWS').")
]
DiagnosisOption = Annotated[
    str | None,
    typer.Option(
        help="Only reports whose conclusion affirms this diagnosis (a name or synonym of the vocabulary, e.g. "
        "'pleural effusion', or a concept id), by the diagnoses the index stored for each report."
    ),
]
SortOption = Annotated[str, typer.Option(help="relevance (the ranking) or date (the same hits, newest study first).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
ExpandOption = Annotated[
    bool | None,
    typer.Option(
        "--expand/--no-expand",
        help="Expand shorthand in the query (PTX -> pneumothorax; default: on unless "
        "RADSEARCH_ABBREVIATION_EXPANSION=off; own table: RADSEARCH_ABBREVIATIONS=table.csv).",
    ),
]


def search(
    query: QueryArgument,
    index: IndexOption = None,
    field: Annotated[str, typer.Option(help=FIELD_HELP)] = "impression",
    k: KOption = 5,
    method: MethodOption = DEFAULT_METHOD,
    encoder: SearchEncoderOption = None,
    modality: ModalityOption = None,
    source: SourceOption = None,
    label: LabelOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    status: StatusOption = None,
    exam: ExamOption = None,
    diagnosis: DiagnosisOption = None,
    sort: SortOption = "relevance",
    as_json: JsonOption = False,
    expand: ExpandOption = None,
    reranker: RerankerOption = None,
) -> None:
    """Search an index and print the top-k reports with their scores."""
    from rich.console import Console

    from assistant.commands.output import print_error, print_note
    from assistant.commands.shared import read_settings
    from models.resolve import ModelNotAvailable
    from retriever.index.errors import IndexLoadError
    from retriever.index.report_index import ConceptsNotStored, SearchFilters
    from retriever.search.query import EmptyQueryError, clean_query

    err = Console(stderr=True)
    settings = read_settings(err)
    try:
        chosen = _chosen(settings.search, expand, reranker)
        searched_as = chosen.expander().expand(clean_query(query))
        folder, idx = _loaded_index(settings, chosen, index, encoder)
        notice = idx.prepare(query).notice() if method != "bm25" else ""
        wanted = _diagnosis(idx, diagnosis) if diagnosis else {}
        filters = SearchFilters(modality, source, label, since, until, status, exam, wanted.get("concept"))
        hits = by_date(idx.search(query, field=field, k=k, filters=filters, method=method), sort)
    except (EmptyQueryError, IndexLoadError, ModelNotAvailable, ValueError) as exc:
        relink = f": `assistant update --relink --index {folder}`" if isinstance(exc, ConceptsNotStored) else ""
        print_error(err, f"{exc}{relink}")
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    stage = idx.search_configuration.second_stage
    stage = stage if stage is not None and stage.applies_to(field, searched_as) else None
    for note in (notice, *idx.notices(folder, method), _affirming_note(wanted)):
        if note:
            print_note(err, note)
    if as_json:
        payload = _payload(query, searched_as, field, method, idx.manifest.encoder.name, stage, bool(notice), hits)
        print(json.dumps(payload | ({"diagnosis": wanted} if wanted else {}), ensure_ascii=False, indent=2))
        return
    if not hits:
        err.print("no matching reports (try another field, fewer filters, or method dense)")
        return
    stages = f"{method}, {idx.manifest.encoder.name}" + (f", re-ranked by {stage.name}" if stage else "")
    _print_table(hits, query, f"{field} matches ({stages})", err, f" --index {folder}" if index else "")


def _diagnosis(idx: ReportIndex, name: str) -> dict[str, Any]:
    """The diagnosis `--diagnosis` names (UnknownDiagnosis listing close names otherwise), with how many reports of
    the index affirm it (ConceptsNotStored for an index without this vocabulary's concepts)."""
    from retriever.concepts.lookup import concept_named

    concept = concept_named(name)
    return {"name": concept.name, "concept": concept.id, "reports_affirming": len(idx.affirming(concept.id))}


def _affirming_note(wanted: dict[str, Any]) -> str:
    """What a search filtered by a diagnosis searched among ("" without the filter)."""
    if not wanted:
        return ""
    count = wanted["reports_affirming"]
    return (
        f"{count} report{'s' if count != 1 else ''} of the index affirm{'s' if count == 1 else ''} {wanted['name']} "
        f"({wanted['concept']}): the hits are the most similar of them"
    )


def _chosen(search: SearchSettings, expand: bool | None, reranker: str | None) -> SearchSettings:
    """The search settings with the flags applied: --expand over RADSEARCH_ABBREVIATION_EXPANSION, --reranker over
    RADSEARCH_RERANKER."""
    from assistant.settings import reranker_setting

    if expand is not None:
        search = replace(search, expand_abbreviations=expand)
    if reranker is not None:
        search = replace(search, reranker=reranker_setting(reranker))
    return search


def _loaded_index(
    settings: Settings, chosen: SearchSettings, index: Path | None, encoder: str | None
) -> tuple[Path, ReportIndex]:
    """The index folder `--index` names (else the default index) and its index loaded with the search configuration
    `chosen` gives its manifest (the flags applied over the settings)."""
    from retriever.index.output_paths import named_path
    from retriever.index.report_index import ReportIndex

    folder = named_path(index or settings.paths.default_index)
    return folder, ReportIndex.load(folder, encoder, device=settings.encoder.device, search=chosen.configure)


def _payload(
    query: str,
    searched_as: str,
    field: str,
    method: str,
    encoder: str,
    stage: SecondStage | None,
    truncated: bool,
    hits: list[Hit],
) -> dict[str, Any]:
    """`search --json`'s object: what was searched and how, and every hit with its report and matching sentence."""
    from assistant.excerpt import matching_excerpt, searched_text
    from assistant.text import shorten

    return {
        "query": shorten(query, 1001),
        "searched_as": shorten(searched_as, 2001),
        "field": field,
        "method": method,
        "encoder": encoder,
        "reranker": stage.name if stage else None,
        "reranker_weight": stage.weight if stage else None,
        "truncated": truncated,
        "hits": [
            {
                "rank": h.rank,
                "score": h.score,
                "contradicts": h.contradicts,
                "partly_contradicts": h.partly_contradicts,
                "matching_sentence": asdict(
                    matching_excerpt(
                        searched_text(h.field, h.report.findings, h.report.impression, h.report.full_text), query
                    )
                ),
                **asdict(h.report),
                "date": h.report.meta.get("date", ""),
                "identical": [asdict(other) for other in h.identical],
            }
            for h in hits
        ],
    }


#: The table's columns and their styles; "contradicts" goes in at CONTRADICTS when a hit is marked.
COLUMNS = [
    ("#", ""),
    ("match", ""),
    ("score", "dim"),
    ("report", "cyan"),
    ("source, modality", ""),
    ("study date, status", ""),
    ("matching sentence", ""),
    ("impression", "bold"),
]
CONTRADICTS = 3


def _print_table(hits: list[Hit], query: str, title: str, err: Console, index_flag: str) -> None:
    """The hits as a table on stdout, each with its strength word and the sentence that matched; then the command
    that shows a whole report (on stderr, with `index_flag`) and the notes on the contradiction marks."""
    from rich.console import Console
    from rich.table import Table

    from assistant.commands.output import literal, print_note
    from assistant.readable import strengths

    marks, notes = contradiction_marks([(h.contradicts, h.partly_contradicts) for h in hits])
    columns = list(COLUMNS)
    if marks:  # the column only when there is something to mark
        columns.insert(CONTRADICTS, ("contradicts", "bold red"))
    table = Table(title=literal(title), show_lines=True)
    for column, style in columns:
        table.add_column(column, style=style, overflow="fold")
    # Not a terminal (piped, `make demo` logs): rich would assume 80 columns and fold every cell.
    out = Console(width=shutil.get_terminal_size(fallback=(150, 40)).columns)
    for n, (h, strength) in enumerate(zip(hits, strengths([h.score for h in hits]), strict=True)):
        cells = _row(h, strength, query, out)
        if marks:
            cells.insert(CONTRADICTS, marks[n])
        table.add_row(*cells)
    out.print(table)
    err.print(literal("whole report: assistant show ID" + index_flag), style="dim")
    for note in notes:
        print_note(out, note)


def _row(h: Hit, strength: str, query: str, out: Console) -> list[Any]:
    """A hit's cells: rank, strength, score, id (and its identical reports), where from, when, the matching
    sentence with the query's words marked, the impression."""
    from assistant.commands.output import literal, marked
    from assistant.excerpt import matching_excerpt, searched_text
    from assistant.readable import modality_word
    from assistant.text import shorten

    r = h.report
    excerpt = matching_excerpt(searched_text(h.field, r.findings, r.impression, r.full_text), query)
    return [
        str(h.rank),
        strength.removesuffix(" match"),
        f"{h.score:.3f}",
        literal(r.id + identical_note(h)),
        literal(f"{r.source}, {modality_word(r.modality) or '-'}"),
        literal(f"{r.meta.get('date') or '-'}, {r.status or '-'}"),
        marked(excerpt, out),
        literal(shorten(r.impression, 200)),
    ]


def by_date(hits: list[Hit], sort: str) -> list[Hit]:
    """The hits in `sort` order: relevance (as ranked) or date (newest study first, undated last; ranks kept)."""
    if sort not in ("relevance", "date"):
        raise ValueError(f"--sort {sort!r}: choose relevance or date")
    if sort == "relevance":
        return hits
    return sorted(hits, key=lambda h: h.report.meta.get("date") or "", reverse=True)


#: Identical reports a table cell names before "...": the JSON names every one.
NAMED = 3


def identical_note(hit: Hit) -> str:
    """ "and N identical reports (ID, ID, ...)" under a hit's id, or nothing."""
    if not hit.identical:
        return ""
    named = ", ".join(other.id for other in hit.identical[:NAMED]) + (", ..." if len(hit.identical) > NAMED else "")
    plural = "s" if len(hit.identical) > 1 else ""
    return f"\nand {len(hit.identical)} identical report{plural} ({named})"
