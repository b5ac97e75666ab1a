"""pm_merge: the three-way, epic-by-epic merge of permanent_memory.md (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from project_memory_loader.core.pm_parse import parse_permanent
from project_memory_loader.core.pm_render import Budget
from project_memory_loader.reading.pm_findings import ERROR, check_text
from project_memory_loader.writing import pm_merge, pm_merge_items, pm_merge_sets
from project_memory_loader.writing.pm_append_plan import append_entries, entry_key
from project_memory_loader.writing.pm_epic_input import Entry, Keyword
from project_memory_loader.writing.pm_merge import merge_permanent
from project_memory_loader.writing.pm_merge_items import merge_items
from support import estimate

HEAD = "# Permanent memory\n\nNotes for the team.\n"


def epic(
    epic_id: str,
    day: int,
    gotchas: tuple[str, ...] = ("g",),
    decisions: str = "d",
    keywords: str | None = None,
) -> str:
    lines = [
        f"## Epic: {epic_id} \u2014 intent of {epic_id}",
        f"**Completed:** 2026-01-{day:02d}T00:00:00Z",
        *([] if keywords is None else [f"**Keywords:** {keywords}"]),
        "",
        "### Architectural decisions",
        f"- {decisions}",
        "",
        "### Gotchas discovered",
        *(f"- {text}" for text in gotchas),
    ]
    return "\n".join(lines) + "\n"


def join(*parts: str) -> str:
    return "\n\n".join(part.rstrip("\n") for part in parts if part.strip()) + "\n"


def ids(text: str) -> list[str]:
    return [e.epic_id for e in parse_permanent(text)]


def errors(text: str) -> list[str]:
    report = check_text(text, estimate, estimate, Budget())
    return [f"{f.line}: {f.message}" for f in report.findings if f.level == ERROR]


BASE = join(HEAD, epic("FEAT-1", 1), epic("FEAT-2", 5))


def test_both_sides_add_epics_ordered_by_completion() -> None:
    ours = join(BASE, epic("FEAT-4", 20))
    theirs = join(BASE, epic("FEAT-3", 10), epic("FEAT-5", 30))
    merged = merge_permanent(BASE, ours, theirs)
    assert merged == pm_merge.Merged(
        join(BASE, epic("FEAT-3", 10), epic("FEAT-4", 20), epic("FEAT-5", 30)), 0, ()
    )
    assert errors(merged.text) == []


def test_one_side_only_takes_that_change_exactly() -> None:
    ours = BASE.replace("- d\n", "- d, revised\n", 1)
    assert merge_permanent(BASE, ours, BASE).text == ours
    assert merge_permanent(BASE, BASE, ours).text == ours
    assert merge_permanent(BASE, ours, ours).text == ours


def test_ours_is_kept_byte_for_byte_when_theirs_brings_nothing() -> None:
    ours = BASE.replace("\n## Epic: FEAT-2", "\n\n\n## Epic: FEAT-2")  # odd spacing stays
    assert merge_permanent(BASE, ours, BASE).text == ours


def test_same_epic_changed_in_different_subsections_merges_cleanly() -> None:
    ours = BASE.replace("- d\n", "- d from ours\n", 1)
    theirs = join(HEAD, epic("FEAT-1", 1, gotchas=("g", "g2 from theirs")), epic("FEAT-2", 5))
    merged = merge_permanent(BASE, ours, theirs)
    expected = join(
        HEAD,
        epic("FEAT-1", 1, gotchas=("g", "g2 from theirs"), decisions="d from ours"),
        epic("FEAT-2", 5),
    )
    assert merged == pm_merge.Merged(expected, 0, ())


def test_both_append_to_the_same_subsection_keeps_both_ours_first() -> None:
    ours = join(HEAD, epic("FEAT-1", 1, gotchas=("g", "mine")), epic("FEAT-2", 5))
    theirs = join(HEAD, epic("FEAT-1", 1, gotchas=("g", "yours")), epic("FEAT-2", 5))
    merged = merge_permanent(BASE, ours, theirs)
    assert merged.clashes == 0
    assert merged.text == join(
        HEAD, epic("FEAT-1", 1, gotchas=("g", "mine", "yours")), epic("FEAT-2", 5)
    )


def test_a_true_clash_keeps_markers_inside_that_epic_only() -> None:
    ours = BASE.replace("- d\n", "- d by ours\n", 1)
    theirs = BASE.replace("- d\n", "- d by theirs\n", 1)
    merged = merge_permanent(BASE, ours, theirs)
    assert merged.clashes == 1
    assert merged.notes == ("FEAT-1: changed on both sides; 1 conflict(s) left",)
    lines = merged.text.split("\n")
    start = lines.index("<<<<<<< ours")
    assert lines[start - 1 : start + 6] == [
        "### Architectural decisions",
        "<<<<<<< ours",
        "- d by ours",
        "=======",
        "- d by theirs",
        ">>>>>>> theirs",
        "",
    ]
    [first, _] = parse_permanent(merged.text)
    assert first.start_line < start < first.end_line  # inside FEAT-1
    assert merged.text.endswith(epic("FEAT-2", 5))  # the other epic untouched
    found = errors(merged.text)
    assert [line.split(":")[0] for line in found] == [str(start + 1 + i) for i in (0, 2, 4)]
    assert all("unresolved merge conflict" in line for line in found)


def test_heading_clash_does_not_start_a_new_section() -> None:
    ours = BASE.replace("intent of FEAT-1", "ours intent", 1)
    theirs = BASE.replace("intent of FEAT-1", "theirs intent", 1)
    merged = merge_permanent(BASE, ours, theirs)
    assert merged.clashes == 1
    assert ids(merged.text) == ["FEAT-1", "FEAT-2"]
    assert "<<<<<<< ours\nEpic: FEAT-1 \u2014 ours intent\n=======\nEpic: FEAT-1 \u2014 theirs" in (
        merged.text
    )


def test_removed_on_one_side_changed_on_the_other_is_kept_and_reported() -> None:
    archived = join(HEAD, epic("FEAT-2", 5))
    changed = BASE.replace("- d\n", "- d, revised\n", 1)
    for ours, theirs, gone, kept in (
        (archived, changed, "ours", "theirs"),
        (changed, archived, "theirs", "ours"),
    ):
        merged = merge_permanent(BASE, ours, theirs)
        assert merged.clashes == 0
        assert ids(merged.text) == ["FEAT-1", "FEAT-2"]
        assert "- d, revised" in merged.text
        assert merged.notes == (
            f"FEAT-1: removed on {gone} (archived or deleted) but changed on {kept}; "
            "kept the changed epic",
        )


def test_removed_on_one_side_unchanged_on_the_other_is_removed() -> None:
    archived = join(HEAD, epic("FEAT-2", 5))
    theirs = join(BASE, epic("FEAT-3", 9))
    merged = merge_permanent(BASE, archived, theirs)
    assert merged == pm_merge.Merged(join(HEAD, epic("FEAT-2", 5), epic("FEAT-3", 9)), 0, ())


def test_preamble_edits_merge_and_are_never_lost() -> None:
    ours = BASE.replace("Notes for the team.", "Notes for the team.\nOurs too.")
    theirs = BASE.replace("# Permanent memory", "# Permanent memory (billing)")
    merged = merge_permanent(BASE, ours, theirs)
    assert merged.clashes == 0
    assert merged.text.startswith("# Permanent memory (billing)\n\nNotes for the team.\nOurs too.")
    # Text both sides inserted is kept, ours first; there is nothing it replaced to clash over.
    assert merge_permanent("", "just notes\n", "other notes\n") == pm_merge.Merged(
        "just notes\nother notes\n", 0, ()
    )


def test_a_section_after_an_epic_is_merged_with_it() -> None:
    notes = "## Notes\n- ask finance about rounding\n"
    base = join(HEAD, epic("FEAT-1", 1), notes, epic("FEAT-2", 5))
    ours = base.replace("rounding\n", "rounding\n- and about refunds\n")
    theirs = base.replace("- d\n", "- d, revised\n", 1)
    merged = merge_permanent(base, ours, theirs)
    assert merged.clashes == 0
    assert merged.text == join(
        HEAD,
        epic("FEAT-1", 1, decisions="d, revised"),
        notes + "- and about refunds\n",
        epic("FEAT-2", 5),
    )


def test_no_common_ancestor_both_added_the_file() -> None:
    ours = join(HEAD, epic("FEAT-1", 1))
    theirs = join(HEAD, epic("FEAT-9", 2))
    merged = merge_permanent("", ours, theirs)
    assert (merged.clashes, ids(merged.text)) == (0, ["FEAT-1", "FEAT-9"])


def test_duplicate_ids_on_a_side_are_both_kept() -> None:
    ours = join(BASE, epic("FEAT-1", 7, decisions="second copy"))
    merged = merge_permanent(BASE, ours, join(BASE, epic("FEAT-3", 9)))
    assert ids(merged.text) == ["FEAT-1", "FEAT-2", "FEAT-1", "FEAT-3"]


V2_BASE = join(
    HEAD,
    "## Epic: FEAT-7 \u2014 invoice numbers\n"
    "<!-- af-memory:v2 epic=FEAT-7 confidence=0.80 items=2 -->\n"
    "A counter row per tenant.\n\n"
    "### Architectural decisions\n"
    "- [decision] one counter row per tenant (confidence: 0.90)\n\n"
    "### Gotchas discovered\n"
    "- [gotcha] a rollback still uses up its number (confidence: 0.70)\n",
)


def test_v2_both_sides_add_entries_items_recounted_lower_confidence() -> None:
    ours = V2_BASE.replace("items=2", "items=3").replace(
        "(confidence: 0.90)\n",
        "(confidence: 0.90)\n- [decision] gaps allowed, reuse never (confidence: 0.8)\n",
    )
    theirs = (
        V2_BASE.replace("items=2", "items=3")
        .replace("confidence=0.80", "confidence=0.75")
        .replace(
            "(confidence: 0.70)\n",
            "(confidence: 0.70)\n- [gotcha] month-end hot spot (confidence: 0.6)\n",
        )
    )
    merged = merge_permanent(V2_BASE, ours, theirs)
    assert merged.clashes == 0
    assert (
        "<!-- af-memory:v2 epic=FEAT-7 confidence=0.75 items=4 -->\nA counter row per tenant.\n"
        in merged.text
    )
    assert "gaps allowed, reuse never" in merged.text and "month-end hot spot" in merged.text
    [parsed] = parse_permanent(merged.text)
    assert (parsed.schema, parsed.summary) == (2, "A counter row per tenant.")


def test_completed_changed_differently_clashes_inside_the_epic() -> None:
    ours = BASE.replace("2026-01-01T00", "2026-01-02T00")
    theirs = BASE.replace("2026-01-01T00", "2026-01-03T00")
    merged = merge_permanent(BASE, ours, theirs)
    assert merged.clashes == 1
    assert "<<<<<<< ours\n**Completed:** 2026-01-02T00:00:00Z\n=======\n" in merged.text


@pytest.mark.parametrize(
    ("base", "ours", "theirs", "expected", "clashes"),
    [
        ("abc", "abc", "abc", "abc", 0),
        ("abc", "aXc", "abc", "aXc", 0),
        ("abc", "abc", "abYc", "abYc", 0),
        ("abc", "Xabc", "abcY", "XabcY", 0),
        ("abc", "abcX", "abcY", "abcXY", 0),  # both appended: both kept
        ("abc", "abcX", "abcX", "abcX", 0),
        ("abc", "aXc", "aYc", "a<X=Y>c", 1),
        ("abc", "ac", "aYc", "a<=Y>c", 1),  # removed against changed
        ("abc", "ac", "ac", "ac", 0),
    ],
)
def test_merge_items(base: str, ours: str, theirs: str, expected: str, clashes: int) -> None:
    items, found = merge_items(list(base), list(ours), list(theirs))
    shown = "".join(items).replace(pm_merge_items.OURS_MARK, "<")
    shown = shown.replace(pm_merge_items.SPLIT_MARK, "=").replace(pm_merge_items.THEIRS_MARK, ">")
    assert (shown, found) == (expected, clashes)


def test_long_runs_changed_on_both_sides_clash_whole_rather_than_align_slowly() -> None:
    base = [f"line {n}" for n in range(pm_merge_items.MAX_ALIGNED + 1)]
    ours, theirs = [*base, "ours"], ["theirs", *base]
    items, clashes = merge_items(base, ours, theirs)
    assert (items, clashes) == (
        [
            pm_merge_items.OURS_MARK,
            *ours,
            pm_merge_items.SPLIT_MARK,
            *theirs,
            pm_merge_items.THEIRS_MARK,
        ],
        1,
    )
    assert merge_items(base, ours, base) == (ours, 0)  # one side changed: no alignment needed


# --- the Keywords line: one set of terms ------------------------------------------------------

KW = "**Keywords:**"
THEIRS = pm_merge_items.THEIRS_MARK


@pytest.mark.parametrize(
    ("base", "ours", "theirs", "expected"),
    [
        # Both appended: ours' terms, then theirs' new ones; one already there is not repeated,
        # case and runs of spaces aside.
        (f"{KW} a, b", f"{KW} a, b, DST", f"{KW} a, b, c, dst", [f"{KW} a, b, DST, c"]),
        (
            f"{KW} luxon",
            f"{KW} luxon, Time Zones",
            f"{KW} luxon, time   zones, UTC",
            [f"{KW} luxon, Time Zones, UTC"],
        ),
        # Both added the line: one line, in ours' form (list marker, bold closer, spacing).
        (None, f"{KW} a, b", f"- {KW} B, c", [f"{KW} a, b, c"]),
        (None, "- **Keywords: a,  b**", f"{KW} c, A", ["- **Keywords: a,  b, c**"]),
        (None, f"{KW} a,", f"{KW} b", [f"{KW} a, b"]),
        (None, KW, f"{KW} b", [f"{KW} b"]),
        # One side only, or both the same: that line exactly.
        (f"{KW} a", f"{KW} a", f"{KW}  a,  x", [f"{KW}  a,  x"]),
        (f"{KW} a", f"- {KW} a, x", f"{KW} a", [f"- {KW} a, x"]),
        (None, None, f"{KW} x", [f"{KW} x"]),
        (f"{KW} a", f"{KW} a, x", f"{KW} a, x", [f"{KW} a, x"]),
        (f"{KW} a", None, f"{KW} a", []),  # removed on one side, unchanged on the other
        # A term one side removed and the other kept is removed.
        (f"{KW} a, b", f"{KW} a, b, c", f"{KW} b", [f"{KW} b, c"]),
        (f"{KW} a, b", "- **Keywords: b**", f"{KW} a, b, c", ["- **Keywords: b, c**"]),
        (f"{KW} a, b", f"{KW} a", f"{KW} b", [KW]),
        # The line removed on one side: what the other added stays.
        (f"{KW} a", None, f"{KW} a, x", [f"{KW} x"]),
        (f"{KW} a, b", f"{KW} a, b, y", None, [f"{KW} y"]),
        (f"{KW} a, b", None, f"{KW} a", []),
        # A line that would not read back as those terms is left to the person.
        (
            f"{KW} a",
            f"{KW} a, b",
            f"{KW} c**, a",
            [
                pm_merge_items.OURS_MARK,
                f"{KW} a, b",
                pm_merge_items.SPLIT_MARK,
                f"{KW} c**, a",
                THEIRS,
            ],
        ),
    ],
)
def test_merge_keywords(
    base: str | None, ours: str | None, theirs: str | None, expected: list[str]
) -> None:
    assert pm_merge_sets.merge_set_line(pm_merge_sets.KEYWORDS, base, ours, theirs) == (
        expected,
        int(len(expected) > 1),
    )


KW_BASE = join(HEAD, epic("FEAT-1", 1, keywords="luxon, time zones"), epic("FEAT-2", 5))


def test_both_sides_append_keywords_one_line_ours_terms_then_theirs() -> None:
    ours = join(
        HEAD,
        epic("FEAT-1", 1, keywords="luxon, time zones, DST"),
        epic("FEAT-2", 5, keywords="refunds, invoices"),
    )
    theirs = join(
        HEAD,
        epic("FEAT-1", 1, keywords="luxon, time zones, utc offset, dst"),
        epic("FEAT-2", 5, keywords="Invoices, credit notes"),
    )
    assert merge_permanent(KW_BASE, ours, theirs) == pm_merge.Merged(
        join(
            HEAD,
            epic("FEAT-1", 1, keywords="luxon, time zones, DST, utc offset"),
            epic("FEAT-2", 5, keywords="refunds, invoices, credit notes"),
        ),
        0,
        (),
    )


def test_keywords_merge_beside_other_changes_to_the_epic() -> None:
    ours = join(HEAD, epic("FEAT-1", 1, decisions="d from ours", keywords="luxon, time zones, DST"))
    theirs = join(HEAD, epic("FEAT-1", 1, ("g", "g2"), keywords="luxon, time zones, utc"))
    base = join(HEAD, epic("FEAT-1", 1, keywords="luxon, time zones"))
    merged = merge_permanent(base, ours, theirs)
    assert merged == pm_merge.Merged(
        join(HEAD, epic("FEAT-1", 1, ("g", "g2"), "d from ours", "luxon, time zones, DST, utc")),
        0,
        (),
    )
    # Only theirs touched the line: theirs' line exactly, ours' other change kept.
    ours = join(HEAD, epic("FEAT-1", 1, decisions="d from ours", keywords="luxon, time zones"))
    assert merge_permanent(base, ours, theirs).text == join(
        HEAD, epic("FEAT-1", 1, ("g", "g2"), "d from ours", "luxon, time zones, utc")
    )


def test_v2_both_sides_add_a_keywords_line_after_the_summary() -> None:
    base = join(HEAD, v2_epic("FEAT-7", 3, ("a",), "A counter row per tenant."))
    ours = join(HEAD, v2_epic("FEAT-7", 3, ("a",), "A counter row per tenant.", "invoices, gaps"))
    theirs = join(
        HEAD, v2_epic("FEAT-7", 3, ("a", "b"), "A counter row per tenant.", "numbering, Gaps")
    )
    theirs = theirs.replace("items=1", "items=2")
    merged = merge_permanent(base, ours, theirs)
    expected = join(
        HEAD,
        v2_epic("FEAT-7", 3, ("a", "b"), "A counter row per tenant.", "invoices, gaps, numbering"),
    )
    assert merged == pm_merge.Merged(expected.replace("items=1", "items=2"), 0, ())
    [parsed] = parse_permanent(merged.text)
    assert parsed.keywords == ("invoices", "gaps", "numbering")
    assert parsed.summary == "A counter row per tenant."


def test_a_clash_elsewhere_in_the_epic_stays_as_it_was_keywords_merged() -> None:
    ours = KW_BASE.replace("- d\n", "- d by ours\n", 1).replace("time zones", "time zones, DST")
    theirs = KW_BASE.replace("- d\n", "- d by theirs\n", 1).replace("time zones", "time zones, utc")
    merged = merge_permanent(KW_BASE, ours, theirs)
    assert merged == pm_merge.Merged(
        KW_BASE.replace("time zones", "time zones, DST, utc").replace(
            "- d\n",
            "<<<<<<< ours\n- d by ours\n=======\n- d by theirs\n>>>>>>> theirs\n",
            1,
        ),
        1,
        ("FEAT-1: changed on both sides; 1 conflict(s) left",),
    )


def test_keywords_inside_a_clash_of_the_lines_around_them_clash_as_before() -> None:
    base = join(HEAD, v2_epic("FEAT-7", 3, ("a",), "The summary."))
    ours = join(HEAD, v2_epic("FEAT-7", 3, ("a",), "Ours' summary.", "x"))
    theirs = join(HEAD, v2_epic("FEAT-7", 3, ("a",), "Theirs' summary.", "y"))
    merged = merge_permanent(base, ours, theirs)
    assert merged.clashes == 1
    assert (
        "<<<<<<< ours\nOurs' summary.\n**Keywords:** x\n=======\nTheirs' summary.\n"
        "**Keywords:** y\n>>>>>>> theirs\n" in merged.text
    )


def test_a_keywords_line_removed_on_one_side_goes_where_add_writes_it() -> None:
    ours = KW_BASE.replace("**Keywords:** luxon, time zones\n", "").replace(
        "- g\n", "- g, ours\n", 1
    )
    theirs = KW_BASE.replace("time zones", "time zones, utc")
    merged = merge_permanent(KW_BASE, ours, theirs)
    assert merged.text == ours.replace(
        "**Completed:** 2026-01-01T00:00:00Z\n",
        "**Completed:** 2026-01-01T00:00:00Z\n**Keywords:** utc\n",
    )


# --- property: no epic ID is ever lost ----------------------------------------------------------

IDS = [f"E-{n}" for n in range(8)]
ENTRY = st.sampled_from(["alpha", "beta", "gamma", "delta", "x " * 3, "[gotcha] typed"])


def v2_epic(
    epic_id: str, day: int, gotchas: tuple[str, ...], summary: str, keywords: str | None = None
) -> str:
    lines = [
        f"## Epic: {epic_id} \u2014 intent of {epic_id}",
        f"<!-- af-memory:v2 epic={epic_id} confidence=0.80 items={len(gotchas)} "
        f"completed=2026-01-{day:02d}T00:00:00Z -->",
        summary,
        *([] if keywords is None else [f"**Keywords:** {keywords}"]),
        "",
        "### Gotchas discovered",
        *(f"- [gotcha] {text} (confidence: 0.75)" for text in gotchas),
    ]
    return "\n".join(lines) + "\n"


# Terms that are the same one case and spacing aside, and others.
TERM = st.sampled_from(["luxon", "Luxon", "time zones", "time  Zones", "DST", "utc", "moment"])
KEYWORDS_LINE = st.none() | st.lists(TERM, max_size=4).map(", ".join)


@st.composite
def epic_texts(draw: st.DrawFn, epic_id: str) -> str:
    gotchas = tuple(draw(st.lists(ENTRY, max_size=3)))
    form = epic if draw(st.booleans()) else v2_epic
    return form(epic_id, draw(st.integers(1, 28)), gotchas, draw(ENTRY), draw(KEYWORDS_LINE))


def with_term(text: str, term: str) -> str:
    """The epic's text after `add --append` gave it one more keyword."""
    [parsed] = parse_permanent(text)
    entry = Entry(parsed.epic_id, "", "", (), keywords=(Keyword(0, term),))
    return append_entries(text, parsed, entry).text


@st.composite
def files(draw: st.DrawFn) -> dict[str, str]:
    chosen = draw(st.lists(st.sampled_from(IDS), unique=True, max_size=5))
    return {epic_id: draw(epic_texts(epic_id)) for epic_id in chosen}


@st.composite
def edited(draw: st.DrawFn, base: dict[str, str]) -> dict[str, str]:
    side = dict(base)
    for epic_id in list(side):
        action = draw(st.sampled_from(["keep", "keep", "drop", "change", "entry", "keywords"]))
        if action == "drop":
            del side[epic_id]
        elif action == "change":
            side[epic_id] = draw(epic_texts(epic_id))
        elif action == "entry":
            side[epic_id] = side[epic_id] + f"- {draw(ENTRY)}\n"
        elif action == "keywords":
            for term in draw(st.lists(TERM, min_size=1, max_size=2)):
                side[epic_id] = with_term(side[epic_id], term)
    for epic_id in draw(st.lists(st.sampled_from(IDS), unique=True, max_size=3)):
        if epic_id not in side:
            side[epic_id] = draw(epic_texts(epic_id))
    return side


def render(epics: dict[str, str], preamble: str) -> str:
    return join(preamble, *epics.values()) if epics else preamble


@st.composite
def merges(draw: st.DrawFn) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    base = draw(files())
    return base, draw(edited(base)), draw(edited(base))


def terms_of(text: str) -> set[str]:
    return {entry_key(term) for epic in parse_permanent(text) for term in epic.keywords}


@settings(max_examples=300, deadline=None)
@given(merges(), st.sampled_from([HEAD, "", "# Memory\n"]))
def test_no_epic_id_is_ever_lost(
    case: tuple[dict[str, str], dict[str, str], dict[str, str]], preamble: str
) -> None:
    base, ours, theirs = case
    merged = merge_permanent(render(base, HEAD), render(ours, preamble), render(theirs, HEAD))
    found = ids(merged.text)
    for epic_id in set(ours) | set(theirs):
        removed = epic_id in base and (
            (epic_id not in ours and theirs.get(epic_id) == base[epic_id])
            or (epic_id not in theirs and ours.get(epic_id) == base[epic_id])
            or (epic_id not in ours and epic_id not in theirs)
        )
        assert (epic_id in found) is not removed, (epic_id, merged.text)
    assert len(found) == len(set(found))  # every epic once
    assert set(found) <= set(ours) | set(theirs)
    # An epic both sides have keeps one Keywords line: the terms either side has, but for one
    # that one side removed (case and spacing aside), unless the lines around it clashed.
    lines = merged.text.split("\n")
    for parsed in parse_permanent(merged.text):
        head = lines[parsed.start_line : min(parsed.heading_lines, default=parsed.end_line)]
        if (
            parsed.epic_id not in ours
            or parsed.epic_id not in theirs
            or pm_merge_items.OURS_MARK in head
        ):
            continue
        assert len(parsed.keywords_lines) <= 1, merged.text
        o, t = (terms_of(side[parsed.epic_id]) for side in (ours, theirs))
        b = terms_of(base[parsed.epic_id]) if parsed.epic_id in base else set()
        assert {entry_key(term) for term in parsed.keywords} == {
            key for key in o | t if key not in b or (key in o and key in t)
        }, merged.text
    problems = errors(merged.text)
    if merged.clashes:
        # Markers, and where a clash holds both sides' Completed line or v2 marker, a second one.
        assert any("merge conflict" in p for p in problems), problems
        assert all("merge conflict" in p or ": a second " in p for p in problems), problems
    else:
        assert problems == [], (problems, merged.text)


# The Paths line: one set of globs, as the Keywords line is one set of terms.

PATHS_EPIC = (
    "## Epic: FEAT-1 \u2014 Webhooks\n**Completed:** 2026-01-01T00:00:00Z\n"
    "**Keywords:** stripe\n{paths}\n### Gotchas discovered\n{gotchas}"
)


def paths_epic(paths: str | None, gotchas: str = "- g\n") -> str:
    line = "" if paths is None else f"**Paths:** {paths}\n"
    return PATHS_EPIC.format(paths=line, gotchas=gotchas)


@pytest.mark.parametrize(
    ("base", "ours", "theirs", "expected"),
    [
        ("src/a/**", "src/a/**, src/b/**", "src/a/**, src/c.py", "src/a/**, src/b/**, src/c.py"),
        (None, "src/a/**", "src/b/**", "src/a/**, src/b/**"),  # both added the line: one line
        ("src/a/**, src/b/**", "src/a/**", "src/a/**, src/b/**, x/**", "src/a/**, x/**"),
        ("src/a/**", None, "src/a/**, x/**", "x/**"),  # the line removed on one side
        ("Src/**", "Src/**, a", "Src/**, src/**", "Src/**, a, src/**"),  # globs keep their case
    ],
)
def test_both_sides_change_the_paths_line_and_one_line_results(
    base: str | None, ours: str | None, theirs: str | None, expected: str
) -> None:
    merged = merge_permanent(
        paths_epic(base), paths_epic(ours, "- g\n- ours\n"), paths_epic(theirs, "- g\n- theirs\n")
    )
    assert merged.clashes == 0, merged.text
    assert merged.text == paths_epic(expected, "- g\n- ours\n- theirs\n")
    [parsed] = parse_permanent(merged.text)
    assert parsed.paths == tuple(expected.split(", "))
    assert parsed.keywords == ("stripe",)


def test_a_paths_line_added_without_a_keywords_line_goes_where_add_writes_it() -> None:
    base = "## Epic: A \u2014 a\n**Completed:** 2026-01-01\n\n### Gotchas discovered\n- g\n"
    ours = base.replace("2026-01-01\n", "2026-01-01\n**Paths:** a/**\n")
    theirs = base.replace("2026-01-01\n", "2026-01-01\n**Paths:** b/**\n**Keywords:** k\n")
    merged = merge_permanent(base, ours, theirs)
    assert merged.clashes == 0, merged.text
    [parsed] = parse_permanent(merged.text)
    assert (parsed.paths, parsed.keywords) == (("a/**", "b/**"), ("k",))
