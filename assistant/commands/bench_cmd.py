"""`assistant bench`: the diagnosis benchmark (eval.diagnosis.benchmark) from the console script.

The benchmarks are not part of the installed product (issue 18), so this command imports nothing from them: it runs
`python -m eval.diagnosis.benchmark` from the checkout the running `assistant` package was loaded from, with the arguments as
given (`--help` too), so the options are declared once, in eval.diagnosis.benchmark. Predictions are cached, so rerunning after
an interruption only asks for what is missing and then regrades. From an installed wheel (no checkout) it says how
to run the benchmark and exits 2.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import typer

#: Every argument, `--help` included, is eval.diagnosis.benchmark's to parse.
CONTEXT_SETTINGS = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}
EXIT_NO_CHECKOUT = 2


def bench(ctx: typer.Context) -> None:
    """Benchmark diagnosis accuracy: cases x retrieval conditions x one LLM, with CIs and McNemar tests.

    Needs a checkout of the project; `assistant bench --help` lists the options (eval.diagnosis.benchmark's)."""
    root = checkout()
    if root is None:
        typer.echo(
            "assistant bench: the benchmarks are not installed with the product. In a checkout of the project run "
            "`python -m eval.diagnosis.benchmark ARGS` from its root (or install the checkout: pip install -e '.[eval]').",
            err=True,
        )
        raise typer.Exit(EXIT_NO_CHECKOUT)
    pythonpath = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    command = [sys.executable, "-m", "eval.diagnosis.benchmark", *eval_arguments(ctx.args)]
    code = run_forwarding_output(command, {**os.environ, "PYTHONPATH": pythonpath})
    if code:
        raise typer.Exit(code)


def checkout() -> Path | None:
    """The folder holding the running `assistant` package if it is a checkout with the benchmarks (a clone or an
    editable install), else None (an installed wheel: site-packages has no eval/)."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "eval" / "diagnosis" / "benchmark.py").is_file() else None


def eval_arguments(args: list[str]) -> list[str]:
    """`args` with the spellings `assistant bench` has always accepted (typer's) in eval.diagnosis.benchmark's (argparse's):
    `--no-icd` -> `--icd off`, a bare `--icd` -> `--icd on`, `--k N` -> `-k N`."""
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--no-icd":
            out += ["--icd", "off"]
        elif arg == "--icd" and (i + 1 == len(args) or args[i + 1] not in ("on", "off")):
            out += ["--icd", "on"]
        elif arg == "--k" or arg.startswith("--k="):
            out.append("-k" + arg.removeprefix("--k"))
        else:
            out.append(arg)
    return out


def run_forwarding_output(command: list[str], env: dict[str, str]) -> int:
    """Run `command` and return its exit code. Its output goes to this process's stdout and stderr: written there
    directly when they are files (a terminal keeps its line-by-line progress), copied through when they are not
    (captured in memory, as by typer's test runner)."""
    streams = (sys.stdout, sys.stderr)
    for stream in streams:
        stream.flush()
    targets = [_file_descriptor(stream) for stream in streams]
    with subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE if targets[0] is None else targets[0],
        stderr=subprocess.PIPE if targets[1] is None else targets[1],
        text=True,
    ) as process:
        copiers = [
            threading.Thread(target=_copy, args=(pipe, stream), daemon=True)
            for pipe, stream in zip((process.stdout, process.stderr), streams, strict=True)
            if pipe is not None
        ]
        for copier in copiers:
            copier.start()
        for copier in copiers:
            copier.join()
        return process.wait()


def _file_descriptor(stream: IO[str]) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, io.UnsupportedOperation):
        return None


def _copy(pipe: IO[str], stream: IO[str]) -> None:
    for line in pipe:
        stream.write(line)
        stream.flush()
