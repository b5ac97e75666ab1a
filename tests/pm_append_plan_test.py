"""pm_append_plan, the pure part of `add --append`: entries appended to an epic already in the
file, each to its subsection, duplicates skipped, every line already there kept in place."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from project_memory_loader.core import pm_meta_lines, pm_parse
from project_memory_loader.writing import pm_append_plan, pm_epic_input
from project_memory_loader.writing.pm_append_plan import (
    AppendRefused,
    append_entries,
    entry_key,
    epic_named,
)

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)


def entry(**fields: Any) -> pm_epic_input.Entry:
    made, _notes = pm_epic_input.read_entry({"id": "FEAT-1", **fields}, NOW, require_intent=False)
    return made


def appended(text: str, **fields: Any) -> pm_append_plan.Appended:
    made = entry(**fields)
    epic = epic_named(text, made.epic_id)
    assert epic is not None
    return append_entries(text, epic, made)


V1 = """## Epic: FEAT-1 — Webhooks
**Completed:** 2026-08-20T09:00:00Z

### Gotchas discovered
- retries last three days

### Patterns that worked
- store the raw event first
"""

V2 = """## Epic: FEAT-1 — Webhooks
<!-- af-memory:v2 epic=FEAT-1 items=1 completed=2026-08-20T09:00:00Z -->
Webhooks land once.

### Gotchas discovered
- [gotcha] retries last three days
"""

# (name, file text, entry fields, the new text)
CASES = [
    (
        "into-its-subsection",
        V1,
        {"gotchas": ["duplicates arrive"]},
        V1.replace("three days\n", "three days\n- duplicates arrive\n"),
    ),
    (
        "missing-subsection-in-canonical-order",
        V1,
        {"anti_patterns": ["acking before storing"], "decisions": ["one endpoint"]},
        V1.replace(
            "### Gotchas",
            "### Architectural decisions\n- one endpoint\n\n### Gotchas",
        ).replace(
            "### Patterns",
            "### Anti-patterns to avoid\n- acking before storing\n\n### Patterns",
        ),
    ),
    (
        "missing-subsection-at-the-end",
        V1,
        {"conflicts": ["ops vs product"], "tentative": ["maybe batch"]},
        V1
        + "\n### Conflicts encountered\n- ops vs product\n"
        + "\n### Tentative (low confidence \u2014 review)\n- maybe batch\n",
    ),
    (
        "low-confidence-goes-to-tentative-tagged",
        V1,
        {"gotchas": [{"text": "clock skew", "confidence": 0.4}]},
        V1 + "\n### Tentative (low confidence \u2014 review)\n- [gotcha] clock skew"
        " (confidence: 0.40)\n",
    ),
    (
        "v2-entries-are-typed",
        V2,
        {"gotchas": [{"text": "duplicates arrive", "confidence": 0.9}]},
        V2.replace(" items=1 ", " items=2 ") + "- [gotcha] duplicates arrive (confidence: 0.90)\n",
    ),
    (
        "an-empty-subsection-takes-it-under-its-heading",
        "## Epic: FEAT-1 — X\n\n### Gotchas discovered\n\n### Patterns that worked\n- p\n",
        {"gotchas": ["g"]},
        "## Epic: FEAT-1 — X\n\n### Gotchas discovered\n- g\n\n### Patterns that worked\n- p\n",
    ),
    (
        "an-epic-without-subsections-or-final-newline",
        "## Epic: FEAT-1 — X\n**Completed:** 2026-01-01",
        {"patterns": ["p"]},
        "## Epic: FEAT-1 — X\n**Completed:** 2026-01-01\n\n### Patterns that worked\n- p",
    ),
    # Keywords: a new line where add writes it, or the terms appended to the line on file.
    (
        "keywords-v1-after-completed",
        V1,
        {"keywords": ["stripe", "webhooks"]},
        V1.replace("09:00:00Z\n", "09:00:00Z\n**Keywords:** stripe, webhooks\n"),
    ),
    (
        "keywords-v1-without-completed-after-the-heading",
        "## Epic: FEAT-1 — X\n\n### Gotchas discovered\n- g\n",
        {"keywords": ["x"], "gotchas": ["h"]},
        "## Epic: FEAT-1 — X\n**Keywords:** x\n\n### Gotchas discovered\n- g\n- h\n",
    ),
    (
        "keywords-v2-after-the-summary",
        V2,
        {"keywords": ["webhooks"]},
        V2.replace("land once.\n", "land once.\n**Keywords:** webhooks\n"),
    ),
    (
        "keywords-v2-without-summary-after-the-marker",
        V2.replace("Webhooks land once.\n", ""),
        {"keywords": ["webhooks"]},
        V2.replace("Webhooks land once.\n", "**Keywords:** webhooks\n"),
    ),
    (
        "keywords-an-epic-of-one-line",
        "## Epic: FEAT-1 — X",
        {"keywords": ["k"], "patterns": ["p"]},
        "## Epic: FEAT-1 — X\n**Keywords:** k\n\n### Patterns that worked\n- p",
    ),
    (
        "keywords-merged-into-the-line",
        V1.replace("09:00:00Z\n", "09:00:00Z\n**Keywords:** Stripe,  webhooks   \n"),
        {"keywords": ["events", "retries"]},
        V1.replace("09:00:00Z\n", "09:00:00Z\n**Keywords:** Stripe,  webhooks, events, retries\n"),
    ),
    (
        "keywords-merged-into-a-line-as-a-person-wrote-it",
        V2.replace("land once.\n", "land once.\n- **keywords**: stripe,\n"),
        {"keywords": ["events"]},
        V2.replace("land once.\n", "land once.\n- **keywords**: stripe, events\n"),
    ),
    (
        "keywords-merged-before-a-bold-closer",
        V1.replace("09:00:00Z\n", "09:00:00Z\n**Keywords: stripe**\n"),
        {"keywords": ["events"]},
        V1.replace("09:00:00Z\n", "09:00:00Z\n**Keywords: stripe, events**\n"),
    ),
    (
        "keywords-an-empty-line-gets-its-first-terms",
        V1.replace("09:00:00Z\n", "09:00:00Z\n**Keywords:**\n"),
        {"keywords": ["events", "stripe"]},
        V1.replace("09:00:00Z\n", "09:00:00Z\n**Keywords:** events, stripe\n"),
    ),
    (  # a bold line counts in a subsection too; an item goes after it, as after any line
        "keywords-a-line-inside-a-subsection-stays-there",
        V1 + "**Keywords:** a\n",
        {"keywords": ["b"], "patterns": ["p"]},
        V1 + "**Keywords:** a, b\n- p\n",
    ),
    # Paths: a new line after the Keywords line (or where that goes), or globs appended.
    (
        "paths-v1-after-the-keywords-line",
        V1.replace("09:00:00Z\n", "09:00:00Z\n**Keywords:** stripe\n"),
        {"paths": ["billing_api/webhooks/**"]},
        V1.replace(
            "09:00:00Z\n", "09:00:00Z\n**Keywords:** stripe\n**Paths:** billing_api/webhooks/**\n"
        ),
    ),
    (
        "paths-and-keywords-new-together-keywords-first",
        V2,
        {"paths": ["src/**"], "keywords": ["k"]},
        V2.replace("land once.\n", "land once.\n**Keywords:** k\n**Paths:** src/**\n"),
    ),
    (
        "paths-merged-into-the-line",
        V1.replace("09:00:00Z\n", "09:00:00Z\n**Paths:** src/a/**,  \n"),
        {"paths": ["src/a/**", "`src/b.py`"]},
        V1.replace("09:00:00Z\n", "09:00:00Z\n**Paths:** src/a/**, src/b.py\n"),
    ),
    (
        "the-next-epic-and-a-title-stay-put",
        "# T\n\n" + V1 + "\n## Epic: FEAT-2 — Y\n\n### Gotchas discovered\n- y\n",
        {"gotchas": ["z"]},
        "# T\n\n"
        + V1.replace("three days\n", "three days\n- z\n")
        + "\n## Epic: FEAT-2 — Y\n\n### Gotchas discovered\n- y\n",
    ),
]


@pytest.mark.parametrize(
    ("text", "fields", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_append_lays_out(text: str, fields: dict[str, Any], expected: str) -> None:
    result = appended(text, **fields)
    assert result.text == expected
    assert result.skipped == ()
    given_texts = [
        value if isinstance(value, str) else value["text"]
        for field in pm_epic_input.LIST_FIELDS
        for value in fields.get(field, [])
    ]
    assert sorted(item.text for _label, item in result.added) == sorted(given_texts)
    before = epic_named(text, "FEAT-1")
    assert before is not None
    assert result.epic.keywords == (*before.keywords, *(k.text for k in result.keywords))
    assert result.epic.paths == (*before.paths, *result.paths)


def test_keywords_already_there_or_given_twice_are_skipped() -> None:
    text = V1.replace("09:00:00Z\n", "09:00:00Z\n**Keywords:** Stripe, webhooks\n")
    result = appended(text, keywords=["STRIPE", "events", "Events", "web  hooks", "webhooks"])
    assert [k.text for k in result.keywords] == ["events", "web hooks"]
    assert [(s.item.where, s.label, s.item.text) for s in result.skipped] == [
        ("keywords[0]", "keywords", "STRIPE"),
        ("keywords[2]", "keywords", "Events"),
        ("keywords[4]", "keywords", "webhooks"),
    ]
    # All of them there: nothing changes, nothing is rewritten.
    again = append_entries(result.text, result.epic, entry(keywords=["stripe", "EVENTS"]))
    assert (again.text, again.changed, len(again.skipped)) == (result.text, False, 2)


def test_keywords_over_the_line_s_limits_are_left_out_in_order() -> None:
    on_file = ", ".join(f"term {n}" for n in range(38))
    text = V1.replace("09:00:00Z\n", f"09:00:00Z\n**Keywords:** {on_file}\n")
    result = appended(text, keywords=["one", "two", "three"], gotchas=["g"])
    assert [k.text for k in result.keywords] == ["one", "two"]
    assert [k.where for k in result.left_out] == ["keywords[2]"]
    assert len(result.epic.keywords) == pm_meta_lines.MAX_KEYWORDS
    long_terms = ", ".join("k" * 58 + f"{n:02}" for n in range(6))  # 370 characters
    text = V1.replace("09:00:00Z\n", f"09:00:00Z\n**Keywords:** {long_terms}\n")
    result = appended(text, keywords=["x" * 27, "y"])
    assert [k.text for k in result.keywords] == ["x" * 27]  # 399 characters in all
    assert [k.text for k in result.left_out] == ["y"]
    full = appended(text.replace("k" * 58 + "05", "k" * 60), keywords=["z" * 40])
    assert (full.changed, full.text) == (False, text.replace("k" * 58 + "05", "k" * 60))


def test_entries_already_there_are_skipped_case_and_spacing_aside() -> None:
    result = appended(
        V1,
        gotchas=["Retries  LAST three days", "new one", "NEW   one"],
        tentative=["store the raw event first"],
    )
    assert result.text == V1.replace("three days\n", "three days\n- new one\n")
    assert [(s.item.where, s.label) for s in result.skipped] == [
        ("gotchas[0]", "gotchas"),
        ("gotchas[2]", "gotchas"),
        ("tentative[0]", "patterns"),
    ]


def test_nothing_new_returns_the_text_unchanged() -> None:
    result = appended(V1, gotchas=["retries last three days"])
    assert result.text == V1 and result.added == ()


def test_the_key_ignores_case_spacing_and_cleaning() -> None:
    assert entry_key("Stripe  sends\tDUPLICATE events") == entry_key(
        "stripe sends duplicate events"
    )
    assert entry_key("a\u200bb") == entry_key("ab")
    assert entry_key("a b") != entry_key("ab")


def test_an_open_fence_is_refused() -> None:
    text = V1.replace("- store the raw event first\n", "```\n- store the raw event first\n")
    with pytest.raises(AppendRefused, match="nothing was written"):
        appended(text, patterns=["another"])


def test_a_keywords_line_the_terms_would_not_read_back_from_is_refused() -> None:
    # `**Keywords:** *` holds no term; `* events` after it would read back as one term.
    text = V1.replace("09:00:00Z\n", "09:00:00Z\n**Keywords:** *\n")
    with pytest.raises(AppendRefused) as caught:
        appended(text, keywords=["events"], gotchas=["g"])
    assert str(caught.value) == (
        "the loader would not read the keywords appended to FEAT-1 back as written (its "
        "Keywords line, line 3, is unusual: add them to it by hand); nothing was written"
    )


def test_an_epic_twice_in_the_file_is_refused() -> None:
    with pytest.raises(pm_epic_input.DuplicateEpic, match=r"FEAT-1 is in the file 2 times"):
        epic_named(V1 + "\n" + V1, "FEAT-1")
    assert epic_named(V1, "FEAT-9") is None


# Properties: only lines are inserted, nothing on file is lost or reordered, and a repeated
# append changes nothing.

WORD = st.text(st.sampled_from("abcXYZ 0'\"`$\\{}<>|:#-"), min_size=1, max_size=12).filter(
    lambda t: t.strip(" -#") and not t.lstrip().startswith(("#", "-", "`", "<", "["))
)
SUBSECTION = st.tuples(
    st.sampled_from(
        [
            "Architectural decisions",
            "Gotchas discovered",
            "Anti-patterns to avoid",
            "Patterns that worked",
            "Conflicts encountered",
            "Tentative (low confidence \u2014 review)",
            "Cross-cutting concerns",
            "gotchas",
        ]
    ),
    st.lists(WORD, max_size=3),
    st.integers(0, 2),
)
# An epic's Keywords line as people write it, or none.
KEYWORDS_LINE = st.sampled_from(
    [
        None,
        "**Keywords:** abc, X Y",
        "**Keywords:**",
        "- **keywords**: abc,  ",
        "Keywords: b, a",
        "**Keywords: a, b**",
        "**Keywords:** ,, c ,",
    ]
)
EPIC = st.tuples(
    st.booleans(), st.lists(SUBSECTION, max_size=5, unique_by=lambda s: s[0]), KEYWORDS_LINE
)


def epic_text(
    epic_id: str,
    v2: bool,
    subsections: list[tuple[str, list[str], int]],
    keywords: str | None = None,
) -> str:
    lines = [f"## Epic: {epic_id} \u2014 Intent {epic_id}"]
    lines.append(
        f"<!-- af-memory:v2 epic={epic_id} items=1 completed=2026-01-01T00:00:00Z -->\nSummary."
        if v2
        else "**Completed:** 2026-01-01T00:00:00Z"
    )
    if keywords is not None:
        lines.append(keywords)
    for heading, items, blanks in subsections:
        lines.append(f"\n### {heading}")
        lines.extend(f"- {'[gotcha] ' if v2 else ''}{item}" for item in items)
        lines.extend([""] * blanks)
    return "\n".join(lines) + "\n"


FILE = st.tuples(
    st.sampled_from(["", "# Permanent memory\n\nhand-written notes\n\n"]),
    st.lists(EPIC, min_size=1, max_size=3),
    st.sampled_from(["", "\n", "\n\n# After\n"]),
)
ITEM = st.one_of(
    WORD, st.builds(lambda t, c: {"text": t, "confidence": c}, WORD, st.sampled_from([0.3, 0.9]))
)
TERM = st.text(st.sampled_from("abcXYZ 0'`$\\{}<>|:#-*"), max_size=8)
FIELDS = st.fixed_dictionaries(
    {},
    optional={
        **{field: st.lists(ITEM, max_size=3) for field in pm_epic_input.LIST_FIELDS},
        "keywords": st.lists(TERM, max_size=4),
    },
)
Parts = tuple[str, list[tuple[bool, list[Any], "str | None"]], str]


def build_file(parts: Parts) -> str:
    head, epics, tail = parts
    return (
        head
        + "\n".join(epic_text(f"E-{n}", v2, subs, kw) for n, (v2, subs, kw) in enumerate(epics))
        + tail
    )


def is_subsequence(old: list[str], new: list[str]) -> bool:
    found = iter(new)
    return all(any(line == candidate for candidate in found) for line in old)


@given(parts=FILE, fields=FIELDS, which=st.integers(0, 2))
def test_append_only_inserts_lines_and_is_idempotent(
    parts: Parts, fields: dict[str, Any], which: int
) -> None:
    text = build_file(parts)
    epic_id = f"E-{which % len(parts[1])}"
    try:
        made, _notes = pm_epic_input.read_entry(
            {"id": epic_id, **fields}, NOW, require_intent=False
        )
    except pm_epic_input.InvalidEntry:
        return
    epic = epic_named(text, epic_id)
    assert epic is not None
    before = pm_parse.parse_permanent(text)
    result = append_entries(text, epic, made)
    # Every line on file is still there, in the same order, but the epic's Keywords line,
    # which may only grow at its end (before a bold closer), and its v2 marker, whose items=
    # count grows by the items added.
    old_lines, new_lines = text.split("\n"), result.text.split("\n")
    changed = epic.keywords_line if result.keywords else None
    marker = epic.marker_lines[0] if result.added and epic.marker_lines else None
    kept = [line for n, line in enumerate(old_lines) if n not in (changed, marker)]
    if marker is not None and " items=" in old_lines[marker]:
        count = int(old_lines[marker].split(" items=")[1].split()[0])
        assert f" items={count + len(result.added)} " in result.text
    assert is_subsequence(kept, new_lines)
    assert len(new_lines) >= len(old_lines) + (1 if result.keywords and changed is None else 0)
    if changed is not None:
        grown = old_lines[changed].rstrip(" \t").rstrip("*").rstrip(" \t,")
        assert [line for line in new_lines if line not in kept and line.startswith(grown)]
    after = pm_parse.parse_permanent(result.text)
    assert [e.epic_id for e in after] == [e.epic_id for e in before]
    for old, new in zip(before, after):
        new_entries = {(s.label, s.heading): s.entries for s in new.subsections}
        for sub in old.subsections:  # each subsection's entries come first, unchanged
            assert new_entries[(sub.label, sub.heading)][: len(sub.entries)] == sub.entries
        if old.epic_id != epic_id:
            assert (new.subsections, new.keywords) == (old.subsections, old.keywords)
        else:  # the old terms, then exactly the new ones
            assert new.keywords == (*old.keywords, *(k.text for k in result.keywords))
    # Every item and term is in the epic now, written, skipped or (a term) left out; skipped
    # ones were there already.
    mine = next(e for e in after if e.epic_id == epic_id)
    held = {entry_key(t) for sub in mine.subsections for t in sub.entries}
    assert {entry_key(item.text) for item in made.items} <= held
    given = len(made.items) + len(made.keywords) + len(made.repeated_keywords)
    assert (
        len(result.added) + len(result.keywords) + len(result.left_out) + len(result.skipped)
        == given
    )
    terms = {entry_key(t) for t in mine.keywords}
    assert {entry_key(k.text) for k in made.keywords if k not in result.left_out} <= terms
    # Again: nothing changes.
    again = append_entries(result.text, mine, made)
    assert again.text == result.text
    assert (again.added, again.keywords) == ((), ())
    assert len(again.skipped) + len(again.left_out) == given


def test_globs_already_there_or_given_twice_are_skipped_and_over_the_limit_left_out() -> None:
    text = V1.replace("09:00:00Z\n", "09:00:00Z\n**Paths:** src/a/**\n")
    result = appended(text, paths=["src/a/**", "src/b/**", "src/b/**"])
    assert (result.paths, result.paths_skipped, result.paths_left_out) == (
        ("src/b/**",),
        ("src/b/**", "src/a/**"),
        (),
    )
    full = V1.replace(
        "09:00:00Z\n", "09:00:00Z\n**Paths:** " + ", ".join(f"g{n}/**" for n in range(40)) + "\n"
    )
    over = appended(full, paths=["h/**"], gotchas=["g2"])
    assert (over.paths, over.paths_left_out, over.changed) == ((), ("h/**",), True)
    assert over.epic.paths == tuple(f"g{n}/**" for n in range(40))
    nothing = appended(full, paths=["g0/**"])
    assert (nothing.changed, nothing.text) == (False, full)
