"""Serving the chat with the project's safe defaults: a bounded queue, no share link, analytics, run history,
monitoring endpoint or MCP server (report text stays on the host), a sign-in rate limit and a limit on open streams
per address."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from assistant.chat.no_uploads import NoUploads
from assistant.chat.sign_in_limit import FailedSignIns, SignInRateLimit
from assistant.chat.sign_in_page import SignInPage
from assistant.chat.stream_limit import StreamLimit
from assistant.chat.style import CSS

if TYPE_CHECKING:
    import gradio as gr

    from assistant.chat.service import ChatConfig, ChatService

#: Gradio's limit on each uploaded file (issue 39): a second guard, as the chat refuses every upload (no_uploads.py).
MAX_UPLOAD = "1mb"


def launch_app(
    app: gr.Blocks,
    config: ChatConfig,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    auth: tuple[str, str] | list[tuple[str, str]] | None = None,
    root_path: str | None = None,
    block: bool = True,
) -> Any:
    """Serve with a bounded queue: `config.concurrency` requests run at once (the embedded model answers one
    at a time anyway; searches and HTTP backends run in parallel), the rest wait and see their position.
    No share link, analytics, run history, monitoring endpoint or MCP server: report text stays on the host.
    Sign-in is rate limited per address and per account (sign_in_limit.py), and the streams an address keeps open
    (stream_limit.py): an address is the connecting socket's, unless that is one of the trusted proxies of the
    settings, whose X-Forwarded-For then names it (its rightmost entry that is not a trusted proxy). uvicorn (which
    Gradio runs) believes X-Forwarded-For from loopback by default and reads whom to believe from
    FORWARDED_ALLOW_IPS when the server is made, so it is set here first ("" believes no one)."""
    from starlette.middleware import Middleware

    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(config.settings.chat.trusted_proxies)
    app.queue(default_concurrency_limit=config.concurrency, max_size=config.queue_size)
    return app.launch(
        server_name=host,
        server_port=port,
        auth=auth,
        auth_message="RadSearch Assistant: sign in with the account your department gave you.",
        root_path=root_path,
        share=False,
        inbrowser=False,
        prevent_thread_lock=not block,
        show_error=False,
        quiet=True,  # the command prints its own start-up lines (Gradio's would offer a share link the chat refuses)
        max_threads=max(40, config.concurrency * 4),
        max_file_size=MAX_UPLOAD,
        footer_links=["api", "settings"],
        run_history=False,
        enable_monitoring=False,
        mcp_server=False,
        ssr_mode=False,
        pwa=False,
        theme=_theme(),
        css=CSS,
        app_kwargs={
            "middleware": [
                Middleware(NoUploads),
                Middleware(SignInPage),
                Middleware(SignInRateLimit, failures=FailedSignIns(config.sign_in), accounts=_users(auth)),
                Middleware(StreamLimit, per_client=config.streams_per_client),
            ]
        },
    )


def _users(auth: tuple[str, str] | list[tuple[str, str]] | None) -> list[str]:
    """The account names of `auth` (one account or a list), whose sign-ins are limited per account too."""
    accounts = [auth] if isinstance(auth, tuple) else auth or []
    return [user for user, _password in accounts]


def startup_lines(service: ChatService, host: str, port: int, accounts: list[tuple[str, str]] | None) -> list[str]:
    """What the chat command prints once it starts: the address and who can reach it, whether sign-in is on, the
    index a page opens with, how answers are made and where feedback is kept (and nothing about share links: the
    chat never makes one)."""
    from assistant.chat.service import DEFAULT_MODE

    shown = "localhost" if host == "127.0.0.1" else host
    reach = "this machine only" if host in ("127.0.0.1", "localhost", "::1") else "every address that can reach it"
    policy = service.config.sign_in
    sign_in = (
        f"on for {', '.join(user for user, _ in accounts)} ({policy.max_failures} failed sign-ins within "
        f"{policy.window_s:.0f} s lock an address out)"
        if accounts
        else "off: anyone who can reach the address can use it"
    )
    labels = {str(folder): label for label, folder in service.catalog.labelled()}
    default = service.catalog.default()
    return [
        f"RadSearch Assistant chat on http://{shown}:{port} ({reach}); Ctrl+C stops",
        f"  sign-in: {sign_in}",
        f"  index: {labels.get(default, default)} ({default})",
        f"  answers: {DEFAULT_MODE} by default; the language model: {service.config.settings.llm.describe()}",
        f"  feedback: kept in {service.answers.store.path}",
    ]


def _theme() -> Any:
    """A calm clinical palette with system-installed or bundled fonts only (no font CDN: hospital networks
    often block the internet, and report text should not trigger outside requests)."""
    import gradio as gr

    return gr.themes.Soft(
        primary_hue=gr.themes.colors.blue,
        neutral_hue=gr.themes.colors.slate,
        font=["system-ui", "-apple-system", "Segoe UI", "Roboto", "Helvetica Neue", "Arial", "sans-serif"],
        font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "monospace"],
    )
