"""The `assistant` console script: one sub-command per module in `assistant/commands/`.

Imports stay inside the command modules' functions so `assistant --help` does not load torch or FAISS.
"""

from __future__ import annotations

import typer

from assistant.commands import ask_cmd, bench_cmd, chat_cmd, index_cmd, search_cmd, train_cmd

app = typer.Typer(
    name="assistant",
    help="RadSearch Assistant: search radiology reports and get retrieval-grounded diagnoses.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("index")(index_cmd.index)
app.command("search")(search_cmd.search)
app.command("train")(train_cmd.train)
app.command("chat")(chat_cmd.chat)
app.command("ask")(ask_cmd.ask)
app.command("bench")(bench_cmd.bench)


if __name__ == "__main__":
    app()
