"""`assistant index`: ingest report files, encode them and write an index folder.

Reports are read into a store and encoded a chunk at a time (retriever/index/streaming_build.py): memory stays bounded
for millions of reports, and a build that was killed resumes where it stopped when run again with the same --out.

`--ray ADDRESS` encodes on a Ray cluster, the rest of the build unchanged (assistant/commands/ray_option.py).

`--shard I/N` encodes one shard of the corpus into a shard folder (on another worker or machine) and
`--merge-shards SHARD_FOLDER...` merges them into the index a single process builds (assistant/commands/shard_cmd.py).

Exit codes: 0 indexed, 1 nothing to index or encoder unavailable, 2 bad input (an output that would replace an input
or a folder that is not an index, a bad option value, another build or update of the folder running), 3 the --ray
cluster cannot encode (Ray not installed, unreachable, no free CPU or GPU, a node without the encoder).
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from assistant.commands.ray_option import RayOption
from assistant.commands.shared import (
    EXIT_BAD_INPUT,
    BatchSizeOption,
    ColumnMapOption,
    CorpusArgument,
    KeepDuplicateFindingsOption,
    KeepIncompleteOption,
    MaxRejectedOption,
    RejectsOption,
)
from models.preset import PRESET
from retriever.reports.sources.names import DEFAULT_SITE

if TYPE_CHECKING:
    from rich.console import Console

    from assistant.settings import Settings
    from retriever.encoders.encoder import Encoder
    from retriever.index.manifest import Manifest
    from retriever.reports.ingest import Exclusions
    from retriever.reports.sources import ColumnMap


EncoderOption = Annotated[
    str,
    typer.Option(help="Registry name (radsearch, the shipped default; minilm, mpnet), trained model, path or hub id."),
]
OutOption = Annotated[Path | None, typer.Option(help="Index folder to write (default: the default index).")]
ReplaceOption = Annotated[
    bool, typer.Option(help="Replace --out even if it holds something other than an index (never an input).")
]
ShardOption = Annotated[
    str | None,
    typer.Option(help="Encode only shard I of N (e.g. 0/4) into the shard folder --out, for --merge-shards."),
]
MergeShardsOption = Annotated[
    bool, typer.Option(help="The arguments are shard folders (--shard I/N): merge them into the index --out.")
]
SourceOption = Annotated[
    str,
    typer.Option(
        help="The site these reports come from, set once for the index: a table's study is SITE:ACCESSION "
        "whatever its file is called, so `assistant update` with the next day's export updates the same studies "
        "(a site or institution column names its rows' site instead).",
    ),
]


@dataclass(frozen=True)
class _BuildOptions:
    """What a whole build and a shard's encoding both take from the options: the corpus, the encoder, where
    rejected records go (a named path), the batch size, whether --out may be replaced, the exclusions."""

    corpus: list[str]
    encoder: str
    rejects: Path | None
    batch_size: int
    overwrite: bool
    rules: Exclusions


def index(
    corpus: CorpusArgument,
    encoder: EncoderOption = PRESET.encoder,
    out: OutOption = None,
    column_map: ColumnMapOption = None,
    keep_incomplete: KeepIncompleteOption = False,
    keep_duplicate_findings: KeepDuplicateFindingsOption = True,
    rejects: RejectsOption = None,
    batch_size: BatchSizeOption = 32,
    max_rejected: MaxRejectedOption = 0.9,
    overwrite: ReplaceOption = False,
    shard: ShardOption = None,
    merge_shards: MergeShardsOption = False,
    ray: RayOption = None,
    source: SourceOption = DEFAULT_SITE,
) -> None:
    """Build an index over report files: counts in / indexed / rejected by reason are printed and add up."""
    from rich.console import Console

    from assistant.commands.ingest_summary import exclusions
    from assistant.commands.output import print_error
    from assistant.commands.shared import checked_corpus, read_settings
    from retriever.index.output_paths import named_path
    from retriever.index.swap import IndexBusy, one_writer

    console = Console(stderr=True)
    settings = read_settings(console)
    target = named_path(out or settings.paths.default_index)
    rejects = named_path(rejects) if rejects else None
    if ray is not None and (shard is not None or merge_shards):
        print_error(console, "--ray encodes the whole corpus on the cluster: give it without --shard or --merge-shards")
        raise typer.Exit(EXIT_BAD_INPUT)
    rules = exclusions(keep_incomplete, keep_duplicate_findings)
    options = _BuildOptions(corpus, encoder, rejects, batch_size, overwrite, rules)
    if shard is not None or merge_shards:
        _sharded(console, settings, options, column_map, out, shard, merge_shards, _checked_site(console, source))
        return
    mapping = checked_corpus(console, corpus, column_map)
    site = _checked_site(console, source)
    _check_outputs(console, settings, options, target)  # before reading a single report: a wrong one costs nothing
    try:
        with _on_cluster(console, ray, encoder, settings) as remote, one_writer(target):
            manifest = _build(console, settings, options, mapping, target, max_rejected, remote, site)
    except IndexBusy as exc:
        print_error(console, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    _print_indexed(console, manifest, target)


def _check_outputs(console: Console, settings: Settings, options: _BuildOptions, target: Path) -> None:
    """Exit 2, the reason printed, when writing the index folder `target` or the rejects file could destroy data
    (an input, a folder that is not an index: retriever/index/output_paths.py) or cannot be done."""
    from assistant.commands.output import print_error
    from retriever.index.output_paths import UnsafeOutput, check_outputs
    from retriever.reports.sources import DEMO_NAMES

    inputs = [Path(spec) for spec in options.corpus if spec not in DEMO_NAMES] + settings.search.input_files()
    try:
        check_outputs(inputs, target, options.rejects, overwrite=options.overwrite)
    except UnsafeOutput as exc:
        print_error(console, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc


def _on_cluster(
    console: Console, address: str | None, encoder: str, settings: Settings
) -> AbstractContextManager[Encoder | None]:
    """The encoder on the --ray cluster, started before anything is written; nothing without --ray."""
    from assistant.commands.ray_option import encoder_on_cluster

    if address is None:
        return nullcontext()
    return encoder_on_cluster(console, address, encoder, settings.encoder.backend)


def _sharded(
    console: Console,
    settings: Settings,
    options: _BuildOptions,
    column_map: str | None,
    out: Path | None,
    shard: str | None,
    merge_shards: bool,
    site: str,
) -> None:
    """--shard and --merge-shards (assistant/commands/shard_cmd.py); both need an explicit --out."""
    from assistant.commands import shard_cmd
    from assistant.commands.output import print_error
    from assistant.commands.shared import checked_corpus

    if (shard is not None and merge_shards) or out is None:
        print_error(
            console,
            "--shard I/N encodes one shard into the folder --out, --merge-shards merges shard "
            "folders into the index --out: give one of them, and --out",
        )
        raise typer.Exit(EXIT_BAD_INPUT)
    corpus, rejects, overwrite = options.corpus, options.rejects, options.overwrite
    if shard is not None:
        mapping = checked_corpus(console, corpus, column_map)
        shard_cmd.encode_shard(
            console,
            settings,
            corpus,
            mapping,
            shard,
            out,
            options.encoder,
            rejects,
            options.batch_size,
            overwrite,
            options.rules,
            site,
        )
        return
    _print_indexed(console, shard_cmd.merge(console, corpus, out, rejects, overwrite), out)


def _print_indexed(console: Console, manifest: Manifest, target: Path) -> None:
    from assistant.commands.output import literal

    fields = ", ".join(f"{f}: {n}" for f, n in manifest.fields.items())
    console.print(
        literal(f"indexed {manifest.reports} reports with {manifest.encoder.name} -> {target}", style="green"),
        literal(f" ({fields})"),
    )


def _build(
    console: Console,
    settings: Settings,
    options: _BuildOptions,
    mapping: ColumnMap,
    target: Path,
    max_rejected: float,
    remote: Encoder | None,
    site: str,
) -> Manifest:
    """Read, print the counts, encode and write (retriever/index/streaming_build.py: bounded memory, a killed build resumes
    where it stopped) with `remote` (the --ray cluster's encoder) or `encoder` loaded here; the written manifest, or
    typer.Exit with the error printed."""
    from assistant.commands.ingest_summary import print_ingestion, refuse_if_mostly_rejected, write_rejects
    from assistant.commands.output import literal, print_error
    from assistant.commands.shared import load_index_encoder
    from retriever.index.output_paths import UnsafeOutput
    from retriever.index.streaming_build import encode_and_write, read_reports, work_folder
    from retriever.index.swap import discard

    if work_folder(target).is_dir():
        console.print(literal(f"resuming the build left in {work_folder(target)} (encoded chunks are reused)"))
    try:
        with console.status("reading reports"):
            result = read_reports(options.corpus, target, options.rules, mapping, site or None)
    except (OSError, sqlite3.Error) as exc:  # the reports are read into a store in the build folder
        _write_failed(console, target, exc)
    print_ingestion(console, result)
    if options.rejects:
        write_rejects(console, options.rejects, result.rejections)
    try:
        refuse_if_mostly_rejected(console, result, max_rejected)
    except typer.Exit:
        discard(work_folder(target))
        raise
    if not result.kept:
        discard(work_folder(target))
        print_error(console, "nothing to index: every record was rejected (see the reasons above)")
        raise typer.Exit(1)
    model = remote or load_index_encoder(console, settings, options.encoder)
    try:
        return encode_and_write(
            target,
            model,
            batch_size=options.batch_size,
            progress=True,
            overwrite=options.overwrite,
            column_map=mapping.columns,
            site=site,
        )
    except UnsafeOutput as exc:  # the folder changed while encoding
        print_error(console, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    except (OSError, sqlite3.Error) as exc:  # a full disk: the previous index is kept (index_swap.replacing)
        _write_failed(console, target, exc)


def _checked_site(console: Console, source: str) -> str:
    """`--source` as the site name of report ids; exit 2 for one that could not be named in an id."""
    from assistant.commands.output import print_error

    site = source.strip()
    if not site or ":" in site or not site.isprintable():
        print_error(console, f"--source {source!r}: give a site name without ':' or control characters (e.g. north)")
        raise typer.Exit(EXIT_BAD_INPUT)
    return site


def _write_failed(console: Console, target: Path, exc: Exception) -> NoReturn:
    """A full disk (OSError, or SQLite's "database or disk is full") while writing: exit 1, the previous index
    kept; the build folder is kept too, so the same command resumes once there is room."""
    from assistant.commands.output import print_error
    from retriever.index.streaming_build import work_folder

    print_error(
        console,
        f"could not write the index to {target}: {exc}; the previous index, if any, is unchanged (free some space "
        f"and run the command again to resume, or delete {work_folder(target)})",
    )
    raise typer.Exit(1) from exc
