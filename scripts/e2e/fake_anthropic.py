#!/usr/bin/env python3
"""A stand-in for the Anthropic Messages API, for end-to-end runs of the real Claude Code CLI.

It listens on 127.0.0.1 only, answers every `POST /v1/messages` (server-sent events when the
request asks to stream, one JSON message otherwise), answers `count_tokens` and anything else
the client probes with something harmless, and records every request (method, path, headers,
parsed JSON body) so a test can assert on exactly what the model would have been sent.

    server = FakeAnthropic()
    server.start()            # server.base_url -> "http://127.0.0.1:PORT"
    ...
    server.message_requests() # bodies of the POST /v1/messages requests, in arrival order
    server.stop()

By default every reply is the text `reply_text` ("Noted."). To play a model, pass a responder:

    def responder(body: dict) -> list[dict] | None:
        # body: the parsed request, exactly as the client sent it
        return [tool_use("Skill", {"skill": "project-memory:ski-memory-manager"})]

    FakeAnthropic(responder=responder)

The responder is called once per `POST /v1/messages`, one call at a time (never concurrently),
with the parsed JSON body. It returns the assistant's content blocks: `text(...)` and
`tool_use(...)` build them (a tool_use without an `id` gets a fresh `toolu_fake_…` one). It
returns None for "the default reply". When the blocks hold a tool_use, the stop reason is
`tool_use`, else `end_turn`; streamed, a tool_use block goes out as `content_block_start` with
an empty input followed by `input_json_delta` chunks of its JSON, as the real API sends it.
A responder that raises gets the default reply, and the exception is kept in
`server.responder_errors` for the test to assert on.

The client also sends side requests (a title or summary of the conversation, a check of a Bash
command, a different model, often no tools or a different system prompt). `ScriptedModel`
plays the main conversation from a list of steps and answers everything else with the default
text; `is_main_conversation(body)` is its test, which a caller may replace:

    model = ScriptedModel(
        [
            lambda body: [tool_use("Skill", {"skill": "project-memory:ski-memory-manager"})],
            lambda body: [tool_use("Bash", {"command": command_from(body)})],
            lambda body: [text("Saved.")],
        ]
    )
    FakeAnthropic(responder=model)

Each main-conversation request takes the next step; after the last, the default reply.
Helpers read a request: `tool_names(body)`, `last_tool_results(body)` (the tool_result blocks
sent since the last assistant message, with their text), `all_texts(body)` (every text the
model is given).

Run as a script (`python3 fake_anthropic.py --port 8765 --log requests.jsonl`) it serves until
interrupted and appends each request to the log as one JSON line.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fake_server import REPLY_TEXT as REPLY_TEXT
from fake_server import FakeHandler, FakeServer, serve_main
from fake_server import RecordedRequest as RecordedRequest
from fake_server import Responder as Responder

MODEL_FALLBACK = "claude-sonnet-4-5"
JSON_CHUNK = 40  # characters of a tool_use input per input_json_delta event

Block = dict[str, Any]

_tool_ids = itertools.count(1)


# --- building and reading content blocks --------------------------------------------------------


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def tool_use(name: str, tool_input: Mapping[str, Any], id: str | None = None) -> Block:
    return {
        "type": "tool_use",
        "id": id or f"toolu_fake_{next(_tool_ids):06d}",
        "name": name,
        "input": dict(tool_input),
    }


def tool_names(body: Mapping[str, Any]) -> list[str]:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return []
    return [str(t.get("name")) for t in tools if isinstance(t, dict) and "name" in t]


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    found: list[str] = []
    if isinstance(content, list):
        for part in content:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                found.append(part["text"])
            if part.get("type") == "tool_result":
                found.extend(_texts(part.get("content")))
    return found


def all_texts(body: Mapping[str, Any]) -> list[str]:
    """Every text the model is given: system blocks, messages, tool results."""
    found = _texts(body.get("system"))
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict):
            found.extend(_texts(message.get("content")))
    return found


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    is_error: bool
    text: str  # the text parts of its content, joined by newlines


def last_tool_results(body: Mapping[str, Any]) -> list[ToolResult]:
    """The tool_result blocks sent since the last assistant message (the client may add other
    messages after them, such as a reminder in a message of its own)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    results: list[ToolResult] = []
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") == "assistant":
            break
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        found = [
            ToolResult(
                str(part.get("tool_use_id")),
                bool(part.get("is_error")),
                "\n".join(_texts(part.get("content"))),
            )
            for part in content
            if isinstance(part, dict) and part.get("type") == "tool_result"
        ]
        results[:0] = found
    return results


def is_main_conversation(body: Mapping[str, Any]) -> bool:
    """A request of the agent's own loop: it offers the agent's tools (Bash among them)."""
    return "Bash" in tool_names(body)


class ScriptedModel:
    """A responder that plays the main conversation step by step (see the module docstring)."""

    def __init__(
        self,
        steps: Sequence[Responder],
        is_main: Callable[[Mapping[str, Any]], bool] = is_main_conversation,
    ) -> None:
        self._steps = list(steps)
        self._is_main = is_main
        self.answered = 0  # main-conversation requests answered from the steps

    @property
    def done(self) -> bool:
        return self.answered >= len(self._steps)

    def __call__(self, body: dict[str, Any]) -> list[Block] | None:
        if not self._is_main(body) or self.done:
            return None
        step = self._steps[self.answered]
        self.answered += 1
        return step(body)


# --- the wire format ---------------------------------------------------------------------------


def _message(
    model: str, number: int, content: list[Block], input_tokens: int = 10
) -> dict[str, Any]:
    uses_tool = any(block.get("type") == "tool_use" for block in content)
    return {
        "id": f"msg_fake_{number:06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if uses_tool else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": 2,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _block_events(index: int, block: Block) -> list[tuple[str, dict[str, Any]]]:
    if block.get("type") == "tool_use":
        start = dict(block, input={})
        encoded = json.dumps(block.get("input", {}), ensure_ascii=False)
        deltas = [
            {"type": "input_json_delta", "partial_json": encoded[i : i + JSON_CHUNK]}
            for i in range(0, len(encoded), JSON_CHUNK)
        ]
    else:
        start = dict(block, text="")
        deltas = [{"type": "text_delta", "text": str(block.get("text", ""))}]
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
    ]
    events.extend(
        ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        for delta in deltas
    )
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def _sse_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(message["content"]):
        events.extend(_block_events(index, block))
    events.extend(
        [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": message["usage"]["output_tokens"]},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )
    return events


class _Handler(FakeHandler):
    extra_headers = (("request-id", "req_fake"),)

    def answer_post(self, path: str, body: Any, number: int) -> None:
        if path.endswith("/v1/messages/count_tokens"):
            self.send_json(200, {"input_tokens": 100})
        elif path.endswith("/v1/messages"):
            model = MODEL_FALLBACK
            stream = False
            if isinstance(body, dict):
                model = str(body.get("model") or MODEL_FALLBACK)
                stream = bool(body.get("stream"))
            message = _message(model, number, self.reply.parts(body), self.input_tokens)
            if stream:
                self.send_stream(_sse_events(message))
            else:
                self.send_json(200, message)
        else:
            self.send_json(200, {})

    def answer_get(self, path: str) -> None:
        if path.endswith("/v1/models"):
            self.send_json(200, {"data": [], "has_more": False, "first_id": None, "last_id": None})
        else:
            self.send_json(200, {})


class FakeAnthropic(FakeServer):
    """The fake Messages API (fake_server.FakeServer has the lifecycle and the recording)."""

    handler = _Handler
    thread_name = "fake-anthropic"

    def default_reply(self, reply_text: str) -> Block:
        return text(reply_text)

    def message_requests(self) -> list[dict[str, Any]]:
        return self.post_bodies("/v1/messages")


def main(argv: Sequence[str] | None = None) -> int:
    return serve_main(
        argv,
        doc=__doc__,
        port=8765,
        make=FakeAnthropic,
        label="fake Anthropic API",
    )


if __name__ == "__main__":
    raise SystemExit(main())
