"""The `assistant` console script: one sub-command per module in `assistant/commands/`.

Imports stay inside the command modules' functions so `assistant --help` does not load torch or FAISS. Before any
command runs, the libraries it may load are put in offline, no-telemetry mode (models/offline.py).
"""

from __future__ import annotations

import typer

from assistant.commands import (
    ask_cmd,
    average_cmd,
    bench_cmd,
    chat_cmd,
    feedback_cmd,
    index_cmd,
    info_cmd,
    search_cmd,
    serve_cmd,
    show_cmd,
    train_cmd,
    train_reranker_cmd,
    update_cmd,
)
from models.offline import lock_down

app = typer.Typer(
    name="assistant",
    help="RadSearch Assistant: search radiology reports and get retrieval-grounded diagnoses.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _offline() -> None:
    """Runs before every command: no library may phone home (Gradio, ONNX Runtime and the Hugging Face libraries
    read their switches when first imported, which happens inside the commands)."""
    lock_down()


app.command("index")(index_cmd.index)
app.command("update")(update_cmd.update)
app.command("search")(search_cmd.search)
app.command("show")(show_cmd.show)
app.command("train")(train_cmd.train)
app.command("train-reranker")(train_reranker_cmd.train_reranker)
app.command("average")(average_cmd.average)
app.command("chat")(chat_cmd.chat)
app.command("ask")(ask_cmd.ask)
app.command("serve")(serve_cmd.serve)
app.command("bench", context_settings=bench_cmd.CONTEXT_SETTINGS)(bench_cmd.bench)
app.command("info")(info_cmd.info)
app.add_typer(feedback_cmd.app, name="feedback")


if __name__ == "__main__":
    app()
