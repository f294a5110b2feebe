"""A real HTTP server on 127.0.0.1, in a thread of the test: it records every request it gets and
answers like the Anthropic or OpenAI API (by path), so the real SDKs talk to it over TCP."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.llm_fakes import anthropic_body, openai_body


class Listener:
    def __init__(self, *, status: int = 200, text: str = "ok") -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = status
        self.text = text
        self.echo = False  # an error that quotes the credential it was sent, as some providers' do
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                listener.requests.append(
                    {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
                )
                if listener.status != 200:
                    said = "listener says no"
                    if listener.echo:
                        said = f"Incorrect API key provided: {self.headers.get('authorization', '')}"
                    payload = {"error": {"type": "authentication_error", "message": said}}
                elif self.path.endswith("/messages"):
                    payload = anthropic_body(listener.text, 10, 1)
                else:
                    payload = openai_body(listener.text, 10, 1)
                data = json.dumps(payload).encode()
                self.send_response(listener.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, name=f"listener-{self.port}", daemon=True)

    def __enter__(self) -> Listener:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def seen(self) -> str:
        """Everything that reached this listener, headers and bodies, as one string to search."""
        parts = []
        for request in self.requests:
            parts.append(request["path"])
            parts.extend(f"{k}: {v}" for k, v in request["headers"].items())
            parts.append(request["body"].decode("utf-8", "replace"))
        return "\n".join(parts)
