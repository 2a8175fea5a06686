"""The chat takes no files, so it refuses every upload request (issue 51, low: 20 files of 1 MB in one request were
accepted).

Gradio serves POST /gradio_api/upload to any signed-in user, or to anyone when sign-in is off, and
writes what it gets to its upload folder; its `max_file_size` (serve.py's MAX_UPLOAD) limits each file, not how many
one request holds. No component of the page uploads a file (its inputs are text, choices, numbers and the
conversation; `tests/assistant/test_chat_sign_in.py` checks the kinds of component on the page), nor does an API
client of it. `NoUploads` is ASGI middleware in front of the app: an upload request gets 413 before a byte of its
body is read, whatever its size, number of files or transfer encoding, with its connection closed.
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send


class NoUploads:
    """ASGI middleware: POST .../upload gets 413 unread; anything else passes untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].rstrip("/").endswith("/upload"):
            await self.app(scope, receive, send)
            return
        refusal = JSONResponse(
            {"detail": "The chat takes no files: upload requests are refused."},
            status_code=413,
            headers={"Connection": "close"},
        )
        await refusal(scope, receive, send)
