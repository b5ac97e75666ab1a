"""mm_merge: one session saved on two branches, merged by save's own rules."""

from __future__ import annotations

import pytest
from ski_memory_manager import mm_merge
from ski_memory_manager.mm_snapshot import (
    Decision,
    Snapshot,
    SnapshotError,
    format_snapshot,
    parse_snapshot,
)

SESSION = "2026-11-29-09-30"
NAME = f"memory/{SESSION}-billing.md"


def snapshot(**fields: object) -> str:
    values: dict[str, object] = {
        "project_name": "billing",
        "session": SESSION,
        "mode": "architect",
        "status": "in-progress",
        "last_session_at": "2026-11-29T09:30:00Z",
    }
    values.update(fields)
    return format_snapshot(Snapshot(**values))  # type: ignore[arg-type]


BASE = snapshot(
    last_checkpoint="CP-S0",
    checkpoints_approved=("CP-S0",),
    steps_completed={"S0": "scaffold"},
    key_decisions=("money as minor units",),
    session_summary="Metered billing.",
    updated_at="2026-11-29T10:00:00Z",
)
OURS = snapshot(
    status="paused",
    last_checkpoint="CP-S2",
    checkpoints_approved=("CP-S0", "CP-S2"),
    checkpoint_decisions={"CP-S2": Decision("B", "ours")},
    steps_completed={"S0": "scaffold", "S2": "main step"},
    key_decisions=("money as minor units", "from main"),
    session_summary="Metered billing.",
    active_state="main state",
    updated_at="2026-11-29T12:00:00Z",
)
THEIRS = snapshot(
    last_checkpoint="CP-S1",
    checkpoints_approved=("CP-S0", "CP-S1"),
    checkpoint_decisions={"CP-S1": Decision("A"), "CP-S2": Decision("C", "theirs")},
    steps_completed={"S0": "scaffold, revised", "S1": "topic step"},
    key_decisions=("money as minor units", "from topic"),
    session_summary="Metered billing, usage CSV.",
    updated_at="2026-11-29T11:00:00Z",
)
# Theirs (11:00) is older than ours (12:00): what ours changed since BASE is applied to theirs
# as save would apply it. Ours left the summary and step S0 as they were: theirs' changes stand.
MERGED = snapshot(
    status="paused",
    last_checkpoint="CP-S2",
    checkpoints_approved=("CP-S0", "CP-S1", "CP-S2"),
    checkpoint_decisions={"CP-S1": Decision("A"), "CP-S2": Decision("B", "ours")},
    steps_completed={"S0": "scaffold, revised", "S1": "topic step", "S2": "main step"},
    key_decisions=("money as minor units", "from main", "from topic"),
    session_summary="Metered billing, usage CSV.",
    active_state="main state",
    updated_at="2026-11-29T12:00:00Z",
)


def test_merge_follows_saves_rules() -> None:
    assert mm_merge.merge_snapshot_texts(BASE, OURS, THEIRS) == mm_merge.MergedSnapshot(MERGED, ())


def test_merge_is_the_same_whichever_side_is_ours() -> None:
    assert mm_merge.merge_snapshot_texts(BASE, THEIRS, OURS).text == MERGED


def test_newer_side_wins_scalars_and_map_keys() -> None:
    newer_theirs = THEIRS.replace("11:00:00Z", "13:00:00Z")
    merged = parse_snapshot(mm_merge.merge_snapshot_texts(BASE, OURS, newer_theirs).text)
    assert merged.status == "paused"  # only ours changed it
    assert merged.last_checkpoint == "CP-S1"  # both changed it: the newer save's
    assert merged.checkpoints_approved == ("CP-S0", "CP-S2", "CP-S1")  # ours first: older
    assert merged.steps_completed == {
        "S0": "scaffold, revised",
        "S1": "topic step",
        "S2": "main step",
    }
    assert merged.checkpoint_decisions["CP-S2"] == Decision("C", "theirs")
    assert merged.session_summary == "Metered billing, usage CSV."
    assert merged.active_state == "main state"  # empty on the newer side: kept
    assert merged.updated_at == "2026-11-29T13:00:00Z"


def test_no_common_ancestor_and_a_removed_key_decision() -> None:
    merged = parse_snapshot(mm_merge.merge_snapshot_texts("", OURS, THEIRS).text)
    assert merged.key_decisions == ("money as minor units", "from main", "from topic")
    # With the ancestor, a decision the newer side dropped but the older side kept stays dropped.
    dropped = OURS.replace("- money as minor units\n", "")
    merged = parse_snapshot(mm_merge.merge_snapshot_texts(BASE, dropped, THEIRS).text)
    assert merged.key_decisions == ("from main", "from topic")


def test_different_sessions_or_unreadable_sides_refuse() -> None:
    other = OURS.replace("project-name: billing", "project-name: shipping")
    with pytest.raises(SnapshotError, match="different sessions"):
        mm_merge.merge_snapshot_texts(BASE, other, THEIRS)
    with pytest.raises(SnapshotError):
        mm_merge.merge_snapshot_texts(BASE, "no front matter\n", THEIRS)


def test_secrets_are_redacted_in_the_merge() -> None:
    secret = "AKIA" + "ABCDEFGHIJKLMNOP"
    leaky = THEIRS.replace("Metered billing, usage CSV.", f"key {secret}")
    merged = mm_merge.merge_snapshot_texts(BASE, leaky.replace("11:00", "13:00"), OURS)
    assert secret not in merged.text and merged.redacted == ("session_summary",)
