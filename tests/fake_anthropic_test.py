"""The fake Messages API's scripted-model interface, spoken to over HTTP like the client does."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest
from fake_anthropic import (
    FakeAnthropic,
    ScriptedModel,
    ToolResult,
    is_main_conversation,
    last_tool_results,
    text,
    tool_use,
)

MAIN_TOOLS = [{"name": "Bash", "input_schema": {}}, {"name": "Skill", "input_schema": {}}]
AWKWARD = {"command": 'cat <<\'EOF\'\n{"a": "it\'s $HOME `x` \\\\ é"}\nEOF', "n": [1, 2]}


def _post(server: FakeAnthropic, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(
        f"{server.base_url}/v1/messages",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["Content-Type"], response.read()


def _events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.decode().split("\n\n"):
        if not chunk.strip():
            continue
        name, data = chunk.split("\n")
        assert name.startswith("event: ") and data.startswith("data: ")
        events.append((name[len("event: ") :], json.loads(data[len("data: ") :])))
    return events


def _assemble(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Rebuild the message from its events the way a streaming client does."""
    message: dict[str, Any] = {}
    partial: dict[int, str] = {}
    for name, data in events:
        if name == "message_start":
            message = data["message"]
        elif name == "content_block_start":
            assert data["index"] == len(message["content"])
            message["content"].append(data["content_block"])
        elif name == "content_block_delta":
            block = message["content"][data["index"]]
            delta = data["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            else:
                assert delta["type"] == "input_json_delta" and block["type"] == "tool_use"
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
        elif name == "content_block_stop":
            if data["index"] in partial:
                message["content"][data["index"]]["input"] = json.loads(partial[data["index"]])
        elif name == "message_delta":
            message["stop_reason"] = data["delta"]["stop_reason"]
    return message


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
def test_responder_blocks_reach_the_client_intact(stream: bool) -> None:
    blocks = [text("Running it."), tool_use("Bash", AWKWARD, id="toolu_1")]
    seen: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> list[dict[str, Any]]:
        seen.append(body)
        return blocks

    with FakeAnthropic(responder=responder) as server:
        body = {"model": "m", "stream": stream, "messages": [{"role": "user", "content": "hi"}]}
        kind, raw = _post(server, body)
    assert seen == [body]
    if stream:
        assert kind == "text/event-stream"
        events = _events(raw)
        starts = [d["content_block"] for n, d in events if n == "content_block_start"]
        assert starts[1] == {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
        deltas = [d["delta"] for n, d in events if n == "content_block_delta" and d["index"] == 1]
        assert len(deltas) > 1  # the input arrives in several input_json_delta chunks
        message = _assemble(events)
    else:
        message = json.loads(raw)
    assert message["content"] == blocks
    assert message["stop_reason"] == "tool_use"


def test_default_reply_without_responder_or_when_it_declines_or_fails() -> None:
    def broken(body: dict[str, Any]) -> list[dict[str, Any]]:
        raise ValueError("script bug")

    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with FakeAnthropic() as server:
        plain = json.loads(_post(server, body)[1])
        server.responder = lambda body: None
        declined = json.loads(_post(server, body)[1])
        server.responder = broken
        failed = json.loads(_post(server, body)[1])
        errors = server.responder_errors
    for message in (plain, declined, failed):
        assert message["content"] == [{"type": "text", "text": "Noted."}]
        assert message["stop_reason"] == "end_turn"
    assert [str(e) for e in errors] == ["script bug"]


def test_scripted_model_plays_only_the_main_conversation() -> None:
    model = ScriptedModel(
        [
            lambda body: [tool_use("Skill", {"skill": "s"}, id="toolu_a")],
            lambda body: [text(f"got {[r.text for r in last_tool_results(body)]}")],
        ]
    )
    main = {"model": "m", "tools": MAIN_TOOLS, "messages": [{"role": "user", "content": "go"}]}
    side = {"model": "small", "messages": [{"role": "user", "content": "title this"}]}
    after_tool = dict(
        main,
        messages=[
            *main["messages"],
            {"role": "assistant", "content": [tool_use("Skill", {"skill": "s"}, id="toolu_a")]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_a",
                        "content": [{"type": "text", "text": "Launching"}],
                    }
                ],
            },
        ],
    )
    assert not is_main_conversation(side) and is_main_conversation(main)
    assert model(side) is None
    assert model(main) == [tool_use("Skill", {"skill": "s"}, id="toolu_a")]
    assert model(side) is None
    assert model(after_tool) == [text("got ['Launching']")]
    assert model.done and model(main) is None
    assert model.answered == 2


def test_tool_use_ids_are_unique() -> None:
    ids = {tool_use("Bash", {})["id"] for _ in range(50)}
    assert len(ids) == 50 and all(i.startswith("toolu_fake_") for i in ids)


def test_tool_results_since_the_last_assistant_message() -> None:
    def result(tool_id: str, content: Any, is_error: bool = False) -> dict[str, Any]:
        return {
            "type": "tool_result",
            "tool_use_id": tool_id,
            "content": content,
            "is_error": is_error,
        }

    body = {
        "messages": [
            {"role": "user", "content": [result("old", "before")]},
            {
                "role": "assistant",
                "content": [tool_use("Bash", {}, id="a"), tool_use("Bash", {}, id="b")],
            },
            {"role": "user", "content": [result("a", "one"), {"type": "text", "text": "aside"}]},
            {"role": "user", "content": [result("b", [{"type": "text", "text": "two"}], True)]},
            {"role": "system", "content": [{"type": "text", "text": "a reminder of the client's"}]},
        ]
    }
    assert last_tool_results(body) == [
        ToolResult("a", False, "one"),
        ToolResult("b", True, "two"),
    ]
    assert last_tool_results({"messages": body["messages"][:2]}) == []
    assert last_tool_results({}) == []
