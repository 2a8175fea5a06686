"""A real OpenAI-compatible HTTP server on 127.0.0.1 that misbehaves on purpose, for the LLM fault tests.

`behaviour` picks the fault: `ok` (a normal completion, or an event stream when the request asks for one),
`slow` (2 s before answering), `error` (500), `bad_request` (400), `trickle` (the answer arrives at one byte,
or one streamed event, every `trickle_s`, after a `trickle_bytes`-long prefix of JSON whitespace), `reply` (200
with `reply = (content type, body)` as it is: HTML, JSON of another shape, a truncated body), `slow_stream` (a
streamed answer of `stream_pieces`, one event every `trickle_s`, each event's send time kept in `sent_at`: a model
writing slowly, for tests of what a client shows before the answer is complete), `silent` (accepts every request,
the model list too, and never answers until the server closes).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = '{"cause": "heart failure"}'
COMPLETION = {
    "id": "c",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ANSWER}}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
}
MODELS = {"object": "list", "data": [{"id": "m", "object": "model", "max_model_len": 1234}]}


def stream_event(content: str) -> bytes:
    """One server-sent event of a streamed chat completion carrying `content`."""
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}],
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


class FaultServer(ThreadingHTTPServer):
    daemon_threads = True
    behaviour = "ok"
    reply: tuple[str, bytes] = ("application/json", b"{}")
    trickle_s = 0.3
    trickle_bytes = 30
    stream_pieces: tuple[str, ...] = ('{"diagnosis": "', "pleural", " effusion", '"}')
    sent_at: list[float]
    requests: list[dict]
    client_left: threading.Event  # set when the client hung up before the answer was complete
    closing: threading.Event  # set when the server closes: `silent` handlers stop waiting

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: FaultServer

    def log_message(self, *args: object) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:  # /v1/models as vLLM answers it
        if self.server.behaviour == "silent":
            self.server.closing.wait()
            return
        self._json(MODELS, trickle=self.server.behaviour == "trickle")

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        behaviour = self.server.behaviour
        if behaviour == "slow":
            time.sleep(2)
        if behaviour == "silent":
            self.server.closing.wait()
            return
        if behaviour == "error":
            self._send(500, "application/json", b'{"error": {"message": "engine dead"}}')
        elif behaviour == "bad_request":
            self._send(400, "application/json", b'{"error": {"message": "max_tokens too large"}}')
        elif behaviour == "reply":
            self._send(200, *self.server.reply)
        elif body.get("stream") and behaviour == "slow_stream":
            self._slow_stream()
        elif body.get("stream"):
            self._stream(trickle=behaviour == "trickle")
        else:
            self._json(COMPLETION, trickle=behaviour == "trickle")

    def _json(self, payload: dict, *, trickle: bool) -> None:
        data = json.dumps(payload).encode()
        padding = b" " * self.server.trickle_bytes if trickle else b""
        self._start(200, "application/json", len(padding) + len(data))
        with self._hang_up_noticed():
            for byte in padding:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(self.server.trickle_s)
            self.wfile.write(data)

    def _stream(self, *, trickle: bool) -> None:
        self._start(200, "text/event-stream", None)
        pieces = [" "] * self.server.trickle_bytes if trickle else []
        with self._hang_up_noticed():
            for piece in [*pieces, ANSWER]:
                self.wfile.write(stream_event(piece))
                self.wfile.flush()
                if trickle:
                    time.sleep(self.server.trickle_s)
            self.wfile.write(b"data: [DONE]\n\n")

    def _slow_stream(self) -> None:
        self._start(200, "text/event-stream", None)
        with self._hang_up_noticed():
            for piece in self.server.stream_pieces:
                time.sleep(self.server.trickle_s)
                self.wfile.write(stream_event(piece))
                self.wfile.flush()
                self.server.sent_at.append(time.monotonic())
            self.wfile.write(b"data: [DONE]\n\n")

    def _start(self, status: int, content_type: str, length: int | None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if length is None:
            self.send_header("Connection", "close")
        else:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self._start(status, content_type, len(data))
        with self._hang_up_noticed():
            self.wfile.write(data)

    @contextlib.contextmanager
    def _hang_up_noticed(self) -> Iterator[None]:
        try:
            yield
        except (BrokenPipeError, ConnectionResetError):
            self.server.client_left.set()


@contextlib.contextmanager
def fault_server() -> Iterator[FaultServer]:
    """Serve on a free loopback port in a thread for the duration of the block."""
    srv = FaultServer(("127.0.0.1", 0), _Handler)
    srv.requests = []
    srv.sent_at = []
    srv.client_left = threading.Event()
    srv.closing = threading.Event()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.closing.set()
        srv.shutdown()
        srv.server_close()
