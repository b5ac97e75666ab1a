"""What the two loopback fake model APIs share: the server, its lifecycle and its recording.

`fake_anthropic.py` (the Messages API, for the Claude Code CLI) and `fake_responses.py` (the
Responses API, for the Codex CLI) are each a `FakeServer` subclass with a `FakeHandler`
subclass; they only say how a model request is answered. What is here is the same for both:

- `FakeServer` listens on 127.0.0.1 only (port 0 picks a free one), serves on a daemon thread
  (`start`/`stop`, or a `with` block), records every request (`requests`, in arrival order;
  `outside_requests`, those meant for another host; `clear`), and keeps the responder, which a
  test may swap between CLI runs, the exceptions it raised (`responder_errors`), and the prompt
  size every reply reports (`input_tokens`, which a test raises to make the client compact).
- `FakeHandler` reads and records each request (method, path, lower-cased headers, the body
  parsed as JSON, or its text, or None), answers HEAD with an empty 200, refuses a proxy tunnel
  (CONNECT: the tests point HTTPS_PROXY here, so any attempt to reach another host lands here)
  with a 403, and hands POST/PUT/PATCH to `answer_post` and GET/DELETE to `answer_get`, which a
  subclass overrides; both answer `{}` by default.
- `Reply` calls the responder once per model request, one call at a time; a responder that
  returns nothing or raises gets the default reply, and what it raised is kept.
- `serve_main` is the command line of both fakes: serve until interrupted, appending each
  request to a log as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

REPLY_TEXT = "Noted."
INPUT_TOKENS = 10  # the usage every reply reports, unless a test sets input_tokens
Part = dict[str, Any]  # a content block (Messages) or an output item (Responses)
Responder = Callable[[dict[str, Any]], "list[Part] | None"]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when the body is not JSON, or None


@dataclass
class Recorder:
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    log: Path | None = None
    counter: int = 0

    def add(self, request: RecordedRequest) -> int:
        with self.lock:
            self.requests.append(request)
            self.counter += 1
            if self.log is not None:
                with self.log.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(request.__dict__) + "\n")
            return self.counter


class Reply:
    """What a model request gets: the responder's parts, else `default()`."""

    def __init__(self, default: Callable[[], list[Part]], responder: Responder | None) -> None:
        self.default = default
        self.responder = responder
        self.errors: list[BaseException] = []
        self.lock = threading.Lock()

    def parts(self, body: Any) -> list[Part]:
        if self.responder is not None and isinstance(body, dict):
            with self.lock:
                try:
                    parts = self.responder(body)
                except Exception as exc:  # a broken script must not hang the client
                    self.errors.append(exc)
                    parts = None
            if parts:
                return [dict(part) for part in parts]
        return self.default()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    recorder: Recorder
    reply: Reply
    input_tokens = INPUT_TOKENS  # what each model reply reports as its prompt's size


class FakeHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    extra_headers: ClassVar[tuple[tuple[str, str], ...]] = ()  # sent with every answer

    @property
    def reply(self) -> Reply:
        return cast(_HTTPServer, self.server).reply

    @property
    def input_tokens(self) -> int:
        return cast(_HTTPServer, self.server).input_tokens

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean; the recorder has everything

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        text = raw.decode("utf-8", errors="replace")
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text

    def _record(self, body: Any) -> int:
        headers = {k.lower(): v for k, v in self.headers.items()}
        recorder = cast(_HTTPServer, self.server).recorder
        return recorder.add(RecordedRequest(self.command, self.path, headers, body))

    def send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in self.extra_headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def send_stream(self, events: Sequence[tuple[str, Any]]) -> None:
        """Server-sent events, (event name, JSON data) each, then the connection closes."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for name, value in self.extra_headers:
            self.send_header(name, value)
        self.end_headers()
        for event, data in events:
            self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def answer_post(self, path: str, body: Any, number: int) -> None:
        """Answer a POST (PUT, PATCH) to `path` (no query), the `number`th request recorded."""
        self.send_json(200, {})

    def answer_get(self, path: str) -> None:
        """Answer a GET (DELETE) to `path` (no query)."""
        self.send_json(200, {})

    def do_POST(self) -> None:
        body = self._read_body()
        number = self._record(body)
        self.answer_post(self.path.split("?", 1)[0], body, number)

    def do_GET(self) -> None:
        self._record(None)
        self.answer_get(self.path.split("?", 1)[0])

    def do_HEAD(self) -> None:
        self._record(None)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_CONNECT(self) -> None:
        # A proxy tunnel request: the client tried to reach a host other than this server
        # (the tests point HTTPS_PROXY here to catch exactly that). Refuse it.
        self._record(None)
        self.send_json(403, {"error": "no network in end-to-end tests"})
        self.close_connection = True

    do_PUT = do_POST
    do_PATCH = do_POST
    do_DELETE = do_GET


_Server = TypeVar("_Server", bound="FakeServer")


class FakeServer:
    """A subclass names its `handler` and `thread_name` and builds its `default_reply`."""

    handler: ClassVar[type[FakeHandler]] = FakeHandler
    thread_name: ClassVar[str] = "fake-server"

    def __init__(
        self,
        port: int = 0,
        reply_text: str = REPLY_TEXT,
        log: Path | None = None,
        responder: Responder | None = None,
    ) -> None:
        self._recorder = Recorder(log=log)
        self._reply = Reply(lambda: [self.default_reply(reply_text)], responder)
        self._server = _HTTPServer(("127.0.0.1", port), self.handler)
        self._server.recorder = self._recorder
        self._server.reply = self._reply
        self._thread: threading.Thread | None = None

    def default_reply(self, reply_text: str) -> Part:
        """What a model request gets when the responder has nothing: one text, `reply_text`."""
        raise NotImplementedError

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_url(self) -> str:
        return self.origin

    @property
    def responder(self) -> Responder | None:
        return self._reply.responder

    @responder.setter
    def responder(self, responder: Responder | None) -> None:
        """Swap the responder between CLI runs (one server can serve a module's tests)."""
        with self._reply.lock:
            self._reply.responder = responder

    @property
    def input_tokens(self) -> int:
        """The prompt size each reply reports in its usage (10): a test sets it near the model's
        context window to make the client compact the conversation on its own."""
        return self._server.input_tokens

    @input_tokens.setter
    def input_tokens(self, value: int) -> None:
        self._server.input_tokens = value

    @property
    def responder_errors(self) -> list[BaseException]:
        with self._reply.lock:
            return list(self._reply.errors)

    def start(self: _Server) -> _Server:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=self.thread_name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self: _Server) -> _Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._recorder.lock:
            return list(self._recorder.requests)

    def post_bodies(self, suffix: str) -> list[dict[str, Any]]:
        """The JSON bodies of the POST requests to a path ending in `suffix`, in order."""
        return [
            r.body
            for r in self.requests
            if r.method == "POST"
            and r.path.split("?", 1)[0].endswith(suffix)
            and isinstance(r.body, dict)
        ]

    def outside_requests(self) -> list[RecordedRequest]:
        """Requests meant for another host: proxy tunnels and absolute-URI requests."""
        return [r for r in self.requests if r.method == "CONNECT" or "://" in r.path]

    def clear(self) -> None:
        with self._recorder.lock:
            self._recorder.requests.clear()
        with self._reply.lock:
            self._reply.errors.clear()


def serve_main(
    argv: Sequence[str] | None,
    *,
    doc: str | None,
    port: int,
    make: Callable[[int, str, Path | None], FakeServer],
    label: str,
) -> int:
    """The command line of a fake: `--port`, `--log`, `--reply`; serves until interrupted."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--port", type=int, default=port)
    parser.add_argument(
        "--log", type=Path, default=None, help="append each request to this file as one JSON line"
    )
    parser.add_argument("--reply", default=REPLY_TEXT, help="text of every reply")
    args = parser.parse_args(argv)
    server = make(args.port, args.reply, args.log).start()
    print(f"{label} at {server.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
