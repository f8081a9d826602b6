"""A stub OpenAI-compatible chat server on loopback, for tests and offline demos.

``with StubOpenAIServer(reply=...) as server:`` serves ``POST /v1/chat/completions`` on
``127.0.0.1`` (an ephemeral port; ``server.url`` ends in ``/v1``) from a background thread. It
records every request body in ``server.requests``. ``failures`` scripts the first requests: an
``int`` answers with that HTTP status (e.g. 429, 500), a ``float`` sleeps that many seconds
before answering normally (to trigger client timeouts), a ``str`` is sent verbatim as an HTTP 200
JSON body and a ``dict`` as that JSON object (malformed or garbage replies). After ``max_requests`` requests it
answers 503, so a misbehaving client can never loop unboundedly. ``retry_after`` (seconds) adds a
``Retry-After`` header to every error status it sends (429, 5xx …). Usage is counted in words.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StubOpenAIServer:
    """Loopback chat-completions server (context manager).

    Args:
        reply: fixed reply text, or ``body -> text`` where ``body`` is the request JSON.
        failures: per-request script consumed in order (``int`` status, ``float`` delay in s,
            ``str`` raw 200 body, ``dict`` 200 JSON body).
        max_requests: requests served before every further one gets HTTP 503.
        retry_after: if given, the ``Retry-After`` value (seconds, >= 0) sent with error statuses.

    Attributes:
        url: base URL (``http://127.0.0.1:<port>/v1``), set on ``__enter__``.
        requests: request bodies received, in order (failed ones included).
    """

    def __init__(self, reply: str | Callable[[dict], str] = "DONE", failures: Sequence[int | float | str | dict] = (),
                 max_requests: int = 1000, retry_after: float | None = None) -> None:
        if retry_after is not None and not retry_after >= 0:
            raise ValueError(f"retry_after must be >= 0 seconds or None, got {retry_after!r}")
        self.reply, self.failures, self.max_requests = reply, list(failures), max_requests
        self.retry_after = retry_after
        self.requests: list[dict] = []
        self.url = ""
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length", 0))
        body = json.loads(handler.rfile.read(length) or b"{}")
        with self._lock:
            self.requests.append(body)
            n = len(self.requests)
            action = self.failures.pop(0) if self.failures else None
        if n > self.max_requests:
            return self._send(handler, 503, {"error": {"message": "stub request limit reached"}})
        if handler.path.rstrip("/") != "/v1/chat/completions":
            return self._send(handler, 404, {"error": {"message": f"no route {handler.path}"}})
        if isinstance(action, bool):
            raise TypeError(f"failures item {action!r}: use an int status, float delay, str body or dict body")
        if isinstance(action, int):
            return self._send(handler, action, {"error": {"message": f"scripted status {action}"}})
        if isinstance(action, (str, dict)):
            return self._send(handler, 200, action)
        if isinstance(action, float):
            time.sleep(action)
        text = self.reply(body) if callable(self.reply) else self.reply
        p = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        c = len(text.split())
        self._send(handler, 200, {
            "id": f"stub-{n}", "object": "chat.completion", "created": 0, "model": body.get("model", "stub"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}})

    def _send(self, handler: BaseHTTPRequestHandler, status: int, payload: dict | str) -> None:
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            if status >= 400 and self.retry_after is not None:
                handler.send_header("Retry-After", f"{self.retry_after:g}")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
            pass

    def __enter__(self) -> "StubOpenAIServer":
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                outer._handle(self)

            def log_message(self, *args) -> None:  # silence
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
