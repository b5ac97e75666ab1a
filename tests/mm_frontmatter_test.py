from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from ski_memory_manager import mm_frontmatter
from support import SNAP_HEAD, SNAPSHOT_FRAGMENTS, fuzz_doc


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
            "invalid YAML in front matter at line 3: expected ',' or ']', but got the end of "
            "the front matter",
        ),
        ("---\n- a\n- b\n---\n", "front matter is a list, not a mapping of keys to values"),
        ("---\njust text\n---\n", "front matter is a str, not a mapping of keys to values"),
        ("---\n1: a\n---\n", "front matter key 1 is not a string"),
        (
            "---\na: !!python/object:os.system x\n---\n",
            "invalid YAML in front matter at line 2: could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object:os.system'",
        ),
        ("---\n" + "[" * 5000 + "\n---\n", "front matter nests deeper than 16 levels"),
        (
            "---\na:" + " [" * 400 + "x" + "]" * 400 + "\n---\n",
            "front matter nests deeper than 16 levels",
        ),
        # The reader refuses an unprintable character as the loader is made, before parsing.
        (
            "---\n\x08\n---\n",
            "invalid YAML in front matter: unacceptable character #x0008: special characters are"
            " not allowed",
        ),
        (
            "---\na: &x 1\n---\n",
            "front matter uses a YAML anchor or alias at line 2 (& or *); snapshots have none",
        ),
        # Values PyYAML resolves by their shape but cannot build.
        (
            "---\nupdated_at: 2026-02-30\n---\n",
            "invalid value in front matter: day is out of range for month",
        ),
        (
            "---\nat: 2026-01-01 25:00:00\n---\n",
            "invalid value in front matter: hour must be in 0..23",
        ),
        (
            "---\nat: 2026-01-01T10:00:00+99:00\n---\n",
            "invalid value in front matter: offset must be a timedelta strictly between"
            " -timedelta(hours=24) and timedelta(hours=24), not"
            " datetime.timedelta(days=4, seconds=10800).",
        ),
        (
            "---\nn: " + "9" * 4301 + "\n---\n",
            "invalid value in front matter: Exceeds the limit (4300 digits) for integer string"
            " conversion: value has 4301 digits; use sys.set_int_max_str_digits() to increase the"
            " limit",
        ),
    ],
)
def test_loads_errors_are_one_line(text: str, message: str) -> None:
    with pytest.raises(mm_frontmatter.FrontMatterError) as caught:
        mm_frontmatter.loads(text)
    assert str(caught.value) == message


# Anchors and aliases are refused as they are composed, so no PyYAML version gets to expand
# them: `save` never writes one, and versions that expand nested merge keys (`<<: *a`) copy
# every level again (600 bytes became 700 MB).
ALIAS_BOMBS = {
    "aliases": ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)],
    "nested merge keys": ["m0: &m0 {k: v}"]
    + [f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * 4)}], k{i}: v}}" for i in range(1, 20)],
    "alias first": ["a: *nowhere"],
}


@pytest.mark.parametrize("bomb", sorted(ALIAS_BOMBS))
def test_anchors_and_aliases_are_refused_before_construction(bomb: str) -> None:
    import time

    started = time.perf_counter()
    with pytest.raises(mm_frontmatter.FrontMatterError) as caught:
        mm_frontmatter.loads("---\n" + "\n".join(ALIAS_BOMBS[bomb]) + "\n---\n")
    assert time.perf_counter() - started < 1.0  # generous: it stops at the first anchor
    assert str(caught.value) == (
        "front matter uses a YAML anchor or alias at line 2 (& or *); snapshots have none"
    )


# Front matter built from the pieces hostile YAML is made of: whatever comes of them, loads
# returns or raises FrontMatterError, never anything else.
_YAML_PIECES = st.sampled_from(
    [
        "a",
        ": ",
        "\n",
        "  ",
        "- ",
        "[",
        "]",
        "{",
        "}",
        ", ",
        "&x ",
        "*x",
        "<<: ",
        "!!int ",
        "!!timestamp ",
        "!!binary ",
        "!!python/object:os.system ",
        "2026-02-30",
        "25:00:00",
        "+99:00",
        "9" * 4301,
        "1e999",
        "0x",
        "~",
        "? ",
        "|",
        ">",
        "'",
        '"',
        "\\x",
        "%TAG ",
        "---",
        "...",
        "\t",
        "#",
    ]
)


@given(st.lists(_YAML_PIECES, max_size=30).map("".join))
def test_any_front_matter_loads_or_raises_front_matter_error(yaml_text: str) -> None:
    try:
        meta, _ = mm_frontmatter.loads("---\n" + yaml_text + "\n---\n")
    except mm_frontmatter.FrontMatterError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(meta, dict)


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


# Fuzzing: any document, well formed or not.


@given(st.one_of(fuzz_doc(SNAPSHOT_FRAGMENTS, SNAP_HEAD), st.text()))
def test_front_matter_loads_raises_only_its_error(text: str) -> None:
    fm = mm_frontmatter
    try:
        meta, body = fm.loads(text)
    except fm.FrontMatterError:
        return
    assert isinstance(meta, dict) and isinstance(body, str)
