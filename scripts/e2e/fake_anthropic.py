#!/usr/bin/env python3
"""A stand-in for the Anthropic Messages API, for end-to-end runs of the real Claude Code CLI.

It listens on 127.0.0.1 only, answers every `POST /v1/messages` with a short text reply
(server-sent events when the request asks to stream, one JSON message otherwise), answers
`count_tokens` and anything else the client probes with something harmless, and records every
request (method, path, headers, parsed JSON body) so a test can assert on exactly what the
model would have been sent.

    server = FakeAnthropic()
    server.start()            # server.base_url -> "http://127.0.0.1:PORT"
    ...
    server.message_requests() # bodies of the POST /v1/messages requests, in arrival order
    server.stop()

Run as a script (`python3 fake_anthropic.py --port 8765 --log requests.jsonl`) it serves until
interrupted and appends each request to the log as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPLY_TEXT = "Noted."
MODEL_FALLBACK = "claude-sonnet-4-5"


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when the body is not JSON, or None


@dataclass
class _Recorder:
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


def _message(model: str, number: int, text: str) -> dict[str, Any]:
    return {
        "id": f"msg_fake_{number:06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 2,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _sse_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    text = message["content"][0]["text"]
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    return [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        ("ping", {"type": "ping"}),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def _make_handler(recorder: _Recorder, reply_text: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

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
            return recorder.add(RecordedRequest(self.command, self.path, headers, body))

        def _send_json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", "req_fake")
            self.end_headers()
            self.wfile.write(data)

        def _send_stream(self, message: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.send_header("request-id", "req_fake")
            self.end_headers()
            for event, data in _sse_events(message):
                chunk = f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()
                self.wfile.write(chunk)
                self.wfile.flush()
            self.close_connection = True

        def do_POST(self) -> None:
            body = self._read_body()
            number = self._record(body)
            path = self.path.split("?", 1)[0]
            if path.endswith("/v1/messages/count_tokens"):
                self._send_json(200, {"input_tokens": 100})
            elif path.endswith("/v1/messages"):
                model = MODEL_FALLBACK
                stream = False
                if isinstance(body, dict):
                    model = str(body.get("model") or MODEL_FALLBACK)
                    stream = bool(body.get("stream"))
                message = _message(model, number, reply_text)
                if stream:
                    self._send_stream(message)
                else:
                    self._send_json(200, message)
            else:
                self._send_json(200, {})

        def do_GET(self) -> None:
            self._record(None)
            path = self.path.split("?", 1)[0]
            if path.endswith("/v1/models"):
                self._send_json(
                    200, {"data": [], "has_more": False, "first_id": None, "last_id": None}
                )
            else:
                self._send_json(200, {})

        def do_HEAD(self) -> None:
            self._record(None)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_CONNECT(self) -> None:
            # A proxy tunnel request: the client tried to reach a host other than this server
            # (the tests point HTTPS_PROXY here to catch exactly that). Refuse it.
            self._record(None)
            self._send_json(403, {"error": "no network in end-to-end tests"})
            self.close_connection = True

        do_PUT = do_POST
        do_PATCH = do_POST
        do_DELETE = do_GET

    return Handler


class FakeAnthropic:
    def __init__(
        self, port: int = 0, reply_text: str = REPLY_TEXT, log: Path | None = None
    ) -> None:
        self._recorder = _Recorder(log=log)
        self._server = ThreadingHTTPServer(
            ("127.0.0.1", port), _make_handler(self._recorder, reply_text)
        )
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def start(self) -> FakeAnthropic:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._recorder.lock:
            return list(self._recorder.requests)

    def message_requests(self) -> list[dict[str, Any]]:
        return [
            r.body
            for r in self.requests
            if r.method == "POST"
            and r.path.split("?", 1)[0].endswith("/v1/messages")
            and isinstance(r.body, dict)
        ]

    def outside_requests(self) -> list[RecordedRequest]:
        """Requests meant for another host: proxy tunnels and absolute-URI requests."""
        return [r for r in self.requests if r.method == "CONNECT" or "://" in r.path]

    def clear(self) -> None:
        with self._recorder.lock:
            self._recorder.requests.clear()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--log", type=Path, default=None, help="append each request to this file as one JSON line"
    )
    parser.add_argument("--reply", default=REPLY_TEXT, help="text of every reply")
    args = parser.parse_args(argv)
    server = FakeAnthropic(args.port, args.reply, args.log).start()
    print(f"fake Anthropic API at {server.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
