"""`assistant index --shard I/N` and `assistant index --merge-shards`: encoding a corpus on several workers
(retriever/index/shards.py) and merging their shard folders into one index (retriever/index/shard_merge.py).

    assistant index reports/ --shard 0/2 --out shards/0      # on worker 0 (worker 1: --shard 1/2 --out shards/1)
    assistant index --merge-shards shards/0 shards/1 --out INDEX --rejects rejects.jsonl

Both print `assistant index`'s counts (records in / indexed / rejected, of the whole corpus) and write the same
rejects log. Exit codes are `assistant index`'s: 0 done, 1 nothing to index or encoder unavailable, 2 bad input
(a malformed --shard, an output over an input or over a folder that is not a shard or an index, shards that cannot
be merged, another build of the folder running).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from assistant.commands.shared import EXIT_BAD_INPUT

if TYPE_CHECKING:
    from rich.console import Console

    from assistant.settings import Settings
    from retriever.index.manifest import Manifest
    from retriever.reports.ingest import Exclusions
    from retriever.reports.sources import ColumnMap


def encode_shard(
    console: Console,
    settings: Settings,
    corpus: list[str],
    mapping: ColumnMap,
    spec: str,
    folder: Path,
    encoder: str,
    rejects: Path | None,
    batch_size: int,
    overwrite: bool,
    rules: Exclusions,
    site: str,
) -> None:
    """Read the whole corpus as `site`'s, print its counts, encode this shard's reports into `folder` (resumable)."""
    from assistant.commands.ingest_summary import print_ingestion, write_rejects
    from assistant.commands.output import literal, print_error
    from assistant.commands.shared import load_index_encoder
    from retriever.index.output_paths import UnsafeOutput, check_outputs
    from retriever.index.shards import Shard, ShardError, prepare_folder, read_shard
    from retriever.index.shards import encode_shard as encode
    from retriever.index.swap import IndexBusy, one_writer
    from retriever.reports.sources import DEMO_NAMES

    try:
        shard = Shard.parse(spec)
        check_outputs([Path(s) for s in corpus if s not in DEMO_NAMES], folder, rejects, overwrite=True)
        prepare_folder(folder, overwrite=overwrite)
    except (ShardError, UnsafeOutput) as exc:
        print_error(console, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    try:
        with one_writer(folder):
            with console.status("reading reports"):
                read = read_shard(corpus, folder, shard, rules, mapping, site)
            print_ingestion(console, read.result)
            if rejects:
                write_rejects(console, rejects, read.result.rejections)
            if not read.result.kept:
                print_error(console, "nothing to index: every record was rejected (see the reasons above)")
                raise typer.Exit(1)
            model = load_index_encoder(console, settings, encoder)
            encode(folder, shard, read, model, batch_size=batch_size, progress=True)
    except IndexBusy as exc:
        print_error(console, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    console.print(
        literal(
            f"encoded shard {shard}: {read.reports} of {read.result.kept} reports -> {folder}; when "
            f"every shard is done: assistant index --merge-shards SHARD_FOLDERS... --out INDEX",
            style="green",
        )
    )


def merge(console: Console, folders: list[str], target: Path, rejects: Path | None, overwrite: bool) -> Manifest:
    """Check the shard folders, print the corpus's counts, merge them into the index `target`; its manifest."""
    from assistant.commands.ingest_summary import print_ingestion, write_rejects
    from assistant.commands.output import print_error
    from retriever.index.output_paths import UnsafeOutput, check_outputs
    from retriever.index.shard_merge import merge_shards, open_shards
    from retriever.index.shards import ShardError
    from retriever.index.swap import IndexBusy, one_writer

    paths = [Path(folder) for folder in folders]
    try:
        check_outputs(paths, target, rejects, overwrite=overwrite)
        with one_writer(target):
            shards = open_shards(paths)
            print_ingestion(console, shards.result)
            if rejects:
                write_rejects(console, rejects, shards.result.rejections)
            return merge_shards(shards, target, overwrite=overwrite, progress=True)
    except (ShardError, UnsafeOutput, IndexBusy) as exc:
        print_error(console, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    except OSError as exc:  # a full disk or a read-only folder: the previous index is kept (index_swap.replacing)
        print_error(console, f"could not write the index to {target}: {exc}; the previous index, if any, is unchanged")
        raise typer.Exit(1) from exc
