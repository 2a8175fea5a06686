"""`assistant average`: one encoder from the weight average of several fine-tuned from the same base."""

from __future__ import annotations

from typing import Annotated

import typer

from assistant.commands.shared import OverwriteOption, read_settings


def average(
    encoders: Annotated[
        list[str],
        typer.Argument(
            help="Two or more encoders trained with `assistant train` from "
            "one base (names in the models directory, or folders)."
        ),
    ],
    out: Annotated[str, typer.Option(help="Name of the averaged model (saved in the models directory).")],
    overwrite: OverwriteOption = False,
) -> None:
    """Average the weights of encoders fine-tuned from one base (a model soup): runs of one recipe with different
    --seed give a model that behaves like the recipe, not like one seed. Use the result with
    `assistant index CORPUS --encoder NAME`."""
    from rich.console import Console

    from assistant.commands.output import literal, print_error
    from models.resolve import ModelNotAvailable
    from retriever.training.average import average_encoders
    from retriever.training.data import TrainingError

    console = Console(stderr=True)
    settings = read_settings(console)
    try:
        result = average_encoders(encoders, out, models_root=settings.paths.models, overwrite=overwrite)
    except (TrainingError, ModelNotAvailable) as exc:
        print_error(console, exc)
        raise typer.Exit(1) from exc
    console.print(literal(f"averaged {', '.join(encoders)} -> {result.path}", style="green"))
    console.print(literal(f"index with it: assistant index CORPUS --encoder {out}"))
