from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import mm_commands
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mm_snapshot import InvalidField

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=timezone.utc)


def test_project_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"CLAUDE_PROJECT_DIR": "/from/env"}
    assert mm_commands.project_dir(env, "/from/hook") == Path("/from/env")
    assert mm_commands.project_dir({}, "/from/hook") == Path("/from/hook")
    assert mm_commands.project_dir({}, None) == tmp_path
    assert mm_commands.project_dir({"CLAUDE_PROJECT_DIR": ""}, "") == tmp_path
    assert mm_commands.project_dir({"CLAUDE_PROJECT_DIR": "a\0b"}, "x\0") == tmp_path


def test_default_memory_dir(capsys: pytest.CaptureFixture[str]) -> None:
    option = "CLAUDE_PLUGIN_OPTION_MEMORY_DIR"
    assert mm_commands.default_memory_dir({"CLAUDE_PROJECT_DIR": "/p"}) == Path("/p/memory")
    assert mm_commands.default_memory_dir({"CLAUDE_PROJECT_DIR": "/p", option: ".mem"}) == Path(
        "/p/.mem"
    )
    assert mm_commands.default_memory_dir({"CLAUDE_PROJECT_DIR": "/p", option: "/abs/m"}) == Path(
        "/abs/m"
    )
    assert mm_commands.default_memory_dir({"CLAUDE_PROJECT_DIR": "/p", option: "  "}) == Path(
        "/p/memory"
    )
    assert capsys.readouterr().err == ""
    assert mm_commands.default_memory_dir({"CLAUDE_PROJECT_DIR": "/p", option: "a\nb"}) == Path(
        "/p/memory"
    )
    assert capsys.readouterr().err == (
        "note: ignoring CLAUDE_PLUGIN_OPTION_MEMORY_DIR (not a path); using memory/\n"
    )


def test_parse_now() -> None:
    assert mm_commands.parse_now("2026-05-04T12:00:00Z") == NOW
    assert mm_commands.parse_now(None).tzinfo is not None
    with pytest.raises(InvalidField) as caught:
        mm_commands.parse_now("tomorrow")
    assert str(caught.value) == (
        "--now must be an ISO 8601 date-time like 2026-05-01T10:00:00Z (got 'tomorrow')"
    )


def test_say_keeps_diagnostics_on_one_inert_line(capsys: pytest.CaptureFixture[str]) -> None:
    mm_commands.say("bad\nvalue <tag> [x | trust:y]\x1b[31m")
    assert capsys.readouterr() == ("", "bad value \u2039tag> (x | trust=y)\n")
    mm_commands.say("mode must be one of: architect, express (got 'ghp_" + "a1" * 18 + "')")
    assert capsys.readouterr().err == (
        "mode must be one of: architect, express (got '[REDACTED]')\n"
    )


def _snapshot(folder: Path, name: str, updated: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(
        f"---\nstatus: in-progress\nlast-checkpoint: CP-S1\nupdated_at: '{updated}'\n---\nbody\n",
        encoding="utf-8",
    )


def test_hook_output_finds_the_project_from_the_hook_cwd(tmp_path: Path) -> None:
    _snapshot(tmp_path / "memory", "2026-05-01-10-00-p.md", "2026-05-04T11:00:00Z")
    block = mm_commands.hook_output({"cwd": str(tmp_path)}, {}, NOW)
    assert block == (
        "[session-memory | trust:file]\n"
        "Resuming `p` (last touched 1 hour ago, status: in-progress at CP-S1)\n\n"
        "---\nstatus: in-progress\nlast-checkpoint: CP-S1\nupdated_at: '2026-05-04T11:00:00Z'\n"
        "---\nbody\n"
    )
    # $CLAUDE_PROJECT_DIR wins over the hook's cwd.
    assert (
        mm_commands.hook_output({"cwd": str(tmp_path)}, {"CLAUDE_PROJECT_DIR": "/nonexistent"}, NOW)
        == ""
    )


@pytest.mark.parametrize("payload", [None, [], "x", 3, {"cwd": 5}, {"cwd": None}])
def test_hook_output_tolerates_any_payload(
    payload: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _snapshot(tmp_path / "memory", "2026-05-01-10-00-p.md", "2026-05-04T11:00:00Z")
    assert mm_commands.hook_output(payload, {}, NOW).startswith("[session-memory | trust:file]\n")


def test_hook_output_ranks_projects_by_last_touched_and_lists_outside_labels(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "shared-memory"
    _snapshot(memory, "2026-05-03-10-00-newest-session.md", "2026-05-03T10:00:00Z")
    _snapshot(memory, "2026-04-01-10-00-touched-later.md", "2026-05-04T10:00:00Z")
    (memory / "2026-05-04-10-00-corrupt.md").write_text("junk", encoding="utf-8")
    env = {
        "CLAUDE_PROJECT_DIR": str(tmp_path / "project"),
        "CLAUDE_PLUGIN_OPTION_MEMORY_DIR": str(memory),
    }
    block = mm_commands.hook_output({}, env, NOW)
    assert block.split("\n")[1:4] == [
        f"Session memory of 2 projects in {memory}:",
        "- Resuming `touched-later` (last touched 2 hours ago, status: in-progress at CP-S1)",
        "- Resuming `newest-session` (last touched 26 hours ago, status: in-progress at CP-S1)",
    ]


# --- save's input: --yaml beside --input -------------------------------------------------------

YAML_SAVE = """\
project_name: billing-api
session_timestamp: 2026-05-01-14-30
checkpoints_approved:
  - CP-S1
checkpoint_decisions:
  CP-S1:
    option: B
    regenerated_count: 1
    note: |
      it's "B": {two} `triggers` at $HOME\\x
steps_completed:
  S1: |
    Mapped the states; 日本
    second line
"""
JSON_SAVE = {
    "project_name": "billing-api",
    "session_timestamp": "2026-05-01-14-30",
    "checkpoints_approved": ["CP-S1"],
    "checkpoint_decisions": {
        "CP-S1": {
            "option": "B",
            "regenerated_count": 1,
            "note": 'it\'s "B": {two} `triggers` at $HOME\\x\n',
        }
    },
    "steps_completed": {"S1": "Mapped the states; 日本\nsecond line\n"},
}


def test_yaml_gives_the_same_fields_as_json() -> None:
    assert mm_commands.parse_yaml_fields(YAML_SAVE) == JSON_SAVE
    import json

    assert mm_commands.parse_json_fields(json.dumps(JSON_SAVE)) == JSON_SAVE


_TEXT_LINE = (
    st.text(
        st.characters(whitelist_categories=("L", "N", "P", "S"), whitelist_characters=" "),
        min_size=1,
    )
    .map(str.strip)
    .filter(bool)
)


@given(st.lists(_TEXT_LINE, min_size=1, max_size=5))
def test_a_literal_block_keeps_any_text_exactly(lines: list[str]) -> None:
    # What SKILL.md promises: inside a `|` block nothing needs quoting or escaping.
    document = "active_state: |\n" + "".join(f"  {line}\n" for line in lines)
    assert mm_commands.parse_yaml_fields(document) == {"active_state": "\n".join(lines) + "\n"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "a: [\n",
            "--yaml: invalid YAML at line 2 column 1: "
            "expected the node content, but found '<stream end>'",
        ),
        (
            "active_state: Next: S2\n",
            "--yaml: invalid YAML at line 1 column 19: mapping values are not allowed here",
        ),
        ("- a\n", "--yaml must be a mapping of fields, one 'name: value' per line"),
        (
            "a: &x 1\nb: *x\n",
            "--yaml: the input uses a YAML anchor or alias",
        ),
        ("session_timestamp: 2026-02-30\n", "--yaml: invalid value: day is out of range for month"),
        ("", "--yaml must be a mapping of fields, one 'name: value' per line"),
    ],
)
def test_yaml_errors_name_the_place(text: str, message: str) -> None:
    with pytest.raises(mm_commands.CommandError) as caught:
        mm_commands.parse_yaml_fields(text)
    assert str(caught.value) == message


def test_fields_come_from_one_source() -> None:
    assert mm_commands.read_fields(None, None) == {}
    with pytest.raises(mm_commands.CommandError) as caught:
        mm_commands.read_fields("-", "-")
    assert str(caught.value) == "give the fields with --input (JSON) or --yaml, not both"
