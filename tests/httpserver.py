"""A small HTTP file server on 127.0.0.1 for tests: Range support and scripted failures."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from chess_eval.benchmark.core.server import QuietServer


@dataclass
class Route:
    """What the server does for one path."""

    body: bytes
    drop_after: int | None = None  # close the connection after this many bytes ...
    drops_left: int = 0  # ... this many times
    status: int = 200
    hang_after: int | None = None  # send this many bytes, then hold the connection silent
    requests: list[dict[str, str]] = field(default_factory=list)


class FileServer:
    """Serves registered bytes; can drop connections mid-body a set number of times."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                route = server.routes.get(self.path)
                if route is None:
                    self.send_error(404)
                    return
                route.requests.append(dict(self.headers))
                if route.status != 200:
                    self.send_error(route.status)
                    return
                start = 0
                if rng := self.headers.get("Range"):
                    start = int(rng.split("=")[1].split("-")[0])
                body = route.body[start:]
                self.send_response(206 if start else 200)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Accept-Ranges", "bytes")
                self.end_headers()
                if route.hang_after is not None:
                    self.wfile.write(body[: route.hang_after])
                    self.wfile.flush()
                    time.sleep(30)
                    self.close_connection = True
                    return
                if route.drops_left > 0 and route.drop_after is not None:
                    route.drops_left -= 1
                    self.wfile.write(body[: route.drop_after])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

        # Quiet about a client that hangs up (a download the test cuts short).
        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> None:
        """Start serving in a background thread."""
        self.thread.start()

    def stop(self) -> None:
        """Stop serving."""
        self.httpd.shutdown()
        self.httpd.server_close()

    def add(self, path: str, body: bytes, **kwargs: Any) -> str:
        """Serve `body` at `path`; returns its URL (kwargs: Route's other fields)."""
        self.routes[path] = Route(body=body, **kwargs)
        return self.url(path)

    def url(self, path: str) -> str:
        """The URL of a path on this server."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}{path}"
