"""`assistant update`: add today's reports to an index, replace corrected ones, remove some, without a rebuild.

Reports are read as the studies of the index's site (`assistant index --source`), whatever the files are called.
Reports whose id the index holds are new versions of those studies: they replace the indexed ones (kept in the
index's history, `assistant show --history`) if their text or metadata changed, unless older (a preliminary after
the final), and are skipped (and counted) if not; `--remove` names ids (or bare accessions, unique in the index) to
delete; `--retrain` trains each field's IVF-PQ quantizer anew on the vectors
the index holds (no report is encoded again), as the drift notice of an update advises; `--retokenize` tokenizes
the BM25 side anew under this program's negation rules, as search advises for an index built by an older one;
`--relink` links every report's conclusion anew to the diagnosis vocabulary (the concepts answers add up and
`search --diagnosis` filters by), as `assistant info` advises for an index linked by another vocabulary or built
before concepts were stored (any update of such an index does it too).
The exclusions, rejects log and counts are `assistant index`'s.
The new version is swapped in whole (retriever/index/update.py), so a chat searching the index keeps working.
`--ray ADDRESS` encodes the new and changed reports on a Ray cluster with the index's encoder (ray_option.py).

Exit codes: 0 updated (or nothing to change), 1 encoder unavailable or the index could not be written, 2 bad input
(no index there, another encoder, nothing to do, an unreadable corpus or ids file, another build or update of
the folder running), 3 the --ray cluster cannot encode (Ray not installed, unreachable, a node without the encoder).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from assistant.settings import Settings
    from retriever.encoders.encoder import Encoder
    from retriever.index.update import UpdateSummary
    from retriever.reports.ingest import Exclusions, IngestResult
    from retriever.reports.sources import ColumnMap

from assistant.commands.ray_option import RayOption
from assistant.commands.shared import (
    EXIT_BAD_INPUT,
    BatchSizeOption,
    ColumnMapOption,
    KeepDuplicateFindingsOption,
    KeepIncompleteOption,
    MaxRejectedOption,
    RejectsOption,
)

NOTHING_TO_DO = (
    "nothing to do: give report files to add or replace, --remove IDS_FILE, --retrain, --retokenize or --relink"
)
CorpusArgument = Annotated[
    list[str] | None, typer.Argument(help="Report files or folders (CSV, JSONL, .txt) to add or replace.")
]
IndexOption = Annotated[Path | None, typer.Option(help="Index folder to update (default: the default index).")]
RemoveOption = Annotated[
    Path | None, typer.Option(help="File of report ids to remove, one per line (# comments allowed).")
]
EncoderOption = Annotated[
    str | None, typer.Option(help="Encoder to check against the index's (default: the one that built it).")
]
RetrainOption = Annotated[
    bool,
    typer.Option(
        "--retrain",
        help="Train each field's vector index anew on the vectors it holds (after a drift notice, or when an "
        "exact index grew past the IVF-PQ threshold); nothing is encoded again.",
    ),
]
RetokenizeOption = Annotated[
    bool,
    typer.Option(
        "--retokenize",
        help="Tokenize the BM25 side anew under this program's negation rules (search says when an index needs "
        "it; any update of such an index does it too); nothing is encoded again.",
    ),
]
RelinkOption = Annotated[
    bool,
    typer.Option(
        "--relink",
        help="Link every report's conclusion anew to the diagnosis vocabulary (`assistant info` says when an index "
        "needs it; any update of such an index does it too); nothing is encoded again.",
    ),
]


def update(
    corpus: CorpusArgument = None,
    index: IndexOption = None,
    remove: RemoveOption = None,
    encoder: EncoderOption = None,
    column_map: ColumnMapOption = None,
    max_rejected: MaxRejectedOption = 0.9,
    keep_incomplete: KeepIncompleteOption = False,
    keep_duplicate_findings: KeepDuplicateFindingsOption = True,
    rejects: RejectsOption = None,
    batch_size: BatchSizeOption = 32,
    retrain: RetrainOption = False,
    retokenize: RetokenizeOption = False,
    relink: RelinkOption = False,
    ray: RayOption = None,
) -> None:
    """Add, replace or remove reports in an existing index; counts of each are printed."""
    from rich.console import Console

    from assistant.commands.ingest_summary import exclusions
    from assistant.commands.output import print_error
    from assistant.commands.shared import checked_corpus, read_settings
    from retriever.index.output_paths import named_path
    from retriever.index.update import update_index
    from retriever.reports.ingest import IngestResult

    console = Console(stderr=True)
    settings = read_settings(console)
    corpus = corpus or []
    if not corpus and remove is None and not retrain and not retokenize and not relink:
        print_error(console, NOTHING_TO_DO)
        raise typer.Exit(EXIT_BAD_INPUT)
    mapping = checked_corpus(console, corpus, column_map)
    target = named_path(index or settings.paths.default_index)
    rejects = named_path(rejects) if rejects else None
    if column_map is None:  # the next day's export is read as the index's own was
        mapping = _built_with(target, mapping)
    removals = _removals(console, settings, corpus, remove, target, rejects)
    rules = exclusions(keep_incomplete, keep_duplicate_findings)
    result = _read_corpus(console, corpus, rules, mapping, target, max_rejected, rejects) if corpus else IngestResult()
    with (
        _failures_reported(console, target),  # entered first: it reports the cluster's failures too
        _on_cluster(console, ray if result.reports else None, target, encoder) as remote,
    ):
        summary = update_index(
            target,
            result.reports,
            removals,
            remote or encoder,
            exclusions=rules,
            batch_size=batch_size,
            progress=True,
            device=settings.encoder.device,
            retrain=retrain,
            retokenize=retokenize,
            relink=relink,
            history=result.history,
        )
    _print_summary(console, target, summary, result, rejects, read=bool(corpus))


def _removals(
    console: Console, settings: Settings, corpus: list[str], remove: Path | None, target: Path, rejects: Path | None
) -> list[str]:
    """The report ids the lines of `--remove` name (`_named_ids`), read once the outputs are known to be safe
    (--rejects writes over no input, the ids file being one too: retriever/index/output_paths.py); exit 2 with the
    reason otherwise."""
    from assistant.commands.output import print_error
    from retriever.index.output_paths import UnsafeOutput, check_outputs
    from retriever.reports.sources import DEMO_NAMES
    from retriever.reports.sources.files import UnreadableFile

    try:
        removals = _read_ids(remove) if remove else []
        inputs = [Path(s) for s in corpus if s not in DEMO_NAMES] + ([remove] if remove else [])
        inputs += settings.search.input_files()
        check_outputs(inputs, target, rejects)  # the ids file is an input too: --rejects never writes over it
    except (OSError, UnicodeDecodeError, UnreadableFile, UnsafeOutput) as exc:
        print_error(console, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    return _named_ids(console, target, removals)


def _read_corpus(
    console: Console,
    corpus: list[str],
    rules: Exclusions,
    mapping: ColumnMap,
    target: Path,
    max_rejected: float,
    rejects: Path | None,
) -> IngestResult:
    """The reports of `corpus`, read as studies of the index's site (or of the sources it holds, for an index built
    before sites). A corpus mostly rejected is refused (exit 2) before the index is touched, with the counts so far
    and the rejects log the refusal points to."""
    from assistant.commands.ingest_summary import (
        mostly_rejected,
        print_ingestion,
        refuse_if_mostly_rejected,
        write_rejects,
    )
    from retriever.reports.ingest import ingest

    with console.status("reading reports"):
        site = _site(target)
        result = ingest(corpus, rules, mapping, None if site else _held_sources(target), site or None)
    if mostly_rejected(result, max_rejected):
        print_ingestion(console, result)
        if rejects:
            write_rejects(console, rejects, result.rejections)
        refuse_if_mostly_rejected(console, result, max_rejected)
    return result


@contextmanager
def _failures_reported(console: Console, target: Path) -> Iterator[None]:
    """An update's failure as its message and the exit code the module docstring gives it: 2 for no usable index
    or another writer, 1 for an encoder that is not installed or an index that could not be written."""
    from assistant.commands.output import print_error
    from models.resolve import ModelNotAvailable
    from retriever.index.errors import IndexLoadError
    from retriever.index.swap import IndexBusy

    try:
        yield
    except (IndexLoadError, IndexBusy) as exc:
        print_error(console, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    except ModelNotAvailable as exc:
        print_error(console, exc)
        raise typer.Exit(1) from exc
    except (OSError, sqlite3.Error) as exc:  # a full disk: the previous index is kept (index_swap.replacing)
        print_error(console, f"could not write the index to {target}: {exc}; the previous index is unchanged")
        raise typer.Exit(1) from exc


def _print_summary(
    console: Console, target: Path, summary: UpdateSummary, result: IngestResult, rejects: Path | None, *, read: bool
) -> None:
    """What the update did: the counts of the reports read (`result`, printed when a corpus was `read`) with those
    the index refused, the rejects log, ids asked to be removed that the index does not hold, its notices, then the
    counts."""
    from assistant.commands.ingest_summary import print_ingestion, write_rejects
    from assistant.commands.output import literal

    result.reject_later(summary.rejections)  # found against the index: counted in the same summary
    if read:
        print_ingestion(console, result)
    for rejection in summary.rejections:
        console.print(literal(f"rejected {rejection.ref}: {rejection.reason} ({rejection.detail})"))
    if rejects:
        write_rejects(console, rejects, result.rejections)
    if summary.not_found:
        shown = ", ".join(summary.not_found[:5]) + (" ..." if len(summary.not_found) > 5 else "")
        console.print(literal(f"not in the index, so not removed: {len(summary.not_found)} ({shown})"))
    for notice in summary.notices:
        console.print(literal(notice, style="yellow"))
    counts = (
        f"added {len(summary.added)}, replaced {len(summary.replaced)}, unchanged {len(summary.unchanged)} "
        f"(skipped), removed {len(summary.removed)}"
    )
    if summary.older:
        counts += f"; {len(summary.older)} older than the indexed version (kept in its history)"
    if summary.retrained:
        counts += f"; retrained the {', '.join(summary.retrained)} vector indexes"
    if summary.retokenized:
        counts += "; BM25 tokenized anew under the current negation rules"
    if summary.relinked:
        counts += "; every report's diagnoses linked anew by the current vocabulary"
    verdict = f"updated {target}" if summary.changed() else f"{target} unchanged"
    console.print(literal(f"{verdict}: {counts}", style="green"))


def _on_cluster(
    console: Console, address: str | None, target: Path, encoder: str | None
) -> AbstractContextManager[Encoder | None]:
    """The index's encoder (or `encoder`, which update_index then checks against it) on the --ray cluster, with the
    index's backend and sequence limit; nothing without --ray or without reports to encode."""
    from assistant.commands.output import print_error
    from assistant.commands.ray_option import encoder_on_cluster
    from retriever.index.manifest import Manifest

    if address is None:
        return nullcontext()
    try:
        built = Manifest.read(target).encoder
    except ValueError as exc:
        print_error(console, f"no index to update at {target} ({exc}): build one with `assistant index`")
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    return encoder_on_cluster(console, address, encoder or built.name, built.backend, built.max_seq_length)


def _built_with(target: Path, fallback: ColumnMap) -> ColumnMap:
    """The column mapping the index at `target` was built with (its manifest), `fallback` when it has none."""
    from retriever.index.manifest import Manifest

    try:
        recorded = Manifest.read(target).column_map
    except ValueError:  # no index yet: update_index says so
        return fallback
    return type(fallback)(recorded) if recorded else fallback


def _site(target: Path) -> str:
    """The site the index at `target` was built for ("" for an index built before sites, or none there yet)."""
    from retriever.index.manifest import Manifest

    try:
        return Manifest.read(target).site
    except ValueError:  # no index yet: update_index says so
        return ""


def _named_ids(console: Console, target: Path, names: list[str]) -> list[str]:
    """The report ids `--remove`'s lines name: an id as it is, a bare accession as the one id it is unique to; an
    accession several sites' studies share is not removed (which ones match is printed), nor is an unknown one
    (update reports it as not in the index)."""
    from assistant.commands.output import literal
    from retriever.index.report_index import STORE_FILE
    from retriever.index.store import ReportStore

    if not names:
        return names
    try:
        store = ReportStore(target / STORE_FILE)
    except sqlite3.Error:
        return names  # update_index refuses that index with the reason
    try:
        meant = store.ids_named(names)
    finally:
        store.close()
    ids = []
    for name in names:
        found = meant.get(name, [])
        if len(found) > 1:
            console.print(literal(f"{name} matches {len(found)} reports, not removed: {', '.join(found)}"))
        else:
            ids.append(found[0] if found else name)
    return ids


def _held_sources(target: Path) -> frozenset[str]:
    """The sources the index at `target` holds (none when there is no index yet: update_index says so), so the
    next day's `site.csv` gives the ids of the indexed `site` reports wherever its folder is. An unreadable store
    holds none here: update_index refuses that index with the reason."""

    from retriever.index.report_index import STORE_FILE
    from retriever.index.store import ReportStore

    try:
        store = ReportStore(target / STORE_FILE)
    except sqlite3.Error:
        return frozenset()
    try:
        return frozenset(store.values("source"))
    finally:
        store.close()


def _read_ids(path: Path) -> list[str]:
    """Report ids from a file: one per line, surrounding space, blank lines and # comments ignored; read as report
    files are (a byte order mark is not part of the first id; UTF-16, as Windows tools write lists, is read)."""
    from retriever.reports.sources.files import UnreadableFile, read_text

    try:
        lines = read_text(path).text.splitlines()
    except UnreadableFile as exc:
        raise UnreadableFile(f"--remove {path}: {exc}") from exc
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
