from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from ski_memory_manager import mm_snapshot, mm_update
from ski_memory_manager.mm_snapshot import Decision, Snapshot
from ski_memory_manager.shared.memory_text import parse_iso_datetime
from support import SNAP_HEAD, SNAPSHOT_FRAGMENTS, fuzz_doc

NOW = datetime(2026, 5, 1, 15, 0, tzinfo=timezone.utc)

FULL = Snapshot(
    project_name="billing-api",
    session="2026-05-01-14-30",
    mode="architect",
    status="in-progress",
    last_checkpoint="CP-S1",
    checkpoints_approved=("CP-S0", "CP-S1"),
    checkpoint_decisions={
        "CP-S0": Decision("A", "Approved as-is"),
        "CP-S1": Decision("C", regenerated_count=1),
    },
    target_dir="exports/billing-api",
    last_session_at="2026-05-01T14:30:00Z",
    updated_at="2026-05-01T15:00:00Z",
    session_summary="Designed the invoice lifecycle.\n## Active state\nis a line of the summary",
    steps_completed={"S0": "Scoped it", "S1": "Mapped states\n\n  indented line"},
    active_state="Next: S2.",
    key_decisions=("Invoices are immutable", "- dash first\nsecond line"),
)

FULL_TEXT = """\
---
schema_version: 1.1
project-name: billing-api
session: 2026-05-01-14-30
mode: architect
status: in-progress
last-checkpoint: CP-S1
checkpoints-approved:
- CP-S0
- CP-S1
checkpoint_decisions:
  CP-S0:
    option: A
    note: Approved as-is
  CP-S1:
    option: C
    regenerated_count: 1
target-dir: exports/billing-api
last_session_at: '2026-05-01T14:30:00Z'
updated_at: '2026-05-01T15:00:00Z'
---

## Session summary
Designed the invoice lifecycle.
\\## Active state
is a line of the summary

## Steps completed
- S0: Scoped it
- S1: Mapped states

    indented line

## Active state
Next: S2.

## Key decisions
- Invoices are immutable
- - dash first
  second line
"""


def test_format_snapshot_exact() -> None:
    assert mm_snapshot.format_snapshot(FULL) == FULL_TEXT


def test_parse_snapshot_reads_the_format_back() -> None:
    assert mm_snapshot.parse_snapshot(FULL_TEXT) == FULL


def test_empty_sections_keep_their_headings_and_one_final_newline() -> None:
    text = mm_snapshot.format_snapshot(Snapshot("p", "2026-05-01-14-30"))
    assert text.endswith("\n## Active state\n\n## Key decisions\n")
    assert not text.endswith("\n\n")
    assert mm_snapshot.parse_snapshot(text) == Snapshot("p", "2026-05-01-14-30")


def test_parse_header_skips_the_body() -> None:
    header = mm_snapshot.parse_header(FULL_TEXT + "## Key decisions\n")  # body would not parse
    assert header == FULL._replace(
        session_summary="", steps_completed={}, active_state="", key_decisions=()
    )


SCHEMA_1_0 = """\
---
project-name: legacy
session: 2026-01-02-03-04
mode: express
status: paused
last-checkpoint: CP-S0
checkpoints-approved: [CP-S0]
target-dir: out
---

## Session summary
Old format.

## Steps completed
- S0: done

## Active state
waiting

## Key decisions
- kept
"""


def test_schema_1_0_is_read_with_what_it_has() -> None:
    snapshot = mm_snapshot.parse_snapshot(SCHEMA_1_0)
    assert snapshot == Snapshot(
        project_name="legacy",
        session="2026-01-02-03-04",
        schema_version=None,
        mode="express",
        status="paused",
        last_checkpoint="CP-S0",
        checkpoints_approved=("CP-S0",),
        target_dir="out",
        session_summary="Old format.",
        steps_completed={"S0": "done"},
        active_state="waiting",
        key_decisions=("kept",),
    )


def test_yaml_timestamps_and_unknown_keys_are_accepted() -> None:
    text = (
        "---\nproject-name: p\nsession: 2026-01-02-03-04\nlast_session_at: 2026-01-02T03:04:00Z\n"
        "updated_at: 2026-01-03\ntags: [a, b]\nowner: {name: x}\n---\n"
    )
    snapshot = mm_snapshot.parse_header(text)
    assert snapshot.last_session_at == "2026-01-02T03:04:00Z"
    assert snapshot.updated_at == "2026-01-03"
    assert snapshot.extra == {"tags": ["a", "b"], "owner": {"name": "x"}}
    # Unknown keys are written back after ours.
    written = mm_snapshot.format_snapshot(snapshot)
    assert written.split("---\n")[1].endswith("tags:\n- a\n- b\nowner:\n  name: x\n")


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ("status: [a]", "front matter 'status' must be text (got list)"),
        ("mode: {a: 1}", "front matter 'mode' must be text (got dict)"),
        ("last-checkpoint: true", "front matter 'last-checkpoint' must be text (got bool)"),
        ("schema_version: one", "front matter 'schema_version' must be a number"),
        (
            "checkpoints-approved: CP-S0",
            "front matter 'checkpoints-approved' must be a list of IDs",
        ),
        (
            "checkpoints-approved: [[a]]",
            "front matter 'checkpoints-approved' must be a list of IDs",
        ),
        ("checkpoint_decisions: [a]", "front matter 'checkpoint_decisions' must be a mapping"),
        (
            "checkpoint_decisions: {CP-S0: A}",
            "front matter 'checkpoint_decisions' entry 'CP-S0' must be a mapping",
        ),
        (
            "checkpoint_decisions: {CP-S0: {option: A, regenerated_count: x}}",
            "front matter 'checkpoint_decisions.CP-S0.regenerated_count' must be a number",
        ),
        ("updated_at: [1]", "front matter 'updated_at' must be text (got list)"),
    ],
)
def test_wrong_types_in_front_matter(front: str, message: str) -> None:
    with pytest.raises(mm_snapshot.SnapshotError) as caught:
        mm_snapshot.parse_header(f"---\n{front}\n---\n")
    assert str(caught.value) == message


def test_lenient_scalars() -> None:
    snapshot = mm_snapshot.parse_header(
        "---\nschema_version: '1.1'\nlast-checkpoint: 3\ncheckpoints-approved: [1, CP-S2]\n---\n"
    )
    assert snapshot.schema_version == 1.1
    assert snapshot.last_checkpoint == "3"
    assert snapshot.checkpoints_approved == ("1", "CP-S2")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("stray\n## Session summary\n", "body line 1 comes before '## Session summary'"),
        ("## Active state\na\n## Active state\n", "section '## Active state' appears twice"),
        (
            "## Steps completed\n- S0 - did it\n",
            "'## Steps completed' line 1 is not a list item '- S0: text': '- S0 - did it'",
        ),
        (
            "## Steps completed\nfree text\n",
            "'## Steps completed' line 1 is not a list item '- S0: text': 'free text'",
        ),
        (
            "## Key decisions\n\n  continuation first\n",
            "'## Key decisions' line 2 is not a list item '- text': '  continuation first'",
        ),
    ],
)
def test_body_that_cannot_be_read_back_is_an_error(body: str, message: str) -> None:
    with pytest.raises(mm_snapshot.SnapshotError) as caught:
        mm_snapshot.parse_snapshot(f"---\nproject-name: p\n---\n{body}")
    assert str(caught.value) == message


def test_hand_edits_that_still_read() -> None:
    text = (
        "---\n---\n\n## Session summary  \nsummary\t\n## Notes\nkept in the summary\n"
        "## Steps completed\n- S1:\n- S0: a\n\n\n  b\n\n## Key decisions\n-\n- x\n"
    )
    snapshot = mm_snapshot.parse_snapshot(text)
    assert snapshot.session_summary == "summary\n## Notes\nkept in the summary"
    assert dict(snapshot.steps_completed) == {"S1": "", "S0": "a\n\n\nb"}
    assert snapshot.key_decisions == ("", "x")


@pytest.mark.parametrize(
    ("stamp", "expected"),
    [
        ("2026-05-01-14-30", datetime(2026, 5, 1, 14, 30, tzinfo=timezone.utc)),
        ("2024-02-29-00-00", datetime(2024, 2, 29, tzinfo=timezone.utc)),
        ("2026-02-29-00-00", None),
        ("2026-13-01-00-00", None),
        ("2026-05-01-24-00", None),
        ("2026-05-01-23-60", None),
        ("0000-05-01-10-00", None),
        ("2026-05-01T14-30", None),
        ("2026-05-01-14-3", None),
        ("2026-05-01-14-300", None),
        ("2026-05-01-1a-30", None),
        ("\uff12\uff10\uff12\uff16-05-01-14-30", None),
        ("+026-05-01-14-30", None),
    ],
)
def test_session_datetime(stamp: str, expected: datetime | None) -> None:
    assert mm_snapshot.session_datetime(stamp) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-05-01T10:00:00Z", datetime(2026, 5, 1, 10, tzinfo=timezone.utc)),
        ("2026-05-01T12:00:00+02:00", datetime(2026, 5, 1, 10, tzinfo=timezone.utc)),
        ("2026-05-01T10:00:00", datetime(2026, 5, 1, 10, tzinfo=timezone.utc)),
        ("2026-05-01 10:00:00", datetime(2026, 5, 1, 10, tzinfo=timezone.utc)),
        ("2026-05-01", datetime(2026, 5, 1, tzinfo=timezone.utc)),
        ("yesterday", None),
        ("", None),
    ],
)
def test_parse_iso(text: str, expected: datetime | None) -> None:
    assert parse_iso_datetime(text) == expected


def test_step_order_is_natural() -> None:
    steps = ["S10", "S2", "S1", "S0", "S9", "S3", "CP", "S1a", "S01"]
    assert sorted(steps, key=mm_snapshot.step_order) == [
        "CP",
        "S0",
        "S01",
        "S1",
        "S1a",
        "S2",
        "S3",
        "S9",
        "S10",
    ]


# --- round trips over hostile text ----------------------------------------------------------

PIECES = [
    "---",
    "...",
    "## Session summary",
    "## Steps completed",
    "## Active state",
    "## Key decisions",
    "\\## Active state",
    "\\\\## Key decisions",
    "- S0: x",
    "- ",
    "-",
    "  ",
    "\n",
    "\n\n",
    "#",
    "# comment",
    ":",
    ": ",
    "'",
    '"',
    "\\",
    "\t",
    "\r\n",
    "\r",
    "\x00",
    "\x1b[31m",
    "\u200b",
    "\u202e",
    "\ufeff",
    "\x85",
    "\u2028",
    "|",
    ">",
    "&a",
    "*a",
    "!!python/object",
    "{",
    "[",
    "é",
    "✓",
    "🙂",
    "\ud800",
    "<system-reminder>",
    "[x | trust:user]",
    "null",
    "yes",
    "password=hunter2",
    " ",
    "\xa0",
]
HOSTILE = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=8)), max_size=10).map(
    "".join
)
IDS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,10}", fullmatch=True)


@st.composite
def save_inputs(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[str, Any] = {
        "project_name": draw(st.from_regex(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,20}", fullmatch=True)),
        "session_timestamp": "2026-05-01-14-30",
        "mode": draw(st.sampled_from(mm_update.MODES)),
        "status": draw(st.sampled_from(mm_update.STATUSES)),
        "last_checkpoint": draw(IDS),
        "checkpoints_approved": draw(st.lists(IDS, max_size=4)),
        "checkpoint_decisions": draw(
            st.dictionaries(
                IDS,
                st.fixed_dictionaries(
                    {"option": st.sampled_from(mm_update.OPTIONS)},
                    optional={"note": HOSTILE, "regenerated_count": st.integers(0, 9)},
                ),
                max_size=3,
            )
        ),
        "target_dir": draw(HOSTILE.map(lambda t: t.replace("\n", " ").replace("\r", " "))),
        "session_summary": draw(HOSTILE),
        "steps_completed": draw(st.dictionaries(IDS, HOSTILE, max_size=4)),
        "active_state": draw(HOSTILE),
        "key_decisions": draw(st.lists(HOSTILE, max_size=4)),
    }
    return data


@given(data=save_inputs())
def test_snapshot_round_trip(data: dict[str, Any]) -> None:
    snapshot = mm_update.merge(None, mm_update.parse_input(data), NOW)
    text = mm_snapshot.format_snapshot(snapshot)
    assert mm_snapshot.parse_snapshot(text) == snapshot
    # The front matter is plain YAML that any safe loader reads to the same values.
    front = yaml.safe_load(text.split("\n---\n", 1)[0][4:])
    assert front["project-name"] == data["project_name"]
    assert front["checkpoints-approved"] == list(dict.fromkeys(data["checkpoints_approved"]))
    assert front["target-dir"] == mm_update.normalise_text(data["target_dir"])
    for cp, decision in data["checkpoint_decisions"].items():
        assert front["checkpoint_decisions"][cp]["option"] == decision["option"]
        if "note" in decision:
            assert front["checkpoint_decisions"][cp]["note"] == mm_update.normalise_text(
                decision["note"]
            )
    # Free text is stored as given, normalised (no controls, no trailing blanks).
    assert snapshot.session_summary == mm_update.normalise_text(data["session_summary"])
    assert dict(snapshot.steps_completed) == {
        k: mm_update.normalise_text(v) for k, v in data["steps_completed"].items()
    }
    # Exactly four section headings, in order, whatever the text held.
    assert [
        line for line in text.split("\n") if line in {f"## {s}" for s in mm_snapshot.SECTIONS}
    ] == [f"## {s}" for s in mm_snapshot.SECTIONS]
    assert text.endswith("\n") and not text.endswith("\n\n")


@given(text=HOSTILE)
def test_normalised_text_is_stable(text: str) -> None:
    once = mm_update.normalise_text(text)
    assert mm_update.normalise_text(once) == once
    assert "\r" not in once and "\t" not in once and "\x00" not in once
    assert not once.startswith("\n") and not once.endswith("\n")


# Fuzzing: any document, well formed or not.


@given(st.one_of(fuzz_doc(SNAPSHOT_FRAGMENTS, SNAP_HEAD), st.text()))
def test_parse_snapshot_raises_only_its_error(text: str) -> None:
    try:
        mm_snapshot.parse_snapshot(text)
    except mm_snapshot.SnapshotError as exc:
        assert "\n" not in str(exc).strip(), "error message is not one line"
