# `pause`: a session snapshot for someone with no workflow, in one call. It is `save` with what
# a workflow would choose filled in: the project name from the project folder, the session
# timestamp from the session's start (the SessionStart hook's record, mm_session, so that every
# pause of one session updates one file), `mode: express`, `status: paused`; the caller gives
# `active_state` (what is done, what is next, open questions) and whatever else it knows.
from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from . import mm_cli, mm_input, mm_save, mm_session, mm_snapshot, mm_update
from .mm_errors import CommandError
from .shared import memory_io

if TYPE_CHECKING:
    import argparse

HELP = "save where this session stands, paused, without a workflow"
DESCRIPTION = (
    "Save (or update) this session's snapshot with mode express and status "
    "paused, from --yaml or --input fields (active_state required: what is done, what is "
    "next, open questions). The project name defaults to the project folder's name made "
    "valid; the session timestamp is the session's start as the SessionStart hook recorded "
    "it for --session-id (recorded now when it did not), so every pause of a session "
    "updates one file. Creates the memory directory when missing. Prints the path written."
)
FIXED = {"mode": "express", "status": "paused"}
FALLBACK_NAME = "project"
_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pause = mm_cli.add_command(commands, "pause", HELP, DESCRIPTION)
    pause.add_argument(
        "--session-id",
        metavar="ID",
        help="the client's session id (Claude Code: ${CLAUDE_SESSION_ID}); without one, the "
        "session timestamp is now",
    )
    pause.add_argument(
        "--project-name", metavar="P", help="default: the project folder's name, made valid"
    )
    mm_input.add_input_options(pause)
    mm_cli.add_now_option(pause, "the time recorded (default: now)")


def main(argv: Sequence[str]) -> int:
    return mm_cli.run(pause, mm_cli.parse_command("pause", add_parser, argv))


def project_name_for(folder: str) -> str:
    """A valid project name from a folder's name: accents dropped, every run of other
    characters one '-', no '.' or '-' at either end, at most 64 characters; 'project' when
    nothing is left."""
    decomposed = unicodedata.normalize("NFKD", folder)
    kept = "".join(c for c in decomposed if not unicodedata.combining(c))
    mapped = "".join(c if c in _NAME_CHARACTERS else "-" for c in kept)
    name = "-".join(part for part in mapped.split("-") if part).strip(".-")
    name = name[: mm_snapshot.MAX_PROJECT_CHARS].rstrip(".-")
    return name if mm_snapshot.is_project_name(name) else FALLBACK_NAME


def _given(value: str | None) -> str:
    """A flag's value, '' when empty or left as an unsubstituted ${...}."""
    return "" if not value or value.startswith("${") else value


def session_start(args: argparse.Namespace, now: float) -> mm_session.SessionStart | None:
    """This session's record: the hook's, else one made now and kept for the next pause."""
    session_id = _given(args.session_id)
    folder = mm_session.starts_dir(os.environ)
    if not session_id or folder is None:
        return None
    found = mm_session.read_start(folder, session_id)
    if found is not None:
        return found
    made = mm_session.SessionStart(
        mm_session.stamp_of(now),
        os.environ.get("CLAUDE_PROJECT_DIR", ""),
        os.getcwd(),
        os.environ.get(mm_session.MEMORY_DIR_OPTION, ""),
    )
    try:
        mm_session.write_start(folder, session_id, made)
    except (OSError, memory_io.MemoryIOError) as exc:
        mm_cli.say(f"note: cannot record the session's start in {folder}: {exc}")
    return made


def pause(args: argparse.Namespace) -> int:
    if args.project_name is not None:
        mm_snapshot.validate_project_name(args.project_name)
    now = mm_cli.parse_now(args.now)
    data = mm_input.read_fields(args.input, args.yaml)
    active = data.get("active_state")
    if not isinstance(active, str) or not active.strip():
        raise CommandError(
            "pause needs active_state: what is done, what is next, the open questions"
        )
    for key, value in FIXED.items():
        if data.get(key) not in (None, value):
            mm_cli.say(f"note: pause saves {key}: {value} (ignoring {key}: {data[key]})")
        data[key] = value
    start = session_start(args, now.timestamp())
    if start is not None:
        where: Mapping[str, str] = {
            "CLAUDE_PROJECT_DIR": start.project_dir,
            mm_session.MEMORY_DIR_OPTION: start.memory_dir_option,
        }
        cwd: str | None = start.cwd or None
    else:
        where, cwd = os.environ, None
    if args.project_name is not None:
        data["project_name"] = args.project_name
    elif data.get("project_name") is None:
        data["project_name"] = project_name_for(mm_cli.project_dir(where, cwd).resolve().name)
    if data.get("session_timestamp") is None:
        data["session_timestamp"] = start.started if start else mm_snapshot.session_stamp(now)
    update = mm_update.parse_input(data)
    mm_save.note_computed_fields(data)
    if args.memory_dir is not None or data.get("memory_dir") is not None:
        memory_dir = mm_save.memory_dir_for_save(args.memory_dir, data.get("memory_dir"))
    else:
        memory_dir = mm_cli.default_memory_dir(where, cwd)
    return mm_save.store(update, memory_dir, now, args.format)
