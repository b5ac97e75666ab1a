from __future__ import annotations

from typing import Any

import mm_frontmatter
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st


def test_dumps_fences_the_yaml_and_keeps_the_body_byte_for_byte() -> None:
    text = mm_frontmatter.dumps({"b": 1, "a": "x: y"}, "\nbody\n")
    assert text == "---\nb: 1\na: 'x: y'\n---\n\nbody\n"


def test_final_newline_belongs_to_the_body() -> None:
    # The decision: dumps adds nothing after the body, loads takes nothing away from it.
    assert mm_frontmatter.dumps({}, "") == "---\n{}\n---\n"
    assert mm_frontmatter.loads("---\na: 1\n---\nx") == ({"a": 1}, "x")
    assert mm_frontmatter.loads("---\na: 1\n---\nx\n\n") == ({"a": 1}, "x\n\n")
    assert mm_frontmatter.loads("---\na: 1\n---") == ({"a": 1}, "")


@pytest.mark.parametrize(
    ("text", "meta", "body"),
    [
        ("---\n---\nbody", {}, "body"),
        ("---\n\n---\n", {}, ""),
        ("---\r\na: 1\r\n---\r\nbody\r\n", {"a": 1}, "body\n"),
        ("\ufeff---\na: 1\n---\n", {"a": 1}, ""),
        ("---\na: 1\n...\nbody", {"a": 1}, "body"),
        ("---\na: 1\n---  \nbody", {"a": 1}, "body"),
        ("---\na: |\n  ---\n  x\n---\n---\n", {"a": "---\nx\n"}, "---\n"),
    ],
)
def test_loads(text: str, meta: dict[str, Any], body: str) -> None:
    assert mm_frontmatter.loads(text) == (meta, body)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no front matter (the file must start with a '---' line)"),
        ("# title\n---\n", "no front matter (the file must start with a '---' line)"),
        ("---\na: 1\n", "front matter is not closed (no '---' line after it)"),
        (
            "---\na: [1\n---\n",
            "invalid YAML in front matter at line 3: expected ',' or ']', but got '<stream end>'",
        ),
        ("---\n- a\n- b\n---\n", "front matter is a list, not a mapping of keys to values"),
        ("---\njust text\n---\n", "front matter is a str, not a mapping of keys to values"),
        ("---\n1: a\n---\n", "front matter key 1 is not a string"),
        (
            "---\na: !!python/object:os.system x\n---\n",
            "invalid YAML in front matter at line 2: could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object:os.system'",
        ),
        ("---\n" + "[" * 5000 + "\n---\n", "invalid YAML in front matter: nested too deeply"),
    ],
)
def test_loads_errors_are_one_line(text: str, message: str) -> None:
    with pytest.raises(mm_frontmatter.FrontMatterError) as caught:
        mm_frontmatter.loads(text)
    assert str(caught.value) == message


def test_alias_bomb_loads_without_expanding() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    meta, _ = mm_frontmatter.loads("---\n" + "\n".join(lines) + "\n---\n")
    assert len(meta) == 9


_TEXT = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\x85\u2028\u2029\r"),
    max_size=80,
)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


@given(meta=st.dictionaries(_TEXT, _VALUES, max_size=6), body=st.text(max_size=200))
def test_round_trip(meta: dict[str, Any], body: str) -> None:
    body = body.replace("\r", "")
    assert mm_frontmatter.loads(mm_frontmatter.dumps(meta, body)) == (meta, body)


def test_dumps_uses_the_safe_dumper_only() -> None:
    with pytest.raises(yaml.representer.RepresenterError):
        mm_frontmatter.dumps({"a": object()}, "")
