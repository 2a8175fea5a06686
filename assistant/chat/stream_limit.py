"""A limit on the streams one client keeps open at once (issue 39: about 20,000 open heartbeat connections, which
need no sign-in, used up the server's file descriptors, after which it accepted no connection and the chat stalled
for everyone).

Gradio keeps a connection open for as long as a page is open (the heartbeat) and while an answer streams (the
queue's and the API's event streams); each holds a file descriptor until the client leaves. `StreamLimit` is ASGI
middleware in front of the app: a client address (the connecting socket's, or the one a trusted proxy forwards, as
uvicorn sets it) that holds `per_client` streams gets 429 for the next, with its connection closed, so the descriptor
is free again at once. A page of the chat holds one or two. Connections that never send a request are not seen here:
in front of a network the reverse proxy bounds those (docs/guide/chat.md).
"""

from __future__ import annotations

import re
from collections import Counter

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

#: Gradio's requests that stay open: /heartbeat/SESSION, the queue's /queue/data and the API's /call/NAME/EVENT.
STREAM_PATHS = re.compile(r"/(?:heartbeat/[^/]+|queue/data|call/[^/]+/[^/]+)/?$")


class StreamLimit:
    """ASGI middleware: at most `per_client` streams open per client address; one more gets 429 and is closed."""

    def __init__(self, app: ASGIApp, per_client: int) -> None:
        self.app = app
        self.per_client = per_client
        #: Streams open per address. Only the server's event loop touches it, and no await comes between a check
        #: and its count, so parallel requests cannot both pass the last free place.
        self._open: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or not STREAM_PATHS.search(scope["path"]):
            await self.app(scope, receive, send)
            return
        address = (scope.get("client") or ("unknown",))[0]
        if self._open[address] >= self.per_client:
            refusal = JSONResponse(
                {"detail": f"Too many open chat connections from this address (at most {self.per_client})."},
                status_code=429,
                headers={"Connection": "close"},
            )
            await refusal(scope, receive, send)
            return
        self._open[address] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self._open[address] -= 1
            if not self._open[address]:
                del self._open[address]
