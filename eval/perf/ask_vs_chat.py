"""`assistant ask` beside the chat: time to the first answer text for the same questions, quiet and under load.

    python -m eval.perf.ask_vs_chat --threads 2                 # 4 questions, quiet then with 2 busy processes
    python -m eval.perf.ask_vs_chat --threads 2 --queries 2 --load 2 --model qwen1.5b

Issue 41 saw `ask` far slower than the chat on a busy machine. Here they answer the same held-out findings through
the model (`--prompt diagnosis_evidence`, the chat's *Answer (LLM + reports)*), from the same index, with the same
thread count, taking turns at going first. Four sides:
- `ask`: a new `assistant ask` process per question with `assistant serve` running (assistant/warm/): the question
  is handed to the server, which has the index, encoder and model loaded;
- `ask_alone`: `assistant ask --no-server`, a new process that loads them itself (start-up, model load, the saved
  system-prompt state, then the answer streamed to the terminal);
- `chat`: a running chat (its `ChatService` in this process, the model loaded once beforehand, as `assistant chat`
  warms it up): the handler alone, without the page and the web server in between;
- `chat_browser`: the chat as a resident uses it, `assistant chat` in its own process and the question typed into
  the page in Chromium and sent with Enter, timed by the page's own clock (eval/perf/chat_browser.py); skipped, saying
  why, without Playwright or Chromium.
Time to first answer text: until the first characters of the diagnosis are shown (`ask`: "diagnosis: " on stdout; the
chat: "Most likely diagnosis" in the message). `ask` is timed from its process start, as a resident's command is,
so its start-up counts: since 2026-11-27 (night) the `assistant` script hands the arguments to the server before it
loads the CLI (assistant/commands/ask_warm.py). The load is `--load` processes spinning on a core each, at the same
priority.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from eval.perf import results
from eval.perf.answer import EMBEDDED_MODEL
from eval.perf.data import held_out_findings

PROMPT = "diagnosis_evidence"
SPIN = "while True:\n    pass\n"


SIDES = ("ask", "ask_alone", "chat", "chat_browser")


def ask_run(query: str, index: Path, env: dict[str, str], *flags: str) -> dict[str, float]:
    """One `assistant ask` process: seconds to the reports on stdout, to the first diagnosis text and to its exit."""
    command = [sys.executable, "-m", "assistant", "ask", query, "--index", str(index), "--prompt", PROMPT, *flags]
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    seen, reports, first = b"", None, None
    while chunk := os.read(process.stdout.fileno(), 4096):
        seen += chunk
        if reports is None and b"similar reports" in seen:
            reports = time.perf_counter() - start
        if first is None and b"diagnosis: " in seen:
            first = time.perf_counter() - start
    process.wait()
    total = time.perf_counter() - start
    return {
        "reports_s": reports if reports is not None else total,
        "ttft_s": first if first is not None else total,
        "total_s": total,
        "exit": float(process.returncode),
    }


def chat_run(service: Any, query: str, index: Path) -> dict[str, float]:
    """One chat answer through the chat's own request handler: seconds to the report cards, to the first diagnosis
    text in the message and to the finished answer."""
    from assistant.chat.service import MODE_ANSWER, Request

    start = time.perf_counter()
    reports, first = None, None
    for chat, cards, *_ in service.respond(query, [], [], Request(mode=MODE_ANSWER, index=str(index))):
        if reports is None and isinstance(cards, str) and '<article class="rs-card' in cards:
            reports = time.perf_counter() - start
        if first is None and chat and "Most likely diagnosis" in chat[-1]["content"]:
            first = time.perf_counter() - start
    total = time.perf_counter() - start
    return {
        "reports_s": reports if reports is not None else total,
        "ttft_s": first if first is not None else total,
        "total_s": total,
    }


def start_server(index: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """`assistant serve` for the same index, prompt and settings, once it answers."""
    from assistant.settings import Settings
    from assistant.warm.address import socket_path
    from assistant.warm.client import answers

    command = [sys.executable, "-m", "assistant.cli", "serve", "--index", str(index), "--prompt", PROMPT]
    server = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    path = socket_path(Settings.from_env(env).paths, env)
    while not answers(path):
        if server.poll() is not None:
            raise RuntimeError(f"assistant serve exited {server.returncode}")
        time.sleep(0.2)
    return server


def measure(queries: list[str], index: Path, model: str, threads: int, load: int) -> dict[str, Any]:
    """Every side per question, taking turns at going first; quiet, then under `load` spinning processes."""
    from assistant.chat.service import MODE_ANSWER, ChatConfig, ChatService
    from assistant.settings import Settings
    from eval.perf.chat_browser import available, browser_run, chat_page

    missing = available()
    sides = SIDES if missing is None else tuple(side for side in SIDES if side != "chat_browser")
    if missing is not None:
        print(f"chat_browser not measured: {missing}")

    env = {k: v for k, v in os.environ.items() if not k.startswith("RADSEARCH_LLM_")}
    env |= {"RADSEARCH_LLM_GGUF": model, "RADSEARCH_LLM_THREADS": str(threads)}
    settings = Settings.from_env(env)
    service = ChatService(ChatConfig(settings, indexes=(index,)))
    service.warm_up()
    server = start_server(index, env)  # warmed up by its own start-up question
    warm_up, *queries = queries  # a question of its own: a measured one asked before would be read from the cache
    chat_run(service, warm_up, index)  # the running server has read the system prompt once
    ask_run(warm_up, index, env, "--no-server")  # the saved system-prompt state exists, as after any earlier ask
    conditions: dict[str, Any] = {}
    try:
        with chat_page(index, env, MODE_ANSWER) if missing is None else nullcontext() as page:
            if page is not None:
                browser_run(page, warm_up)
            run_side = {
                "ask": lambda query: ask_run(query, index, env),
                "ask_alone": lambda query: ask_run(query, index, env, "--no-server"),
                "chat": lambda query: chat_run(service, query, index),
                "chat_browser": lambda query: browser_run(page, query),
            }
            for condition, spinners in (("quiet", 0), (f"load_{load}", load)):
                conditions[condition] = _condition(queries, sides, run_side, condition, spinners)
    finally:
        server.terminate()
        server.wait()
    return {"prompt": PROMPT, "model": model, "load_processes": load, "sides": list(sides), "conditions": conditions}


def _condition(
    queries: list[str], sides: tuple[str, ...], run_side: dict[str, Any], condition: str, spinners: int
) -> dict[str, Any]:
    """Every side per question under `spinners` busy processes, taking turns at going first; medians and every run
    (the browser's clock gives no time to the report cards)."""
    busy = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(spinners)]
    try:
        runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
        for n, query in enumerate(queries):
            turn = n % len(sides)
            for side in sides[turn:] + sides[:turn]:
                runs[side].append({k: round(v, 3) for k, v in run_side[side](query).items()})
                print(condition, side, runs[side][-1], flush=True)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    return {
        **{
            f"{side}_{key}": round(statistics.median(r[key] for r in rows), 3)
            for side, rows in runs.items()
            for key in ("reports_s", "ttft_s", "total_s")
            if all(key in r for r in rows)
        },
        "runs": runs,
    }


def main(argv: list[str] | None = None) -> int:
    parser = results.parser(__doc__, threads_help="llama.cpp threads for both sides (RADSEARCH_LLM_THREADS)")
    parser.add_argument("--queries", type=int, default=4, help="held-out findings, each asked once per side and load")
    parser.add_argument("--model", default=EMBEDDED_MODEL, help="embedded GGUF: qwen1.5b, qwen0.5b or smollm2")
    parser.add_argument("--load", type=int, default=2, help="busy processes for the loaded condition")
    parser.add_argument("--index", type=Path, help="index folder (default: the default index, as ask uses)")
    args = results.parse_args(parser, argv)
    queries = held_out_findings(1 + (2 if args.quick else args.queries))  # the first warms both sides up
    if queries is None:
        return 0
    from assistant.settings import Settings

    index = args.index or Settings.from_env(os.environ).paths.default_index
    if not (index / "manifest.json").is_file():
        print(f"ask_vs_chat: no index at {index} (make demo builds one): not measured")
        return 0
    measured = measure(queries, index, args.model, args.threads, args.load)
    data = {"queries": len(queries) - 1, "index": str(index)} | measured
    results.store_run("ask_vs_chat", data, args, "eval.perf.ask_vs_chat", argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
