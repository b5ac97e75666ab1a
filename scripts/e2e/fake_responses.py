#!/usr/bin/env python3
"""A stand-in for the OpenAI Responses API, for end-to-end runs of the real Codex CLI.

The Codex CLI talks to a model provider with `wire_api = "responses"`: each model turn is one
`POST {base_url}/responses` with a JSON body (`instructions`, `input` items, `tools`,
`"stream": true`), answered with server-sent events. This server listens on 127.0.0.1 only,
answers those requests, answers anything else the client probes with something harmless, refuses
proxy tunnels (a test points HTTPS_PROXY here, so an attempt to reach any other host lands here
and is recorded), and records every request so a test can assert on what the model was sent.

    server = FakeResponses()
    server.start()             # server.base_url -> "http://127.0.0.1:PORT/v1"
    ...
    server.response_requests() # bodies of the POST /v1/responses requests, in arrival order
    server.stop()

By default every reply is one assistant message, `reply_text` ("Noted."). To play a model, pass
a responder: it is called once per `POST …/responses`, one call at a time, with the parsed body,
and returns the output items, built with `message(...)` and `function_call(...)` (a call
without a `call_id` gets a fresh one), or None for the default reply. A responder that raises
gets the default reply and the exception is kept in `server.responder_errors`.

The stream is what the CLI reads (codex-rs `process_sse`): `response.created`, then for each
item `response.output_item.added` and `response.output_item.done` (a message's text also as one
`response.output_text.delta`), then `response.completed` with the usage. A function call's
result comes back in the next request as a `function_call_output` input item with the same
`call_id`.

`ScriptedModel` plays the agent's own turns from a list of steps (a request that offers the
`exec_command` tool) and leaves every other request the default reply. Helpers read a request:
`tool_names(body)`, `all_texts(body)` (every text the model is given), `new_outputs(body)`
(the function call outputs sent since the model's last item).

Run as a script (`python3 fake_responses.py --port 8766 --log requests.jsonl`) it serves until
interrupted and appends each request to the log as one JSON line.
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPLY_TEXT = "Noted."
SHELL_TOOL = "exec_command"  # the shell tool of Codex 0.171.0 (unified exec)

Item = dict[str, Any]
Responder = Callable[[dict[str, Any]], "list[Item] | None"]

_ids = itertools.count(1)


# --- building and reading items ----------------------------------------------------------------


def message(value: str) -> Item:
    return {
        "type": "message",
        "role": "assistant",
        "id": f"msg_fake_{next(_ids):06d}",
        "content": [{"type": "output_text", "text": value, "annotations": []}],
    }


def function_call(name: str, arguments: Mapping[str, Any], call_id: str | None = None) -> Item:
    return {
        "type": "function_call",
        "id": f"fc_fake_{next(_ids):06d}",
        "call_id": call_id or f"call_fake_{next(_ids):06d}",
        "name": name,
        "arguments": json.dumps(dict(arguments), ensure_ascii=False),
    }


def tool_names(body: Mapping[str, Any]) -> list[str]:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return []
    return [str(t.get("name") or t.get("type")) for t in tools if isinstance(t, dict)]


def item_texts(item: Any) -> list[str]:
    """The texts of one input item: a message's text parts, a function call output's text."""
    if not isinstance(item, dict):
        return []
    if item.get("type") == "function_call_output":
        output = item.get("output")
        if isinstance(output, str):
            return [output]
        if isinstance(output, list):  # a list of content parts
            return [
                p["text"] for p in output if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
        return []
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
    return []


def all_texts(body: Mapping[str, Any]) -> list[str]:
    """Every text the model is given: the instructions and every input item's text."""
    found = [body["instructions"]] if isinstance(body.get("instructions"), str) else []
    items = body.get("input")
    for item in items if isinstance(items, list) else []:
        found.extend(item_texts(item))
    return found


@dataclass(frozen=True)
class CallOutput:
    call_id: str
    text: str


def new_outputs(body: Mapping[str, Any]) -> list[CallOutput]:
    """The function call outputs sent since the model's last item (message or call)."""
    items = body.get("input")
    if not isinstance(items, list):
        return []
    found: list[CallOutput] = []
    for item in reversed(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call_output":
            found.insert(0, CallOutput(str(item.get("call_id")), "\n".join(item_texts(item))))
        elif kind == "function_call" or (kind == "message" and item.get("role") == "assistant"):
            break
    return found


def is_agent_turn(body: Mapping[str, Any]) -> bool:
    """A request of the agent's own loop: it offers the shell tool."""
    return SHELL_TOOL in tool_names(body)


class ScriptedModel:
    """A responder that plays the agent's turns step by step (see the module docstring)."""

    def __init__(
        self,
        steps: Sequence[Responder],
        is_main: Callable[[Mapping[str, Any]], bool] = is_agent_turn,
    ) -> None:
        self._steps = list(steps)
        self._is_main = is_main
        self.answered = 0

    @property
    def done(self) -> bool:
        return self.answered >= len(self._steps)

    def __call__(self, body: dict[str, Any]) -> list[Item] | None:
        if not self._is_main(body) or self.done:
            return None
        step = self._steps[self.answered]
        self.answered += 1
        return step(body)


# --- the wire format ---------------------------------------------------------------------------


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


def sse_events(number: int, items: Sequence[Item]) -> list[dict[str, Any]]:
    """The events of one streamed response carrying `items`."""
    response_id = f"resp_fake_{number:06d}"
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": response_id, "status": "in_progress"}}
    ]
    for index, item in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        if item.get("type") == "message":
            for part in item.get("content", []):
                events.append(
                    {
                        "type": "response.output_text.delta",
                        "item_id": item.get("id"),
                        "output_index": index,
                        "content_index": 0,
                        "delta": part.get("text", ""),
                    }
                )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append(
        {
            "type": "response.completed",
            "response": {
                "id": response_id,
                "status": "completed",
                "usage": {
                    "input_tokens": 10,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 2,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": 12,
                },
            },
        }
    )
    return events


class _Reply:
    """What a `POST …/responses` gets: the responder's items, else the default message."""

    def __init__(self, reply_text: str, responder: Responder | None) -> None:
        self.reply_text = reply_text
        self.responder = responder
        self.errors: list[BaseException] = []
        self.lock = threading.Lock()

    def items(self, body: Any) -> list[Item]:
        if self.responder is not None and isinstance(body, dict):
            with self.lock:
                try:
                    items = self.responder(body)
                except Exception as exc:  # a broken script must not hang the client
                    self.errors.append(exc)
                    items = None
            if items:
                return [dict(item) for item in items]
        return [message(self.reply_text)]


def _make_handler(recorder: _Recorder, reply: _Reply) -> type[BaseHTTPRequestHandler]:
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
            self.end_headers()
            self.wfile.write(data)

        def _send_stream(self, events: list[dict[str, Any]]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in events:
                chunk = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                self.wfile.write(chunk)
                self.wfile.flush()
            self.close_connection = True

        def do_POST(self) -> None:
            body = self._read_body()
            number = self._record(body)
            if self.path.split("?", 1)[0].endswith("/responses"):
                self._send_stream(sse_events(number, reply.items(body)))
            else:
                self._send_json(200, {})

        def do_GET(self) -> None:
            self._record(None)
            if self.path.split("?", 1)[0].endswith("/models"):
                self._send_json(200, {"models": [], "data": []})
            else:
                self._send_json(200, {})

        def do_HEAD(self) -> None:
            self._record(None)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_CONNECT(self) -> None:
            # A proxy tunnel: the client tried to reach a host other than this server. Refuse it.
            self._record(None)
            self._send_json(403, {"error": "no network in end-to-end tests"})
            self.close_connection = True

        do_PUT = do_POST
        do_PATCH = do_POST
        do_DELETE = do_GET

    return Handler


class FakeResponses:
    def __init__(
        self,
        port: int = 0,
        reply_text: str = REPLY_TEXT,
        log: Path | None = None,
        responder: Responder | None = None,
    ) -> None:
        self._recorder = _Recorder(log=log)
        self._reply = _Reply(reply_text, responder)
        self._server = ThreadingHTTPServer(
            ("127.0.0.1", port), _make_handler(self._recorder, self._reply)
        )
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_url(self) -> str:
        """What a Codex model provider's `base_url` is set to."""
        return f"{self.origin}/v1"

    @property
    def responder(self) -> Responder | None:
        return self._reply.responder

    @responder.setter
    def responder(self, responder: Responder | None) -> None:
        with self._reply.lock:
            self._reply.responder = responder

    @property
    def responder_errors(self) -> list[BaseException]:
        with self._reply.lock:
            return list(self._reply.errors)

    def start(self) -> FakeResponses:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-responses", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeResponses:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._recorder.lock:
            return list(self._recorder.requests)

    def response_requests(self) -> list[dict[str, Any]]:
        return [
            r.body
            for r in self.requests
            if r.method == "POST"
            and r.path.split("?", 1)[0].endswith("/responses")
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument(
        "--log", type=Path, default=None, help="append each request to this file as one JSON line"
    )
    parser.add_argument("--reply", default=REPLY_TEXT, help="text of every reply")
    args = parser.parse_args(argv)
    server = FakeResponses(args.port, args.reply, args.log).start()
    print(f"fake Responses API at {server.base_url}", flush=True)
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
