# One save: validating its input (the JSON field names of the original skill), redacting secrets
# from it, and merging it into the snapshot already saved for that session. Pure functions.
from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple, TypeVar

from .mm_snapshot import (
    FRONT_MATTER_KEYS,
    SCHEMA_VERSION,
    Decision,
    InvalidField,
    Snapshot,
    iso_utc,
    json_type,
    quoted_value,
    session_datetime,
    step_order,
    validate_project_name,
)
from .shared import memory_text

MODES = ("architect", "express")
STATUSES = ("in-progress", "paused", "completed")
OPTIONS = ("A", "B", "C", "D")
TIMESTAMP_FORM = "a real UTC date-time as YYYY-MM-DD-HH-MM, e.g. 2026-05-01-14-30"
# Long enough for a per-entity checkpoint, CP-S3-{entity}, with a 64-character entity name.
MAX_ID_CHARS = 96
ID_FORM = (
    f"an ID like CP-S2 or S0: letters, digits, '.', '_' or '-', at most {MAX_ID_CHARS} characters"
)
INPUT_FIELDS = (
    "project_name",
    "session_timestamp",
    "mode",
    "status",
    "last_checkpoint",
    "checkpoints_approved",
    "checkpoint_decisions",
    "target_dir",
    "session_summary",
    "steps_completed",
    "active_state",
    "key_decisions",
)
# Accepted in --input for compatibility with the original field table, but computed here.
COMPUTED_FIELDS = ("last_session_at", "updated_at")

_ID = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_ID_CHARS - 1}}}")
# A caller's own fields (beyond INPUT_FIELDS): a lower-case name, a scalar or a list of them.
MAX_EXTRA_NAME_CHARS = 40
_EXTRA_NAME = re.compile(rf"[a-z][a-z0-9_-]{{0,{MAX_EXTRA_NAME_CHARS - 1}}}")
EXTRA_NAME_FORM = (
    f"a lower-case name of letters, digits, '_' or '-', at most {MAX_EXTRA_NAME_CHARS} characters"
)
MAX_EXTRA_FIELDS = 20
MAX_EXTRA_TEXT = 1000
MAX_EXTRA_ITEMS = 50
_SURROGATE = re.compile("[\ud800-\udfff]")


class Update(NamedTuple):
    """One save: the fields given (None = not given: keep the saved value)."""

    project_name: str
    session_timestamp: str
    mode: str | None = None
    status: str | None = None
    last_checkpoint: str | None = None
    checkpoints_approved: tuple[str, ...] | None = None
    checkpoint_decisions: Mapping[str, Decision] | None = None
    target_dir: str | None = None
    session_summary: str | None = None
    steps_completed: Mapping[str, str] | None = None
    active_state: str | None = None
    key_decisions: tuple[str, ...] | None = None
    extra: Mapping[str, Any] = {}  # the caller's own fields, validated, in input order


# --- input -------------------------------------------------------------------------------------


def normalise_text(text: str) -> str:
    """How free text is stored: no control, zero-width or bidi characters, no trailing spaces on
    a line, no blank lines at the start or end, tabs as spaces, LF line ends."""
    text = memory_text.strip_unsafe(_SURROGATE.sub("\ufffd", text))
    lines = [line.rstrip(" ") for line in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _string(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidField(f"{name} must be a string (got {json_type(value)})")
    return value


def _identifier(name: str, value: object) -> str:
    text = _string(name, value)
    if _ID.fullmatch(text) is None:
        raise InvalidField(f"{name} must be {ID_FORM} (got {quoted_value(text)})")
    return text


def _choice(name: str, value: object, allowed: Sequence[str]) -> str:
    text = _string(name, value)
    if text not in allowed:
        raise InvalidField(
            f"{name} must be one of: {', '.join(allowed)} (got {quoted_value(text)})"
        )
    return text


def _project_name(value: object) -> str:
    name = validate_project_name(value)
    if memory_text.redact_secrets(name)[1]:
        raise InvalidField("project_name looks like a secret; use a plain project name")
    return name


def validate_session_timestamp(value: object) -> str:
    stamp = _string("session_timestamp", value)
    if session_datetime(stamp) is None:
        raise InvalidField(
            f"session_timestamp must be {TIMESTAMP_FORM} (got {quoted_value(stamp)})"
        )
    return stamp


Value = TypeVar("Value")


def _keyed(
    name: str, raw: object, example: str, value: Callable[[str, object], Value]
) -> dict[str, Value]:
    """An object of identifier keys (a step or checkpoint), each value checked by `value`."""
    if not isinstance(raw, dict):
        raise InvalidField(f"{name} must be an object like {example} (got {json_type(raw)})")
    checked = {}
    for key, item in raw.items():
        _identifier(f"{name} key", key)
        checked[key] = value(f"{name}.{key}", item)
    return checked


def _step_text(name: str, value: object) -> str:
    return normalise_text(_string(name, value))


def _decision(name: str, value: object) -> Decision:
    if not isinstance(value, dict):
        raise InvalidField(
            f'{name} must be an object like {{"option": "A", "note": "..."}} '
            f"(got {json_type(value)})"
        )
    unknown = [key for key in value if key not in ("option", "note", "regenerated_count")]
    if unknown:
        raise InvalidField(
            f"{name} has unknown key {quoted_value(unknown[0])}; "
            "accepted: option, note, regenerated_count"
        )
    if value.get("option") is None:
        raise InvalidField(f"{name}.option is required: one of {', '.join(OPTIONS)}")
    option = _choice(f"{name}.option", value["option"], OPTIONS)
    note = value.get("note")
    if note is not None:
        note = normalise_text(_string(f"{name}.note", note))
    count = value.get("regenerated_count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
        raise InvalidField(
            f"{name}.regenerated_count must be a whole number >= 0 (got {quoted_value(count)})"
        )
    return Decision(option, note, count)


def _string_list(name: str, value: object, item: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise InvalidField(f"{name} must be an array of strings (got {json_type(value)})")
    return tuple(item(f"{name}[{i}]", v) for i, v in enumerate(value))


def _extra_scalar(name: str, value: object) -> str | int | float | bool:
    if isinstance(value, str):
        text = normalise_text(value)
        if len(text) > MAX_EXTRA_TEXT:
            raise InvalidField(f"{name} is over {MAX_EXTRA_TEXT} characters; keep it short")
        return text
    if isinstance(value, (bool, int)):
        if not isinstance(value, bool) and abs(value) >= 2**63:
            raise InvalidField(f"{name} is too large a number")
        return value
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return value
    raise InvalidField(
        f"{name} must be a string, a number, true/false or a list of them (got {json_type(value)})"
    )


def typo_of(key: str) -> str | None:
    """The known field `key` is most likely a misspelling of, if any: close to a field, to its
    hyphenated spelling, or to one of its words (`sumary` for session_summary)."""
    candidates: dict[str, str] = {}
    for field in INPUT_FIELDS:
        candidates[field] = candidates[field.replace("_", "-")] = field
        for word in field.split("_"):
            if len(word) >= 4:
                candidates.setdefault(word, field)
    close = difflib.get_close_matches(key.casefold(), list(candidates), n=1, cutoff=0.8)
    return candidates[close[0]] if close else None


def extra_fields(data: Mapping[str, object]) -> dict[str, Any]:
    """The caller's own fields of a save input, validated: each a scalar or a list of scalars
    under a sane name. A name close to a known field is taken for a typo of it."""
    extra: dict[str, Any] = {}
    known = (*INPUT_FIELDS, *COMPUTED_FIELDS, "memory_dir")
    for key, value in data.items():
        if key in known or value is None:
            continue
        meant = typo_of(str(key))
        # An own field may not take the name of a key the manager writes itself.
        if meant is not None or str(key) in FRONT_MATTER_KEYS:
            hint = (
                f"did you mean {quoted_value(meant)}?" if meant else "the memory manager writes it;"
            )
            raise InvalidField(
                f"unknown input field {quoted_value(key)}; {hint} "
                f"accepted: {', '.join(INPUT_FIELDS)}"
            )
        if not isinstance(key, str) or _EXTRA_NAME.fullmatch(key) is None:
            raise InvalidField(
                f"unknown input field {quoted_value(key)}: an own field needs {EXTRA_NAME_FORM}; "
                f"accepted: {', '.join(INPUT_FIELDS)}"
            )
        if isinstance(value, list):
            if len(value) > MAX_EXTRA_ITEMS:
                raise InvalidField(f"{key} has over {MAX_EXTRA_ITEMS} items")
            extra[key] = [_extra_scalar(f"{key}[{i}]", item) for i, item in enumerate(value)]
        else:
            extra[key] = _extra_scalar(key, value)
        if len(extra) > MAX_EXTRA_FIELDS:
            raise InvalidField(f"more than {MAX_EXTRA_FIELDS} own fields; keep the snapshot small")
    return extra


def parse_input(data: Mapping[str, object]) -> Update:
    """Validate save input (the JSON field names, and the caller's own fields); raise
    InvalidField on the first problem."""
    extra = extra_fields(data)
    given = {k: v for k, v in data.items() if v is not None and k in INPUT_FIELDS}
    if "project_name" not in given:
        raise InvalidField('project_name is required (--project-name or "project_name" in --input)')
    project = _project_name(given["project_name"])
    if "session_timestamp" not in given:
        raise InvalidField("session_timestamp is required")
    stamp = validate_session_timestamp(given["session_timestamp"])
    fields: dict[str, Any] = {}
    if "mode" in given:
        fields["mode"] = _choice("mode", given["mode"], MODES)
    if "status" in given:
        fields["status"] = _choice("status", given["status"], STATUSES)
    if "last_checkpoint" in given:
        fields["last_checkpoint"] = _identifier("last_checkpoint", given["last_checkpoint"])
    if "checkpoints_approved" in given:
        approved = _string_list("checkpoints_approved", given["checkpoints_approved"], _identifier)
        fields["checkpoints_approved"] = tuple(dict.fromkeys(approved))
    if "checkpoint_decisions" in given:
        decisions = given["checkpoint_decisions"]
        example = '{"CP-S0": {"option": "A"}}'
        fields["checkpoint_decisions"] = _keyed(
            "checkpoint_decisions", decisions, example, _decision
        )
    if "target_dir" in given:
        target = normalise_text(_string("target_dir", given["target_dir"]))
        if "\n" in target:
            raise InvalidField("target_dir must be a single line (a path)")
        fields["target_dir"] = target
    for name in ("session_summary", "active_state"):
        if name in given:
            fields[name] = normalise_text(_string(name, given[name]))
    if "steps_completed" in given:
        steps = given["steps_completed"]
        fields["steps_completed"] = _keyed(
            "steps_completed", steps, '{"S0": "what was done"}', _step_text
        )
    if "key_decisions" in given:
        items = _string_list("key_decisions", given["key_decisions"], _string)
        fields["key_decisions"] = tuple(t for t in map(normalise_text, items) if t)
    return Update(project_name=project, session_timestamp=stamp, extra=extra, **fields)


# --- merge -------------------------------------------------------------------------------------


def merge(saved: Snapshot | None, update: Update, now: datetime) -> Snapshot:
    """The snapshot after a save: given fields replace, steps and decisions merge by key,
    approved checkpoints append new IDs, omitted fields keep their saved values."""
    started = session_datetime(update.session_timestamp)
    assert started is not None  # validated by parse_input
    base = saved or Snapshot(
        project_name=update.project_name,
        session=update.session_timestamp,
        status="in-progress",
    )
    steps = dict(base.steps_completed)
    steps.update(update.steps_completed or {})
    decisions = dict(base.checkpoint_decisions)
    decisions.update(update.checkpoint_decisions or {})
    approved = base.checkpoints_approved + tuple(
        cp for cp in (update.checkpoints_approved or ()) if cp not in base.checkpoints_approved
    )

    def pick(name: str) -> Any:
        value = getattr(update, name)
        return getattr(base, name) if value is None else value

    return Snapshot(
        project_name=update.project_name,
        session=update.session_timestamp,
        schema_version=SCHEMA_VERSION,
        mode=pick("mode"),
        status=pick("status"),
        last_checkpoint=pick("last_checkpoint"),
        checkpoints_approved=approved,
        checkpoint_decisions=decisions,
        target_dir=pick("target_dir"),
        last_session_at=base.last_session_at or iso_utc(started),
        updated_at=iso_utc(now),
        session_summary=pick("session_summary"),
        steps_completed=dict(sorted(steps.items(), key=lambda item: step_order(item[0]))),
        active_state=pick("active_state"),
        key_decisions=pick("key_decisions"),
        extra={**base.extra, **update.extra},
    )


# --- secrets -----------------------------------------------------------------------------------


def redact_snapshot(snapshot: Snapshot) -> tuple[Snapshot, list[str]]:
    """Replace secrets with [REDACTED] in every stored value, the saved file's included (a secret
    pasted into a snapshot by hand is not written back); return the fields that held one.
    IDs and keys are left alone: they are validated names, and a step key must stay one."""
    found: list[str] = []

    def scrub(name: str, text: str | None) -> str | None:
        if text is None:
            return None
        cleaned, count = memory_text.redact_secrets(text)
        if count:
            found.append(name)
        return cleaned

    memo: dict[int, Any] = {}

    def scrub_value(name: str, value: Any) -> Any:
        # Front matter keys this format does not own: any YAML value. Shared (aliased) parts are
        # visited once, so an alias bomb costs what it costs to load.
        if isinstance(value, str):
            return scrub(name, value)
        if id(value) in memo:
            return memo[id(value)]
        if isinstance(value, list):
            items: list[Any] = []
            memo[id(value)] = items
            items.extend(scrub_value(name, item) for item in value)
            return items
        if isinstance(value, dict):
            mapping: dict[Any, Any] = {}
            memo[id(value)] = mapping
            mapping.update((key, scrub_value(name, item)) for key, item in value.items())
            return mapping
        return value

    return snapshot._replace(
        mode=scrub("mode", snapshot.mode),
        status=scrub("status", snapshot.status),
        last_checkpoint=scrub("last_checkpoint", snapshot.last_checkpoint),
        checkpoints_approved=tuple(
            scrub(f"checkpoints_approved[{i}]", cp) or ""
            for i, cp in enumerate(snapshot.checkpoints_approved)
        ),
        target_dir=scrub("target_dir", snapshot.target_dir),
        session_summary=scrub("session_summary", snapshot.session_summary) or "",
        active_state=scrub("active_state", snapshot.active_state) or "",
        steps_completed={
            step: scrub(f"steps_completed.{step}", text) or ""
            for step, text in snapshot.steps_completed.items()
        },
        key_decisions=tuple(
            scrub(f"key_decisions[{i}]", text) or ""
            for i, text in enumerate(snapshot.key_decisions)
        ),
        checkpoint_decisions={
            cp: d._replace(note=scrub(f"checkpoint_decisions.{cp}.note", d.note))
            for cp, d in snapshot.checkpoint_decisions.items()
        },
        extra={key: scrub_value(key, value) for key, value in snapshot.extra.items()},
    ), found
