"""A real OpenAI-compatible HTTP server on loopback for the openai embedder, llm summarizer and rerank tests.

Embeddings are deterministic (from each text's hash); chat answers with a fixed structured summary;
/rerank scores each document by word overlap with the query (rerank_score), best first, honouring top_n,
in the Cohere shape or, with rerank_shape = "tei", in TEI's bare-list shape; rerank_reply, when set,
is sent instead as it is (for malformed answers).
`fail_next` makes the next requests fail with a status (and an error body with `fail_message`), to test
retries; `redirect_to`, when set, answers every request with a 307 to that URL; `delay` (seconds) holds
every answer back, to test timeouts (cut short when the server stops).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from psycopg import sql


def fake_vector(text: str, dimensions: int) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [(digest[i % len(digest)] - 128) / 128 for i in range(dimensions)]


def rerank_score(query: str, document: str) -> float:
    """The fraction of the query's distinct lowercase words that occur in the document."""
    words = set(re.findall(r"\w+", query.lower()))
    if not words:
        return 0.0
    return len(words & set(re.findall(r"\w+", document.lower()))) / len(words)


class Stub:
    def __init__(self, dimensions: int = 8) -> None:
        self.dimensions = dimensions
        self.requests: list[tuple[str, dict, str | None]] = []
        self.fail_next: list[int] = []
        self.fail_message = "try again"
        self.delay = 0.0
        self.rerank_shape = "cohere"
        self.rerank_reply: object | None = None
        self.redirect_to: str | None = None
        self.stopping = threading.Event()
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
                if stub.delay:
                    stub.stopping.wait(stub.delay)
                if stub.redirect_to:
                    self.send_response(307)
                    self.send_header("Location", stub.redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif stub.fail_next:
                    self.reply(stub.fail_next.pop(0), {"error": {"message": stub.fail_message}})
                elif self.path.endswith("/embeddings"):
                    data = [
                        {"index": i, "embedding": fake_vector(t, stub.dimensions)} for i, t in enumerate(body["input"])
                    ]
                    self.reply(200, {"data": data, "model": body["model"]})
                elif self.path.endswith("/chat/completions"):
                    self.reply(200, {"choices": [{"message": {"role": "assistant", "content": stub.chat_reply}}]})
                elif self.path.endswith("/rerank"):
                    self.reply(200, stub.rerank_reply if stub.rerank_reply is not None else stub.rerank(body))
                else:
                    self.reply(404, {"error": {"message": "no such path"}})

            def reply(self, status: int, payload: object) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except ConnectionError:
                    pass  # the client gave up (a timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def rerank(self, body: dict) -> object:
        scored = [(i, rerank_score(body["query"], d)) for i, d in enumerate(body["documents"])]
        best = sorted(scored, key=lambda pair: (-pair[1], pair[0]))[: body.get("top_n") or len(scored)]
        if self.rerank_shape == "tei":
            return [{"index": i, "score": s} for i, s in best]
        return {"results": [{"index": i, "relevance_score": s} for i, s in best], "model": body.get("model")}

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def rerank_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/rerank"

    def answer_chat_for(self, db: Any, setting: str, answer: str) -> None:
        """Makes the database session's llm `setting` (entity_extractor, memory_extractor,
        memory_supersede_judge) ask this server, which answers every chat request with `answer`."""
        db.execute(f"set memory.{setting} = 'llm'")
        db.execute(sql.SQL("set memory.openai_base_url = {}").format(self.base_url))
        db.execute("set memory.openai_chat_model = 'stub-chat'")
        db.execute("set memory.http_retries = 0")
        db.execute("select memory.set_secret('openai_api_key', 'sk-test')")
        self.chat_reply = answer

    def embed_for(self, db: Any) -> None:
        """Makes the database session embed with this server (embedder openai, model stub-embed, 8 dimensions)."""
        db.execute("set memory.embedder = 'openai'")
        db.execute(sql.SQL("set memory.openai_base_url = {}").format(self.base_url))
        db.execute("set memory.openai_embedding_model = 'stub-embed'")
        db.execute(f"set memory.openai_embedding_dimensions = {self.dimensions}")
        db.execute("set memory.http_retries = 2")
        db.execute("select memory.set_secret('openai_api_key', 'sk-test')")

    def __enter__(self) -> Stub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
