# Three-way merge of one session's snapshot saved on two branches: the core of
# `memory_manager.py merge`, the git merge driver. Pure: three texts in, one text out.
#
# The rules are save's own (mm_update.merge): the side saved last is applied as an update to
# the other, so maps (steps, checkpoint decisions) merge by key with the newer value winning,
# approved checkpoints append in order, scalars and texts take the newer value and updated_at
# is the newer one. What a save never needs, a merge does: a value the newer side left as the
# common ancestor had it is not an update (the older side's change to it stands), key
# decisions the older side added are kept after the newer side's, and empty texts do not erase
# the other side's.
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, NamedTuple

from .mm_snapshot import Snapshot, SnapshotError, format_snapshot, parse_snapshot
from .mm_snapshot import session_datetime as session_moment
from .mm_update import Update, merge, redact_snapshot
from .shared.memory_text import parse_iso_datetime


class MergedSnapshot(NamedTuple):
    text: str
    redacted: tuple[str, ...]  # fields that held a secret, stored as [REDACTED]


def _saved_at(snapshot: Snapshot) -> datetime | None:
    return parse_iso_datetime(snapshot.updated_at) if snapshot.updated_at else None


def _as_update(snapshot: Snapshot, ancestor: Snapshot | None) -> Update:
    """The snapshot as a save's update. With the common ancestor, a value this side left as it
    was is not given (so the other side's change to it stands), as are empty texts."""

    def changed(name: str) -> Any:
        value = getattr(snapshot, name)
        return None if ancestor is not None and getattr(ancestor, name) == value else value

    def changed_keys(name: str) -> dict[str, Any]:
        mapping: Mapping[str, Any] = getattr(snapshot, name)
        before: Mapping[str, Any] = getattr(ancestor, name) if ancestor is not None else {}
        return {key: value for key, value in mapping.items() if before.get(key) != value}

    return Update(
        project_name=snapshot.project_name,
        session_timestamp=snapshot.session,
        mode=changed("mode"),
        status=changed("status"),
        last_checkpoint=changed("last_checkpoint"),
        checkpoints_approved=snapshot.checkpoints_approved,
        checkpoint_decisions=changed_keys("checkpoint_decisions"),
        target_dir=changed("target_dir"),
        session_summary=changed("session_summary") or None,
        steps_completed=changed_keys("steps_completed"),
        active_state=changed("active_state") or None,
        key_decisions=changed("key_decisions") or None,
    )


def merge_snapshot_texts(base: str, ours: str, theirs: str) -> MergedSnapshot:
    """Merge two saves of one session (`base` is their common ancestor, '' when none). Raises
    SnapshotError when a side is not a readable snapshot or the two are different sessions."""
    mine, other = parse_snapshot(ours), parse_snapshot(theirs)
    if (mine.project_name, mine.session) != (other.project_name, other.session):
        raise SnapshotError(
            f"the two sides are different sessions ({mine.project_name} {mine.session} and "
            f"{other.project_name} {other.session})"
        )
    if session_moment(mine.session) is None:
        raise SnapshotError(f"front matter 'session' is not YYYY-MM-DD-HH-MM: {mine.session!r}")
    try:
        ancestor = parse_snapshot(base) if base.strip() else None
    except SnapshotError:
        ancestor = None
    # The later save is the update; on a tie (or no times) ours is.
    mine_at, other_at = _saved_at(mine), _saved_at(other)
    newer_at: datetime | None
    if mine_at is not None and other_at is not None and other_at > mine_at:
        older, newer, newer_at = mine, other, other_at
    elif mine_at is None and other_at is not None:
        older, newer, newer_at = mine, other, other_at
    else:
        older, newer, newer_at = other, mine, mine_at
    started = session_moment(newer.session)
    assert started is not None
    result = merge(older, _as_update(newer, ancestor), newer_at or started)
    known = set(newer.key_decisions) | set(ancestor.key_decisions if ancestor else ())
    added_on_older = tuple(text for text in older.key_decisions if text not in known)
    result = result._replace(
        key_decisions=result.key_decisions + added_on_older,
        last_session_at=min(
            (s for s in (older.last_session_at, newer.last_session_at) if s),
            default=result.last_session_at,
        ),
        extra={**older.extra, **newer.extra},
    )
    if newer_at is None:
        result = result._replace(updated_at=older.updated_at or newer.updated_at)
    cleaned, redacted = redact_snapshot(result)
    return MergedSnapshot(format_snapshot(cleaned), tuple(redacted))
