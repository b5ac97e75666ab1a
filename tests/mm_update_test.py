from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from ski_memory_manager import mm_snapshot, mm_update
from ski_memory_manager.mm_snapshot import MAX_PROJECT_CHARS, Decision, Snapshot

BASE = {"project_name": "p", "session_timestamp": "2026-05-01-14-30"}
T0 = datetime(2026, 5, 1, 14, 35, tzinfo=timezone.utc)
NAME_FORM = "1-64 characters of letters, digits, '.', '_' or '-', not starting with '.'"
TS_FORM = "a real UTC date-time as YYYY-MM-DD-HH-MM, e.g. 2026-05-01-14-30"
ID_FORM = "an ID like CP-S2 or S0: letters, digits, '.', '_' or '-', at most 96 characters"
FIELDS = (
    "project_name, session_timestamp, mode, status, last_checkpoint, checkpoints_approved, "
    "checkpoint_decisions, target_dir, session_summary, steps_completed, active_state, "
    "key_decisions"
)

# Every invalid field, with the exact one-line message (shared with memory_manager_test).
INVALID: list[tuple[dict[str, Any], str]] = [
    ({}, 'project_name is required (--project-name or "project_name" in --input)'),
    (
        {"project_name": None},
        'project_name is required (--project-name or "project_name" in --input)',
    ),
    ({"project_name": 5}, "project_name must be a string (got number)"),
    ({"project_name": "../x"}, f"project_name must be {NAME_FORM} (got '../x')"),
    ({"project_name": "a/b"}, f"project_name must be {NAME_FORM} (got 'a/b')"),
    ({"project_name": "/abs"}, f"project_name must be {NAME_FORM} (got '/abs')"),
    ({"project_name": "a\\b"}, f"project_name must be {NAME_FORM} (got 'a\\\\b')"),
    ({"project_name": "x\x00y"}, f"project_name must be {NAME_FORM} (got 'x\\x00y')"),
    ({"project_name": ".hidden"}, f"project_name must be {NAME_FORM} (got '.hidden')"),
    ({"project_name": ".."}, f"project_name must be {NAME_FORM} (got '..')"),
    ({"project_name": ""}, f"project_name must be {NAME_FORM} (got '')"),
    ({"project_name": "a b"}, f"project_name must be {NAME_FORM} (got 'a b')"),
    ({"project_name": "café"}, f"project_name must be {NAME_FORM} (got 'café')"),
    ({"project_name": "p\n"}, f"project_name must be {NAME_FORM} (got 'p\\n')"),
    (
        {"project_name": "a" * (MAX_PROJECT_CHARS + 1)},
        f"project_name must be {NAME_FORM} (got '{'a' * 56}...)",
    ),
    (
        {"project_name": "ghp_" + "a" * 36},
        "project_name looks like a secret; use a plain project name",
    ),
    ({"project_name": "p"}, "session_timestamp is required"),
    (
        {**BASE, "session_timestamp": 202605011430},
        "session_timestamp must be a string (got number)",
    ),
    (
        {**BASE, "session_timestamp": "2026-02-30-10-00"},
        f"session_timestamp must be {TS_FORM} (got '2026-02-30-10-00')",
    ),
    (
        {**BASE, "session_timestamp": "2026-05-01T14:30"},
        f"session_timestamp must be {TS_FORM} (got '2026-05-01T14:30')",
    ),
    (
        {**BASE, "session_timestamp": "2026-05-01-24-00"},
        f"session_timestamp must be {TS_FORM} (got '2026-05-01-24-00')",
    ),
    (
        {**BASE, "session_timestamp": "../../etc/pass"},
        f"session_timestamp must be {TS_FORM} (got '../../etc/pass')",
    ),
    ({**BASE, "mode": "fast"}, "mode must be one of: architect, express (got 'fast')"),
    ({**BASE, "mode": ["architect"]}, "mode must be a string (got array)"),
    (
        {**BASE, "status": "done"},
        "status must be one of: in-progress, paused, completed (got 'done')",
    ),
    ({**BASE, "status": True}, "status must be a string (got boolean)"),
    ({**BASE, "last_checkpoint": "CP S2"}, f"last_checkpoint must be {ID_FORM} (got 'CP S2')"),
    ({**BASE, "last_checkpoint": 2}, "last_checkpoint must be a string (got number)"),
    (
        {**BASE, "checkpoints_approved": "CP-S0"},
        "checkpoints_approved must be an array of strings (got string)",
    ),
    (
        {**BASE, "checkpoints_approved": ["CP-S0", 3]},
        "checkpoints_approved[1] must be a string (got number)",
    ),
    (
        {**BASE, "checkpoints_approved": ["-x"]},
        f"checkpoints_approved[0] must be {ID_FORM} (got '-x')",
    ),
    (
        {**BASE, "checkpoint_decisions": ["A"]},
        'checkpoint_decisions must be an object like {"CP-S0": {"option": "A"}} (got array)',
    ),
    (
        {**BASE, "checkpoint_decisions": {"CP S0": {"option": "A"}}},
        f"checkpoint_decisions key must be {ID_FORM} (got 'CP S0')",
    ),
    (
        {**BASE, "checkpoint_decisions": {"CP-S0": "A"}},
        'checkpoint_decisions.CP-S0 must be an object like {"option": "A", "note": "..."} '
        "(got string)",
    ),
    (
        {**BASE, "checkpoint_decisions": {"CP-S0": {}}},
        "checkpoint_decisions.CP-S0.option is required: one of A, B, C, D",
    ),
    (
        {**BASE, "checkpoint_decisions": {"CP-S0": {"option": "E"}}},
        "checkpoint_decisions.CP-S0.option must be one of: A, B, C, D (got 'E')",
    ),
    (
        {**BASE, "checkpoint_decisions": {"CP-S0": {"option": "a"}}},
        "checkpoint_decisions.CP-S0.option must be one of: A, B, C, D (got 'a')",
    ),
    (
        {**BASE, "checkpoint_decisions": {"CP-S0": {"option": "A", "note": 1}}},
        "checkpoint_decisions.CP-S0.note must be a string (got number)",
    ),
    (
        {**BASE, "checkpoint_decisions": {"CP-S0": {"option": "A", "regenerated_count": -1}}},
        "checkpoint_decisions.CP-S0.regenerated_count must be a whole number >= 0 (got -1)",
    ),
    (
        {**BASE, "checkpoint_decisions": {"CP-S0": {"option": "A", "regenerated_count": True}}},
        "checkpoint_decisions.CP-S0.regenerated_count must be a whole number >= 0 (got True)",
    ),
    (
        {**BASE, "checkpoint_decisions": {"CP-S0": {"option": "A", "regenerated_count": 1.5}}},
        "checkpoint_decisions.CP-S0.regenerated_count must be a whole number >= 0 (got 1.5)",
    ),
    (
        {**BASE, "checkpoint_decisions": {"CP-S0": {"option": "A", "why": "x"}}},
        "checkpoint_decisions.CP-S0 has unknown key 'why'; accepted: option, note, "
        "regenerated_count",
    ),
    ({**BASE, "target_dir": ["x"]}, "target_dir must be a string (got array)"),
    ({**BASE, "target_dir": "a\nb"}, "target_dir must be a single line (a path)"),
    ({**BASE, "session_summary": 1}, "session_summary must be a string (got number)"),
    ({**BASE, "active_state": {}}, "active_state must be a string (got object)"),
    (
        {**BASE, "steps_completed": ["x"]},
        'steps_completed must be an object like {"S0": "what was done"} (got array)',
    ),
    (
        {**BASE, "steps_completed": {"S 0": "x"}},
        f"steps_completed key must be {ID_FORM} (got 'S 0')",
    ),
    (
        {**BASE, "steps_completed": {"S0": 1}},
        "steps_completed.S0 must be a string (got number)",
    ),
    ({**BASE, "key_decisions": "x"}, "key_decisions must be an array of strings (got string)"),
    ({**BASE, "key_decisions": [None]}, "key_decisions[0] must be a string (got null)"),
    (
        {**BASE, "sumary": "x"},
        f"unknown input field 'sumary'; did you mean 'session_summary'? accepted: {FIELDS}",
    ),
    # A caller's own fields: a typo of a known one, a name the manager writes, a bad name or
    # shape, too much.
    (
        {**BASE, "target-dir": "x"},
        f"unknown input field 'target-dir'; did you mean 'target_dir'? accepted: {FIELDS}",
    ),
    (
        {**BASE, "last_chekpoint": "CP-S0"},
        f"unknown input field 'last_chekpoint'; did you mean 'last_checkpoint'? accepted: {FIELDS}",
    ),
    (
        {**BASE, "schema_version": 2},
        f"unknown input field 'schema_version'; the memory manager writes it; accepted: {FIELDS}",
    ),
    (
        {**BASE, "Target Platforms": ["x"]},
        "unknown input field 'Target Platforms': an own field needs a lower-case name of letters, "
        f"digits, '_' or '-', at most 40 characters; accepted: {FIELDS}",
    ),
    (
        {**BASE, "target_platforms": {"a": 1}},
        "target_platforms must be a string, a number, true/false or a list of them (got object)",
    ),
    (
        {**BASE, "target_platforms": ["a", ["b"]]},
        "target_platforms[1] must be a string, a number, true/false or a list of them (got array)",
    ),
    (
        {**BASE, "notes_extra": "x" * (mm_update.MAX_EXTRA_TEXT + 1)},
        "notes_extra is over 1000 characters; keep it short",
    ),
    ({**BASE, "tags": list(range(mm_update.MAX_EXTRA_ITEMS + 1))}, "tags has over 50 items"),
    (
        {**BASE, **{f"own_{i}": i for i in range(mm_update.MAX_EXTRA_FIELDS + 1)}},
        "more than 20 own fields; keep the snapshot small",
    ),
]


def test_own_fields_are_kept_validated_and_merged() -> None:
    update = mm_update.parse_input(
        {**BASE, "target_platforms": ["antigravity", "claude-code"], "retries": 2, "beta": True}
    )
    assert update.extra == {
        "target_platforms": ["antigravity", "claude-code"],
        "retries": 2,
        "beta": True,
    }
    first = mm_update.merge(None, update, T0)
    later = mm_update.merge(first, mm_update.parse_input({**BASE, "retries": 3}), T0)
    assert later.extra == {
        "target_platforms": ["antigravity", "claude-code"],
        "retries": 3,
        "beta": True,
    }
    text = mm_snapshot.format_snapshot(later)
    front = text.split("\n---\n", 1)[0]
    assert front.endswith("target_platforms:\n- antigravity\n- claude-code\nretries: 3\nbeta: true")
    assert mm_snapshot.parse_snapshot(text).extra == later.extra
    secret = mm_update.parse_input({**BASE, "deploy_note": "token ghp_" + "a" * 36})
    redacted, found = mm_update.redact_snapshot(mm_update.merge(None, secret, T0))
    assert (redacted.extra["deploy_note"], found) == ("token [REDACTED]", ["deploy_note"])


def test_ids_fit_a_checkpoint_per_64_character_entity() -> None:
    entity = "age-spe-" + "x" * 56
    update = mm_update.parse_input({**BASE, "last_checkpoint": f"CP-S3-{entity}"})
    assert update.last_checkpoint == f"CP-S3-{entity}" and len(entity) == 64
    with pytest.raises(mm_snapshot.InvalidField, match="at most 96 characters"):
        mm_update.parse_input({**BASE, "last_checkpoint": "C" * (mm_update.MAX_ID_CHARS + 1)})


@pytest.mark.parametrize(("data", "message"), INVALID)
def test_invalid_input(data: dict[str, Any], message: str) -> None:
    with pytest.raises(mm_snapshot.InvalidField) as caught:
        mm_update.parse_input(data)
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)


def test_valid_input_is_normalised() -> None:
    update = mm_update.parse_input(
        {
            **BASE,
            "mode": None,  # null: not given
            "checkpoints_approved": ["CP-S0", "CP-S1", "CP-S0"],
            "checkpoint_decisions": {
                "CP-S0": {"option": "A", "note": " ok \r\n", "regenerated_count": None}
            },
            "session_summary": "\n\n  line one  \r\nline\ttwo\x1b[1m\u200b\n\n",
            "steps_completed": {"S0": "x"},
            "key_decisions": ["", "  ", "kept"],
            "last_session_at": "ignored",
            "memory_dir": "ignored here",
        }
    )
    assert update == mm_update.Update(
        project_name="p",
        session_timestamp="2026-05-01-14-30",
        checkpoints_approved=("CP-S0", "CP-S1"),
        checkpoint_decisions={"CP-S0": Decision("A", " ok")},
        session_summary="  line one\nline two",
        steps_completed={"S0": "x"},
        key_decisions=("kept",),
    )


def test_surrogates_become_replacement_characters() -> None:
    update = mm_update.parse_input({**BASE, "session_summary": "a\ud800b"})
    assert update.session_summary == "a\ufffdb"


def test_redact_snapshot_names_each_field() -> None:
    token = "ghp_" + "A" * 36
    update = mm_update.parse_input(
        {
            **BASE,
            "target_dir": "https://user:hunter2@example.com/x",
            "session_summary": f"used {token}",
            "active_state": "nothing secret",
            "steps_completed": {"S0": "password=swordfish", "S1": "fine"},
            "key_decisions": ["fine", "api_key: abc123"],
            "checkpoint_decisions": {"CP-S0": {"option": "A", "note": "xoxb-1234567890-abc"}},
        }
    )
    merged = mm_update.merge(None, update, T0)
    redacted, fields = mm_update.redact_snapshot(merged)
    assert fields == [
        "target_dir",
        "session_summary",
        "steps_completed.S0",
        "key_decisions[1]",
        "checkpoint_decisions.CP-S0.note",
    ]
    assert redacted == merged._replace(
        target_dir="https://[REDACTED]@example.com/x",
        session_summary="used [REDACTED]",
        steps_completed={"S0": "password=[REDACTED]", "S1": "fine"},
        key_decisions=("fine", "api_key: [REDACTED]"),
        checkpoint_decisions={"CP-S0": Decision("A", "[REDACTED]")},
    )
    assert mm_update.redact_snapshot(redacted) == (redacted, [])


def test_redact_snapshot_covers_what_a_hand_edit_put_in_the_front_matter() -> None:
    shared = ["AKIAIOSFODNN7EXAMPLE", {"k": "password=x1"}]
    bomb: list[Any] = [shared] * 1000  # aliases: one list, many references
    snapshot = Snapshot(
        "p",
        "2026-05-01-14-30",
        status="token: abc",
        last_checkpoint="CP-S1",
        checkpoints_approved=("CP-S0", "ghp_" + "B" * 36),
        extra={"notes": "AKIAIOSFODNN7EXAMPLE", "deep": bomb, "n": 3},
    )
    redacted, fields = mm_update.redact_snapshot(snapshot)
    assert fields == ["status", "checkpoints_approved[1]", "notes", "deep", "deep"]
    assert redacted.status == "token: [REDACTED]"
    assert redacted.checkpoints_approved == ("CP-S0", "[REDACTED]")
    assert redacted.extra["notes"] == "[REDACTED]"
    assert redacted.extra["deep"][999] is redacted.extra["deep"][0]  # sharing kept
    assert redacted.extra["deep"][0] == ["[REDACTED]", {"k": "password=[REDACTED]"}]
    assert redacted.extra["n"] == 3


def _save(saved: Snapshot | None, minute: int, **fields: Any) -> Snapshot:
    now = T0.replace(minute=minute)
    return mm_update.merge(saved, mm_update.parse_input({**BASE, **fields}), now)


def test_merge_from_cp_s0_to_cp_close_loses_nothing() -> None:
    s0 = _save(
        None,
        35,
        mode="architect",
        target_dir="out",
        last_checkpoint="CP-S0",
        checkpoints_approved=["CP-S0"],
        checkpoint_decisions={"CP-S0": {"option": "A"}},
        steps_completed={"S0": "scoped"},
        session_summary="first",
        active_state="S1 next",
        key_decisions=["k1"],
    )
    assert s0 == Snapshot(
        project_name="p",
        session="2026-05-01-14-30",
        mode="architect",
        status="in-progress",
        last_checkpoint="CP-S0",
        checkpoints_approved=("CP-S0",),
        checkpoint_decisions={"CP-S0": Decision("A")},
        target_dir="out",
        last_session_at="2026-05-01T14:30:00Z",
        updated_at="2026-05-01T14:35:00Z",
        session_summary="first",
        steps_completed={"S0": "scoped"},
        active_state="S1 next",
        key_decisions=("k1",),
    )
    s1 = _save(
        s0,
        40,
        last_checkpoint="CP-S1",
        checkpoints_approved=["CP-S1"],
        steps_completed={"S1": "mapped"},
        checkpoint_decisions={"CP-S1": {"option": "B", "note": "tweaked"}},
    )
    assert s1 == s0._replace(
        last_checkpoint="CP-S1",
        checkpoints_approved=("CP-S0", "CP-S1"),
        checkpoint_decisions={"CP-S0": Decision("A"), "CP-S1": Decision("B", "tweaked")},
        steps_completed={"S0": "scoped", "S1": "mapped"},
        updated_at="2026-05-01T14:40:00Z",
    )
    # A repeated approval does not duplicate; a re-decided checkpoint is replaced whole.
    s2 = _save(
        s1,
        45,
        last_checkpoint="CP-S2",
        checkpoints_approved=["CP-S1", "CP-S2"],
        checkpoint_decisions={"CP-S1": {"option": "C", "regenerated_count": 2}},
        steps_completed={"S1": "mapped again", "S10": "ten", "S2": "two"},
        key_decisions=["k1", "k2"],
    )
    assert s2.checkpoints_approved == ("CP-S0", "CP-S1", "CP-S2")
    assert s2.checkpoint_decisions == {"CP-S0": Decision("A"), "CP-S1": Decision("C", None, 2)}
    assert list(s2.steps_completed.items()) == [
        ("S0", "scoped"),
        ("S1", "mapped again"),
        ("S2", "two"),
        ("S10", "ten"),
    ]
    assert s2.key_decisions == ("k1", "k2")
    paused = _save(s2, 50, status="paused", active_state="resume at S3")
    assert paused == s2._replace(
        status="paused", active_state="resume at S3", updated_at="2026-05-01T14:50:00Z"
    )
    closed = _save(
        paused,
        55,
        status="completed",
        last_checkpoint="CP-CLOSE",
        checkpoints_approved=["CP-CLOSE"],
        session_summary="done",
        key_decisions=[],
    )
    assert closed == paused._replace(
        status="completed",
        last_checkpoint="CP-CLOSE",
        checkpoints_approved=("CP-S0", "CP-S1", "CP-S2", "CP-CLOSE"),
        session_summary="done",
        key_decisions=(),
        updated_at="2026-05-01T14:55:00Z",
    )
    assert closed.last_session_at == "2026-05-01T14:30:00Z"  # kept through every save


def test_merge_upgrades_schema_1_0_and_keeps_unknown_keys() -> None:
    old = Snapshot(
        project_name="p",
        session="2026-05-01-14-30",
        schema_version=None,
        status="paused",
        extra={"tags": ["x"]},
    )
    new = _save(old, 35, status="in-progress")
    assert new.schema_version == 1.1
    assert new.last_session_at == "2026-05-01T14:30:00Z"
    assert new.extra == {"tags": ["x"]}
