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

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fake_server import REPLY_TEXT as REPLY_TEXT
from fake_server import FakeHandler, FakeServer, serve_main
from fake_server import RecordedRequest as RecordedRequest
from fake_server import Responder as Responder

SHELL_TOOL = "exec_command"  # the shell tool of Codex 0.171.0 (unified exec)

Item = dict[str, Any]

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


def sse_events(number: int, items: Sequence[Item], input_tokens: int = 10) -> list[dict[str, Any]]:
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
                    "input_tokens": input_tokens,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 2,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": input_tokens + 2,
                },
            },
        }
    )
    return events


class _Handler(FakeHandler):
    def answer_post(self, path: str, body: Any, number: int) -> None:
        if path.endswith("/responses"):
            events = sse_events(number, self.reply.parts(body), self.input_tokens)
            self.send_stream([(event["type"], event) for event in events])
        else:
            self.send_json(200, {})

    def answer_get(self, path: str) -> None:
        if path.endswith("/models"):
            self.send_json(200, {"models": [], "data": []})
        else:
            self.send_json(200, {})


class FakeResponses(FakeServer):
    """The fake Responses API (fake_server.FakeServer has the lifecycle and the recording)."""

    handler = _Handler
    thread_name = "fake-responses"

    def default_reply(self, reply_text: str) -> Item:
        return message(reply_text)

    @property
    def base_url(self) -> str:
        """What a Codex model provider's `base_url` is set to."""
        return f"{self.origin}/v1"

    def response_requests(self) -> list[dict[str, Any]]:
        return self.post_bodies("/responses")


def main(argv: Sequence[str] | None = None) -> int:
    return serve_main(
        argv,
        doc=__doc__,
        port=8766,
        make=FakeResponses,
        label="fake Responses API",
    )


if __name__ == "__main__":
    raise SystemExit(main())
