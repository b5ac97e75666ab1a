# The session snapshot record and its file format, in both directions: `format_snapshot` writes
# front matter plus the four sections, `parse_header` / `parse_snapshot` read them back. Also the
# names and times a snapshot is filed under. Pure functions; no file system, no clock.
# (Snapshot and mm_update.Update list the same fields: a record, and a save's fields with None
# for "not given". json_type names a value's type as the manager's messages do; the loader's
# pm_epic_input._kind has the same shape with its own words.)
#
# Body format (so any text round-trips): list items are `- S0: text` / `- text`, with the item's
# further lines indented by two spaces (blank lines stay blank); in free-text sections a line that
# reads as one of our section headings gets one extra leading backslash, removed on reading.
from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime, timezone
from typing import Any, NamedTuple

from . import mm_frontmatter
from .mm_errors import ManagerError

SCHEMA_VERSION = 1.1
# The seed's front matter keys, in the order they are written; any other key is a caller's own.
FRONT_MATTER_KEYS = (
    "schema_version",
    "project-name",
    "session",
    "mode",
    "status",
    "last-checkpoint",
    "checkpoints-approved",
    "checkpoint_decisions",
    "target-dir",
    "last_session_at",
    "updated_at",
)
SECTIONS = ("Session summary", "Steps completed", "Active state", "Key decisions")
# A snapshot is filed as {session timestamp}-{project}.md.
STAMP_LEN = len("YYYY-MM-DD-HH-MM")
MAX_PROJECT_CHARS = 64
PROJECT_PATTERN = rf"[A-Za-z0-9_-][A-Za-z0-9._-]{{0,{MAX_PROJECT_CHARS - 1}}}"
PROJECT_FORM = (
    f"1-{MAX_PROJECT_CHARS} characters of letters, digits, '.', '_' or '-', not starting with '.'"
)

_PROJECT = re.compile(PROJECT_PATTERN)
_STEP_ITEM = re.compile(r"- ([A-Za-z0-9][A-Za-z0-9._-]{0,95}):(?: (.*))?")
_ESCAPED_HEADING = re.compile(r"(\\*)## (?:" + "|".join(SECTIONS) + r")")


class InvalidField(ManagerError, ValueError):
    """An input value is not acceptable; str() is the one-line message for the user."""


class SnapshotError(ManagerError, ValueError):
    """A snapshot file cannot be read as a snapshot; str() says why, on one line."""


class Decision(NamedTuple):
    option: str
    note: str | None = None
    regenerated_count: int | None = None


class Snapshot(NamedTuple):
    # Read-only by convention: the mapping defaults are shared and never mutated.
    project_name: str
    session: str
    schema_version: float | None = SCHEMA_VERSION
    mode: str | None = None
    status: str | None = None
    last_checkpoint: str | None = None
    checkpoints_approved: tuple[str, ...] = ()
    checkpoint_decisions: Mapping[str, Decision] = {}
    target_dir: str | None = None
    last_session_at: str | None = None
    updated_at: str | None = None
    session_summary: str = ""
    steps_completed: Mapping[str, str] = {}
    active_state: str = ""
    key_decisions: tuple[str, ...] = ()
    extra: Mapping[str, Any] = {}  # front matter keys this format does not own, kept as they are


def quoted_value(value: object) -> str:
    """A value quoted for an error message, cut short."""
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def json_type(value: object) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


CAPTURED_SOURCE = "compaction"  # the `source` front matter key of a captured snapshot
TRANSCRIPT_SOURCE = "transcript"  # the same, for one the Stop and SessionEnd hooks made


def is_captured(snapshot: Snapshot) -> bool:
    """A snapshot a hook made without anyone's step: from the client's compaction summary
    (mm_capture), or from the session's transcript (mm_turn_capture)."""
    return snapshot.extra.get("source") in (CAPTURED_SOURCE, TRANSCRIPT_SOURCE)


def is_from_transcript(snapshot: Snapshot) -> bool:
    return snapshot.extra.get("source") == TRANSCRIPT_SOURCE


# --- names and times ---------------------------------------------------------------------------


def is_project_name(name: str) -> bool:
    return _PROJECT.fullmatch(name) is not None


def validate_project_name(value: object) -> str:
    """The project name, checked before it goes anywhere near a path."""
    if not isinstance(value, str):
        raise InvalidField(f"project_name must be a string (got {json_type(value)})")
    if not is_project_name(value):
        raise InvalidField(f"project_name must be {PROJECT_FORM} (got {quoted_value(value)})")
    return value


def session_datetime(stamp: str) -> datetime | None:
    """`YYYY-MM-DD-HH-MM` as an aware UTC datetime, or None if it is not a real date-time."""
    if (
        len(stamp) != STAMP_LEN
        or stamp[4] != "-"
        or stamp[7] != "-"
        or stamp[10] != "-"
        or stamp[13] != "-"
    ):
        return None
    parts = (stamp[0:4], stamp[5:7], stamp[8:10], stamp[11:13], stamp[14:16])
    if not all(p.isdigit() and p.isascii() for p in parts):
        return None
    year, month, day, hour, minute = (int(p) for p in parts)
    try:
        return datetime(year, month, day, hour, minute, tzinfo=timezone.utc)
    except ValueError:
        return None


def iso_utc(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def session_stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d-%H-%M")


_NUMBER = re.compile(r"(\d+)")


def step_order(step_id: str) -> tuple[tuple[int, int, str], ...]:
    """Natural order: S0, S1, S2, ..., S9, S10 (numbers compare as numbers)."""
    pieces = _NUMBER.split(step_id)  # text, number, text, number, ...
    return tuple(
        (0, int(piece), piece) if i % 2 else (1, 0, piece) for i, piece in enumerate(pieces)
    )


# --- file text ---------------------------------------------------------------------------------


def _front_matter(snapshot: Snapshot) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "schema_version": snapshot.schema_version,
        "project-name": snapshot.project_name,
        "session": snapshot.session,
    }
    optional = (
        ("mode", snapshot.mode),
        ("status", snapshot.status),
        ("last-checkpoint", snapshot.last_checkpoint),
    )
    meta.update((key, value) for key, value in optional if value is not None)
    meta["checkpoints-approved"] = list(snapshot.checkpoints_approved)
    decisions: dict[str, Any] = {}
    for cp, decision in snapshot.checkpoint_decisions.items():
        entry: dict[str, Any] = {"option": decision.option}
        if decision.note is not None:
            entry["note"] = decision.note
        if decision.regenerated_count is not None:
            entry["regenerated_count"] = decision.regenerated_count
        decisions[cp] = entry
    meta["checkpoint_decisions"] = decisions
    if snapshot.target_dir is not None:
        meta["target-dir"] = snapshot.target_dir
    for key, value in (
        ("last_session_at", snapshot.last_session_at),
        ("updated_at", snapshot.updated_at),
    ):
        if value is not None:
            meta[key] = value
    for key, value in snapshot.extra.items():
        meta.setdefault(key, value)
    return meta


def _escape(text: str) -> str:
    # A line that reads as one of our section headings gets one more leading backslash.
    return "\n".join(
        "\\" + line if _ESCAPED_HEADING.fullmatch(line) else line for line in text.split("\n")
    )


def _item(first: str, text: str) -> str:
    lines = text.split("\n")
    head = f"{first} {lines[0]}" if lines[0] else first
    return "\n".join([head] + [f"  {line}" if line else "" for line in lines[1:]])


def format_body(snapshot: Snapshot) -> str:
    """The snapshot file's body: the four sections, each heading followed by its text."""
    contents = (
        _escape(snapshot.session_summary),
        "\n".join(_item(f"- {step}:", text) for step, text in snapshot.steps_completed.items()),
        _escape(snapshot.active_state),
        "\n".join(_item("-", text) for text in snapshot.key_decisions),
    )
    sections = [
        f"## {title}\n" + (f"{content}\n" if content else "")
        for title, content in zip(SECTIONS, contents)
    ]
    return "\n" + "\n".join(sections)


def format_snapshot(snapshot: Snapshot) -> str:
    """The snapshot file's text: front matter, then the four sections; one final newline."""
    return mm_frontmatter.dumps(_front_matter(snapshot), format_body(snapshot))


def _scalar(meta: Mapping[str, Any], key: str) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise SnapshotError(f"front matter '{key}' must be text (got {type(value).__name__})")
    return str(value)


def _moment(meta: Mapping[str, Any], key: str) -> str | None:
    value = meta.get(key)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return iso_utc(value)
    if isinstance(value, date):
        return value.isoformat()
    return _scalar(meta, key)


def _front_snapshot(meta: Mapping[str, Any]) -> Snapshot:
    version = meta.get("schema_version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, (int, float))):
        try:
            version = float(str(version))
        except ValueError:
            raise SnapshotError("front matter 'schema_version' must be a number") from None
    approved_raw = meta.get("checkpoints-approved")
    if approved_raw is None:
        approved_raw = []
    if not isinstance(approved_raw, list) or not all(
        isinstance(cp, (str, int)) and not isinstance(cp, bool) for cp in approved_raw
    ):
        raise SnapshotError("front matter 'checkpoints-approved' must be a list of IDs")
    decisions_raw = meta.get("checkpoint_decisions")
    if decisions_raw is None:
        decisions_raw = {}
    if not isinstance(decisions_raw, dict):
        raise SnapshotError("front matter 'checkpoint_decisions' must be a mapping")
    decisions = {}
    for cp, value in decisions_raw.items():
        if not isinstance(value, dict) or not isinstance(cp, (str, int)):
            raise SnapshotError(
                f"front matter 'checkpoint_decisions' entry {str(cp)!r} must be a mapping"
            )
        count = value.get("regenerated_count")
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
            raise SnapshotError(
                f"front matter 'checkpoint_decisions.{cp}.regenerated_count' must be a number"
            )
        decisions[str(cp)] = Decision(
            option=_scalar(value, "option") or "",
            note=_scalar(value, "note"),
            regenerated_count=count,
        )
    return Snapshot(
        project_name=_scalar(meta, "project-name") or "",
        session=_scalar(meta, "session") or "",
        schema_version=version,
        mode=_scalar(meta, "mode"),
        status=_scalar(meta, "status"),
        last_checkpoint=_scalar(meta, "last-checkpoint"),
        checkpoints_approved=tuple(str(cp) for cp in approved_raw),
        checkpoint_decisions=decisions,
        target_dir=_scalar(meta, "target-dir"),
        last_session_at=_moment(meta, "last_session_at"),
        updated_at=_moment(meta, "updated_at"),
        extra={key: value for key, value in meta.items() if key not in FRONT_MATTER_KEYS},
    )


def parse_header(text: str, max_yaml_bytes: int | None = None) -> Snapshot:
    """The front matter only (body fields left empty): what load-last and list need. With
    max_yaml_bytes, a larger front matter is refused before it is parsed."""
    try:
        meta, _ = mm_frontmatter.loads(text, max_yaml_bytes)
    except mm_frontmatter.FrontMatterError as exc:
        raise SnapshotError(str(exc)) from None
    return _front_snapshot(meta)


def _free_text(lines: list[str]) -> str:
    unescaped = []
    for line in lines:
        match = _ESCAPED_HEADING.fullmatch(line)
        unescaped.append(line[1:] if match and match.group(1) else line)
    while unescaped and not unescaped[0].strip(" "):
        unescaped.pop(0)
    while unescaped and not unescaped[-1].strip(" "):
        unescaped.pop()
    return "\n".join(unescaped)


def _list_items(title: str, lines: list[str], keyed: bool) -> list[tuple[str, str]]:
    items: list[tuple[str, list[str]]] = []
    blanks = 0
    for number, line in enumerate(lines, 1):
        match = _STEP_ITEM.fullmatch(line) if keyed else None
        if keyed and match:
            items.append((match.group(1), [match.group(2) or ""]))
        elif not keyed and (line == "-" or line.startswith("- ")):
            items.append(("", [line[2:]]))
        elif not line.strip(" "):
            blanks += 1
            continue
        elif line.startswith("  ") and items:
            items[-1][1].extend([""] * blanks + [line[2:]])
        else:
            form = "'- S0: text'" if keyed else "'- text'"
            raise SnapshotError(
                f"'## {title}' line {number} is not a list item {form}: {quoted_value(line)}"
            )
        blanks = 0
    return [(key, "\n".join(text).rstrip("\n")) for key, text in items]


def parse_snapshot(text: str) -> Snapshot:
    """A whole snapshot, body included; raises SnapshotError where the file cannot be read
    back without losing something (so a save never overwrites what it did not understand)."""
    try:
        meta, body = mm_frontmatter.loads(text)
    except mm_frontmatter.FrontMatterError as exc:
        raise SnapshotError(str(exc)) from None
    snapshot = _front_snapshot(meta)
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for number, raw in enumerate(body.split("\n"), 1):
        line = raw.rstrip(" \t")
        title = line[3:] if line.startswith("## ") else None
        if title in SECTIONS:
            if title in sections:
                raise SnapshotError(f"section '## {title}' appears twice")
            current = sections[title] = []
        elif current is not None:
            current.append(line)
        elif line.strip(" "):
            raise SnapshotError(f"body line {number} comes before '## {SECTIONS[0]}'")
    steps = _list_items(SECTIONS[1], sections.get(SECTIONS[1], []), keyed=True)
    decisions = _list_items(SECTIONS[3], sections.get(SECTIONS[3], []), keyed=False)
    return snapshot._replace(
        session_summary=_free_text(sections.get(SECTIONS[0], [])),
        steps_completed=dict(steps),
        active_state=_free_text(sections.get(SECTIONS[2], [])),
        key_decisions=tuple(text for _, text in decisions),
    )
