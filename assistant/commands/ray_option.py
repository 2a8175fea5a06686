"""`--ray ADDRESS` of `assistant index` and `assistant update`: encode on a Ray cluster (retriever/encoders/cluster/).

The cluster is reached and every worker has loaded the encoder before the command writes anything; a cluster that
cannot encode (Ray not installed, unreachable, no free CPU or GPU, a node without the encoder) is an error message
and exit EXIT_CLUSTER, never a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from retriever.encoders.encoder import Encoder

#: The Ray cluster cannot encode for this command (see the module docstring).
EXIT_CLUSTER = 3

RayOption = Annotated[
    str | None,
    typer.Option(
        "--ray",
        metavar="ADDRESS",
        help="Encode on a Ray cluster: local (started for this command), auto (the one `ray start --head` made "
        "here) or HOST:PORT of its head node. Needs pip install '.[ray]'.",
    ),
]


@contextmanager
def encoder_on_cluster(
    console: Console, address: str, ref: str, backend: str, max_seq_length: int | None = None
) -> Iterator[Encoder]:
    """The Encoder `ref` running on the cluster at `address` for the block; exit EXIT_CLUSTER (or 1 when this
    machine lacks the encoder, as without --ray) with the reason printed if it cannot start."""
    from assistant.commands.output import literal, print_error
    from models.resolve import ModelNotAvailable
    from retriever.encoders.cluster.backend import RayBackend, cluster_encoder
    from retriever.encoders.cluster.connection import ClusterError

    with ExitStack() as stack:
        try:
            with console.status(f"starting {ref} encoders on the Ray cluster {address}"):
                encoder = stack.enter_context(
                    cluster_encoder(address, ref, backend=backend, max_seq_length=max_seq_length)
                )
        except ClusterError as exc:
            print_error(console, exc)
            raise typer.Exit(EXIT_CLUSTER) from exc
        except ModelNotAvailable as exc:
            print_error(console, exc)
            raise typer.Exit(1) from exc
        assert isinstance(encoder.engine, RayBackend)
        console.print(
            literal(f"encoding with {encoder.name} ({encoder.backend}) on {encoder.engine.workers} Ray workers")
        )
        yield encoder
