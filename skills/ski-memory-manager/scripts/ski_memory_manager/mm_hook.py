# The manager's hook command (SessionStart) and its cache of the resume block: read the hook
# JSON, find this project's cached resume block and check that it still says what the snapshots
# and the clock would make it say, add the permanent-memory loader's block, print one hook JSON
# object. A cache hit imports neither yaml nor argparse nor the snapshot modules; a miss renders
# through mm_resume and stores the entry here (store_resume), both halves of the format in one
# place.
#
# What decides the resume block, and so the cache: the inputs that locate the memory folder and
# the captured snapshots' folder (CLAUDE_PROJECT_DIR, the memory_dir and capture options, the
# user's cache folder, the hook's cwd, the working directory), whose capture it leaves out (the
# session's own, recorded in the entry: a session may use an entry that leaves out no other's),
# the names in those folders, the size, mtime and inode of each snapshot the block was made
# from, this code, and the clock, through "last touched N minutes/hours/days ago". The entry
# records the moment the first of those relative times changes, and is used only before it, so
# a cached block is never one the clock has made wrong.
from __future__ import annotations

import os
import sys
import time

from . import mm_session
from .shared import hook_io, memory_io

# typing is not imported at run time: the hook starts every session and ends every turn.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping, Sequence
    from typing import Any

HELP = "the plugin's hook: resume at session start, capture the session"
CACHE_FORMAT = "mm-resume-2"
# A compaction summary comes in the hook input (PostCompact): a few KB, but it is bounded, not
# trusted to be small.
MAX_HOOK_STDIN = 32 * 1024 * 1024
MAX_ENTRY_BYTES = 64 * 1024
STATUS_OPTION = "CLAUDE_PLUGIN_OPTION_STATUS_MESSAGE"
HERE = os.path.dirname(os.path.abspath(__file__))
# The modules whose code decides the resume block: a change to any of them invalidates the cache.
RENDER_MODULES = (
    "mm_hook.py",
    "mm_resume.py",
    "mm_session.py",
    "mm_cli.py",
    "mm_render.py",
    "mm_snapshot.py",
    "mm_store.py",
    "mm_frontmatter.py",
    "shared/memory_text.py",
)
# The permanent-memory loader, when it sits beside this skill in the plugin: the session-start
# hook adds its block too, so that one hook gives the user one status line for both.
LOADER_SCRIPTS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "permanent-memory-loader", "scripts"
)


def say(line: str) -> None:
    """A diagnostic on stderr, cleaned like every other line the manager prints."""
    from .shared import memory_text

    hook_io.stderr_line(" ".join(memory_text.clean(line).split("\n")))


def cache_dir(env: Mapping[str, str]) -> str | None:
    """Where the hook keeps resume blocks; never the repository (as the loader's cache)."""
    return hook_io.cache_dir("session-memory", env)


def cache_slot(payload: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, str]:
    """The cache file for this hook's inputs and the key its entry must carry ('' for none)."""
    folder = cache_dir(env)
    if folder is None:
        return "", ""
    cwd = payload.get("cwd")
    try:
        here = os.getcwd()
    except OSError:
        here = ""
    inputs = "\0".join(
        [
            env.get("CLAUDE_PROJECT_DIR", ""),
            env.get("CLAUDE_PLUGIN_OPTION_MEMORY_DIR", ""),
            env.get("CLAUDE_PLUGIN_OPTION_CAPTURE", ""),
            env.get("XDG_CACHE_HOME", ""),
            env.get("HOME", ""),
            cwd if isinstance(cwd, str) else "",
            here,
            sys.executable or "",
        ]
    ).encode("utf-8", "surrogatepass")
    stamp = hook_io.code_stamp(HERE, RENDER_MODULES)
    key = hook_io.digest(f"{CACHE_FORMAT}|{stamp}|".encode() + inputs)
    return os.path.join(folder, "resume", hook_io.digest(inputs) + ".json"), key


def listing_digest(memory_dir: str) -> str:
    try:
        names = os.listdir(memory_dir)
    except OSError:
        return "missing"
    return hook_io.digest("\0".join(names).encode("utf-8", "surrogatepass"))


def cached_resume(slot: str, key: str, now: float, own: str) -> tuple[str, str] | None:
    """The cached (block, status), or None when there is none or it may no longer be true (for
    the session whose capture's reference is `own`: the block leaves its own capture out)."""
    try:
        with open(slot, "rb") as handle:
            data = handle.read(MAX_ENTRY_BYTES)
        entry: Any = hook_io.scan_json(data.decode("utf-8", "surrogatepass").strip(" \t\n\r"))
        if entry["format"] != CACHE_FORMAT or entry["key"] != key:
            return None
        valid_until = entry["valid_until"]
        if valid_until is not None and now >= valid_until:
            return None  # a "last touched" line would now read differently
        for folder, names in entry["folders"]:
            if listing_digest(folder) != names:
                return None
        for path, stamp in entry["files"]:
            if hook_io.file_stamp(path) != stamp:
                return None
        refs = entry["refs"]
        if own in refs["shown"] or refs["skipped"] not in (None, own):
            return None  # made for another session's eyes
        block, status = entry["block"], entry["status"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not (isinstance(block, str) and isinstance(status, str)):
        return None
    return block, status


def store_resume(
    slot: str,
    key: str,
    valid_until: float | None,
    folders: list[list[str]],
    files: list[list[Any]],
    made: tuple[str, str],
    refs: dict[str, Any],
) -> None:
    """Cache a resume block and its status (made) in slot under key, with what decides it: the
    folders it listed (the memory folder, the captured snapshots' folder) with the digest of
    their names, each snapshot's path and stamp, and the moment the clock would change it
    (None: never). cached_resume reads it back."""
    import json

    entry = {
        "format": CACHE_FORMAT,
        "key": key,
        "valid_until": valid_until,
        "folders": folders,
        "files": files,
        "block": made[0],
        "status": made[1],
        "refs": refs,
    }
    try:
        os.makedirs(os.path.dirname(slot), mode=0o700, exist_ok=True)
        data = json.dumps(entry, ensure_ascii=False).encode("utf-8", "surrogatepass")
        memory_io.atomic_write(slot, data, durable=False)  # a cache: not synced
    except (OSError, memory_io.MemoryIOError) as exc:
        say(f"ski-memory-manager hook: cannot write its cache: {exc}")


def resume_context(payload: dict[str, Any], env: Mapping[str, str], now: float) -> tuple[str, str]:
    """The resume block for this session start and its part of the user's status line."""
    slot, key = cache_slot(payload, env)
    session = payload.get("session_id")
    own = mm_session.session_ref(session) if isinstance(session, str) else ""
    found = cached_resume(slot, key, now, own) if slot else None
    if found is not None:
        return found
    from . import mm_resume

    return mm_resume.resume_and_store(payload, env, now, slot, key)


def permanent_context(payload: dict[str, Any]) -> tuple[str, str]:
    """The loader's block for this session start and its status, or ('', '') without it."""
    pm_hook = loader_module("pm_hook")
    if pm_hook is None:
        return "", ""
    block, status = pm_hook.hook_context(payload)
    return str(block), str(status)


def status_message_on(env: Mapping[str, str]) -> bool:
    value = env.get(STATUS_OPTION, "").strip().lower()
    if value in ("0", "false", "no", "off"):
        return False
    if value not in ("", "1", "true", "yes", "on"):
        say(f"note: ignoring {STATUS_OPTION}={value!r} (want true or false)")
    return True


def session_start_output(
    resume: tuple[str, str],
    permanent: tuple[str, str],
    event: object,
    show_status: bool,
    waiting: str = "",
) -> str:
    """Both blocks for the model and one line for the user naming what was injected and how
    many proposed lessons wait (none when neither). At SessionStart that is hook JSON; with no
    known event (a run by hand, an older client) it is the plain blocks."""
    blocks = "".join(block for block, _ in (resume, permanent) if block)
    if event != "SessionStart" or not (blocks or (waiting and show_status)):
        return blocks
    parts = [status for block, status in (permanent, resume) if block and status]
    parts += [waiting] if waiting else []
    message = "project-memory: " + " \u00b7 ".join(parts) if show_status and parts else ""
    return hook_io.hook_json(event, blocks, message)


def read_payload() -> dict[str, Any]:
    stdin = sys.stdin
    raw = stdin.buffer.read(MAX_HOOK_STDIN) if hasattr(stdin, "buffer") else b""
    try:
        text = raw.decode("utf-8", "replace").strip(" \t\n\r")  # what json.loads skips
        parsed = hook_io.scan_json(text) if raw.strip() else {}
    except (ValueError, RecursionError):
        say("note: hook input is not JSON; using the environment and working directory")
        return {}
    return parsed if isinstance(parsed, dict) else {}


def post_compact(payload: dict[str, Any]) -> int:
    """PostCompact: the client's summary kept as this session's captured snapshot (mm_capture);
    nothing on stdout, at most one line on stderr, exit 0 whatever happens."""
    try:
        from datetime import datetime, timezone

        from . import mm_capture

        line = mm_capture.capture(payload, os.environ, datetime.now(timezone.utc))
    except BaseException as exc:  # the hook boundary: never break the session, whatever it is
        line = f"ski-memory-manager hook: PostCompact: {type(exc).__name__}: {exc}"
    if line:
        say(line)
    try:
        for note in harvest_lessons(payload):
            say(note)
    except BaseException as exc:  # the hook boundary: never break the session, whatever it is
        say(f"ski-memory-manager hook: PostCompact lessons: {type(exc).__name__}: {exc}")
    return 0


def loader_module(name: str) -> Any:
    """A module of the permanent-memory loader beside this skill in the plugin, or None."""
    if not os.path.isfile(os.path.join(LOADER_SCRIPTS, "project_memory_loader", "pm_hook.py")):
        return None
    if LOADER_SCRIPTS not in sys.path:
        sys.path.append(LOADER_SCRIPTS)  # the loader's one path entry, as its own script adds
    from importlib import import_module

    return import_module(f"project_memory_loader.{name}")


def project_root(payload: Mapping[str, Any]) -> str:
    cwd = payload.get("cwd")
    project = os.environ.get("CLAUDE_PROJECT_DIR") or (cwd if isinstance(cwd, str) else "")
    return os.path.abspath(project or os.getcwd())


def harvest_lessons(payload: dict[str, Any]) -> list[str]:
    """PostCompact: the lessons the summary lists kept as proposals by the loader (pm_harvest);
    a subagent's compaction is its task's, not the session's, and gives none."""
    harvest = loader_module("writing.pm_harvest")
    if harvest is None or payload.get("agent_id"):
        return []
    from datetime import datetime, timezone

    from . import mm_capture

    summary = mm_capture.summary_of(payload)
    if not summary:
        return []
    session = payload.get("session_id")
    notes = harvest.harvest(
        summary,
        project_root(payload),
        os.environ,
        session if isinstance(session, str) else "",
        datetime.now(timezone.utc),
    )
    return [str(note) for note in notes]


def lessons_context(
    payload: dict[str, Any], permanent: tuple[str, str]
) -> tuple[tuple[str, str], str]:
    """At session start: the permanent-memory block with the line on proposing lessons after
    it (beside the block's budget, only where the project has a block), and how many proposals
    wait for the person ("" for none)."""
    lessons = loader_module("writing.pm_waiting")
    if lessons is None:
        return permanent, ""
    block, status = permanent
    if block:
        block = block + "\n" + str(lessons.PROPOSE_LINE)
    return (block, status), str(lessons.start_status(os.environ, project_root(payload)))


def turn_end(payload: dict[str, Any]) -> int:
    """Stop and SessionEnd: this session's snapshot brought up to its last turn from its
    transcript (mm_turn_capture); when the transcript did not change since the last capture,
    one small read and one stat. Nothing on stdout, at most one line on stderr, exit 0."""
    try:
        from . import mm_transcript_read

        if mm_transcript_read.nothing_new(payload, os.environ):
            line = ""
        else:
            from . import mm_turn_capture

            line = mm_turn_capture.hook(payload)
    except BaseException as exc:  # the hook boundary: never break the session, whatever it is
        event = payload.get("hook_event_name")
        line = f"ski-memory-manager hook: {event}: {type(exc).__name__}: {exc}"
    if line:
        say(line)
    if os.environ.get("CLAUDE_PLUGIN_OPTION_PROPOSE_AT_STOP"):
        try:
            asked = propose_at_stop(payload)
        except BaseException as exc:  # the hook boundary: never break the session
            asked = ""
            say(f"ski-memory-manager hook: propose_at_stop: {type(exc).__name__}: {exc}")
        if asked:
            hook_io.write_output(asked)
    return 0


def propose_at_stop(payload: dict[str, Any]) -> str:
    """The optional nudge (mm_nudge), when the option is on and the loader is beside."""
    from . import mm_nudge

    proposals = loader_module("writing.pm_proposals") if mm_nudge.option_on(os.environ) else None
    if proposals is None:
        return ""
    return mm_nudge.nudge(payload, os.environ, proposals, project_root(payload))


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    commands.add_parser(
        "hook",
        description="Read the hook JSON on stdin: at SessionStart print the resume block of "
        "this project's session memory; at PostCompact keep the compaction summary as a "
        "captured snapshot; at Stop and SessionEnd bring this session's snapshot up to its "
        "last turn. Always exits 0.",
    )


def main(argv: Sequence[str]) -> int:
    """`hook`: the hook JSON on stdin. A word after it (--help) goes to the parser."""
    if argv:
        from . import mm_cli

        mm_cli.parse_command("hook", add_parser, argv)
    return hook()


def hook() -> int:
    """Claude Code SessionStart: the resume block and the permanent-memory block as hook JSON,
    and a status line for the user; never fail, never print half."""
    payload: dict[str, Any] = {}
    resume = permanent = ("", "")
    try:
        payload = read_payload()
        event = payload.get("hook_event_name")
        if event == "PostCompact":
            return post_compact(payload)
        if event in ("Stop", "SessionEnd"):
            return turn_end(payload)
        resume = resume_context(payload, os.environ, time.time())
    except BaseException as exc:  # the hook boundary: never break the session, whatever it is
        say(f"ski-memory-manager hook: {type(exc).__name__}: {exc}")
    try:
        from . import mm_session

        mm_session.record_start(payload, os.environ, time.time())  # for `pause`
    except BaseException as exc:  # the hook boundary: never break the session, whatever it is
        say(f"ski-memory-manager hook: cannot record the session's start: {exc}")
    try:
        permanent = permanent_context(payload)
    except BaseException as exc:  # the loader's part (a tokenizer's panic is a BaseException)
        say(f"ski-memory-manager hook: permanent memory: {type(exc).__name__}: {exc}")
    waiting = ""
    try:
        permanent, waiting = lessons_context(payload, permanent)
    except BaseException as exc:  # the hook boundary: never break the session, whatever it is
        say(f"ski-memory-manager hook: proposed lessons: {type(exc).__name__}: {exc}")
    try:
        output = session_start_output(
            resume,
            permanent,
            payload.get("hook_event_name"),
            status_message_on(os.environ),
            waiting,
        )
    except BaseException as exc:  # the hook boundary: never break the session, whatever it is
        say(f"ski-memory-manager hook: {type(exc).__name__}: {exc}")
        return 0
    hook_io.write_output(output)
    return 0
