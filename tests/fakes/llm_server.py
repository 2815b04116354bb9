"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests (no network, no model).

    server = FakeLLMServer().start()
    server.script([Reply.json({"metrics": []}), Reply.text("not json"), Reply.rate_limited()])
    client = LLMClient(LLMConfig(model="fake", base_url=server.base_url))
    ...
    server.requests  # the JSON bodies it received, in order
    server.stop()

Each POST to /v1/chat/completions (or /chat/completions) takes the next scripted reply; an entry
may also be a function of the request body returning a Reply. When the script is empty,
`server.default` answers (a Reply, a function, or None for a 500 "script exhausted").
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], "Reply"]


@dataclass(frozen=True)
class Reply:
    """One scripted answer: an HTTP status, a chat message (or a raw body), a delay, headers."""

    status: int = 200
    content: str | None = ""
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None  # sent as is instead of a chat completion

    @staticmethod
    def json(obj: Any, fenced: bool = False) -> Reply:
        """A good reply: `obj` as JSON text (inside a ```json fence when `fenced`)."""
        text = json.dumps(obj)
        return Reply(content=f"Here it is:\n```json\n{text}\n```" if fenced else text)

    @staticmethod
    def text(content: str) -> Reply:
        """A 200 reply whose message is `content` as given (e.g. malformed JSON)."""
        return Reply(content=content)

    @staticmethod
    def slow(seconds: float, then: Reply | None = None) -> Reply:
        """Wait `seconds` before answering (past a client's timeout), then answer `then`."""
        base = then or Reply.json({})
        return Reply(base.status, base.content, seconds, base.headers, base.body)

    @staticmethod
    def rate_limited(retry_after: float = 0.0) -> Reply:
        return Reply(429, None, headers={"Retry-After": f"{retry_after:g}"},
                     body={"error": {"message": "rate limited", "type": "rate_limit_error"}})

    @staticmethod
    def server_error(status: int = 500) -> Reply:
        return Reply(status, None, body={"error": {"message": "scripted failure",
                                                   "type": "server_error"}})


class FakeLLMServer:
    """The server; start() binds a random port, stop() shuts it down and cuts delays short."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.default: Reply | Responder | None = None
        self._queue: deque[Reply | Responder] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "start() the server first"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, replies: Iterable[Reply | Responder]) -> None:
        """Queue replies, answered in order (after any still queued)."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def start(self) -> FakeLLMServer:
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a slow reply must not hold up stop()
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            entry = self._queue.popleft() if self._queue else self.default
        if entry is None:
            return Reply.server_error(500)
        return entry if isinstance(entry, Reply) else entry(request)


def completion_body(request: dict[str, Any], content: str) -> dict[str, Any]:
    """A chat.completion object as OpenAI sends it."""
    prompt = sum(len(str(m.get("content", ""))) for m in request.get("messages", [])) // 4
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
        "model": request.get("model", "fake"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": len(content) // 4,
                  "total_tokens": prompt + len(content) // 4},
    }


def _make_handler(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                request = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                request = {}
            reply = server._next(request)
            if reply.delay_s and server._stopping.wait(reply.delay_s):
                return
            body = reply.body if reply.body is not None else completion_body(
                request, reply.content or "")
            self._send(reply.status, body, reply.headers)

        def _send(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # keep test output clean

    return Handler
