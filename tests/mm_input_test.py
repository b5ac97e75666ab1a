from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ski_memory_manager import mm_input
from ski_memory_manager.mm_errors import CommandError

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
    assert mm_input.parse_yaml_fields(YAML_SAVE) == JSON_SAVE
    import json

    assert mm_input.parse_json_fields(json.dumps(JSON_SAVE)) == JSON_SAVE


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
    assert mm_input.parse_yaml_fields(document) == {"active_state": "\n".join(lines) + "\n"}


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
    with pytest.raises(CommandError) as caught:
        mm_input.parse_yaml_fields(text)
    assert str(caught.value) == message


def test_fields_come_from_one_source() -> None:
    assert mm_input.read_fields(None, None) == {}
    with pytest.raises(CommandError) as caught:
        mm_input.read_fields("-", "-")
    assert str(caught.value) == "give the fields with --input (JSON) or --yaml, not both"
