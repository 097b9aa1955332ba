"""A real OpenAI-compatible HTTP server on loopback for the openai embedder and llm summarizer tests.

Embeddings are deterministic (from each text's hash); chat answers with a fixed structured summary.
`fail_next` makes the next requests fail with a status, to test retries.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def fake_vector(text: str, dimensions: int) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [(digest[i % len(digest)] - 128) / 128 for i in range(dimensions)]


class Stub:
    def __init__(self, dimensions: int = 8) -> None:
        self.dimensions = dimensions
        self.requests: list[tuple[str, dict, str | None]] = []
        self.fail_next: list[int] = []
        self.chat_reply = json.dumps(
            {"summary": "Ana chose Postgres.", "decisions": ["use Postgres"], "open_loops": ["rotate keys"]}
        )
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append((self.path, body, self.headers.get("Authorization")))
                if stub.fail_next:
                    self.reply(stub.fail_next.pop(0), {"error": {"message": "try again"}})
                elif self.path.endswith("/embeddings"):
                    data = [
                        {"index": i, "embedding": fake_vector(t, stub.dimensions)} for i, t in enumerate(body["input"])
                    ]
                    self.reply(200, {"data": data, "model": body["model"]})
                elif self.path.endswith("/chat/completions"):
                    self.reply(200, {"choices": [{"message": {"role": "assistant", "content": stub.chat_reply}}]})
                else:
                    self.reply(404, {"error": {"message": "no such path"}})

            def reply(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Stub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
