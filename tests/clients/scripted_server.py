"""A real HTTP server on loopback that answers from a script, for the client's retry tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Script:
    """Answers by path, in order; the last answer for a path repeats."""

    answers: dict[str, list[Answer]]
    seen: list[tuple[str, str, str]] = field(default_factory=list)  # method, path, authorization

    def next(self, method: str, path: str, auth: str) -> Answer:
        self.seen.append((method, path, auth))
        queue = self.answers.get(path.split("?", 1)[0])
        if not queue:
            return Answer(404, {"error": f"no route {path}", "code": "not_found", "details": {}})
        return queue.pop(0) if len(queue) > 1 else queue[0]


@contextmanager
def serve(script: Script) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
            reply = script.next(self.command, self.path, self.headers.get("authorization", ""))
            payload = b"" if reply.body is None else json.dumps(reply.body).encode()
            self.send_response(reply.status)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_DELETE = do_PATCH = answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
