"""A local OpenAI-compatible chat-completions server answering queued replies."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def chat_reply(content: str) -> dict[str, Any]:
    """The OpenAI chat-completions response shape."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }


HALF = chat_reply('{"score": 0.5, "reason": "one item missing"}')


@dataclass
class Reply:
    status: int = 200
    body: Any = field(default_factory=lambda: HALF)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]  # names lowercased
    body: dict[str, Any]


class FakeServer:
    """A ThreadingHTTPServer on 127.0.0.1 (port 0) answering queued replies, then ``default``."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.queue: list[Reply] = []
        self.default = Reply()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with owner._lock:
                    owner.requests.append(
                        Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw))
                    )
                    reply = owner.queue.pop(0) if owner.queue else owner.default
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    for name, value in {"Content-Type": "application/json", **reply.headers}.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (timeout test)
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # type: ignore[method-assign]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)
