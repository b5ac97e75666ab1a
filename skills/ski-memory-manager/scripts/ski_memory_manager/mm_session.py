# When each client session started, and where its hook looked for snapshots: the SessionStart
# hook records it once per session id in the user's cache folder (never the repository), and
# `pause` (and the PostCompact capture) read it back, so every pause of one session lands in one
# snapshot named after the session's start. Also where the captured snapshots of a project live
# in that folder, and the option that says whether they live there. The user's cache folder,
# not the plugin's data folder: a command the model runs does not get $CLAUDE_PLUGIN_DATA (so
# `load-last` and `list` could not find captures there), Claude Code refuses one that names it
# as "${CLAUDE_PLUGIN_DATA}" where it is not filled in (a skill installed alone), and Codex's
# data folder is another than Claude Code's, while both clients may work on one project. The
# hook runs this on every session start: standard library only, no json, one small file
# created once per session.
#
# A record is a few `name=value` lines:
#   mm-session-1
#   started=2026-12-01-09-30          the session's start, UTC, as a session timestamp
#   project_dir=/home/me/billing      $CLAUDE_PROJECT_DIR as the hook saw it ('' when unset)
#   cwd=/home/me/billing              the hook JSON's cwd
#   memory_dir_option=notes/sessions  the plugin's memory_dir option ('' when unset)
from __future__ import annotations

import os
import time

from .shared import hook_io, memory_io

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

FORMAT = "mm-session-1"
FOLDER = "starts"
CAPTURED = "captured"  # the captured snapshots, one folder per project (mm_capture writes them)
CAPTURE_OPTION = "CLAUDE_PLUGIN_OPTION_CAPTURE"
CAPTURE_MODES = ("user", "project", "off")
MAX_RECORD_BYTES = 8192
KEEP_DAYS = 30
MEMORY_DIR_OPTION = "CLAUDE_PLUGIN_OPTION_MEMORY_DIR"
FIELDS = ("started", "project_dir", "cwd", "memory_dir_option")


class SessionStart:
    """One record. A plain class: a NamedTuple would import typing into the session-start
    hook, which otherwise does without it."""

    __slots__ = FIELDS

    def __init__(self, started: str, project_dir: str, cwd: str, memory_dir_option: str) -> None:
        self.started = started  # YYYY-MM-DD-HH-MM, UTC
        self.project_dir = project_dir
        self.cwd = cwd
        self.memory_dir_option = memory_dir_option

    def values(self) -> tuple[str, str, str, str]:
        return self.started, self.project_dir, self.cwd, self.memory_dir_option

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SessionStart) and self.values() == other.values()

    def __hash__(self) -> int:
        return hash(self.values())

    def __repr__(self) -> str:
        return f"SessionStart{self.values()!r}"


def starts_dir(env: Mapping[str, str]) -> str | None:
    """Where the records live: $XDG_CACHE_HOME/project-memory/session-memory/starts, else
    ~/.cache/project-memory/session-memory/starts; None without either."""
    folder = hook_io.cache_dir("session-memory", {"XDG_CACHE_HOME": env.get("XDG_CACHE_HOME", "")})
    return None if folder is None else os.path.join(folder, FOLDER)


def capture_mode(env: Mapping[str, str]) -> tuple[str, str]:
    """Where captured snapshots go: `user` (the default: the user's cache folder, per project),
    `project` (the project's session-memory folder) or `off`; and a note when the option's
    value is none of them (then the default applies)."""
    value = env.get(CAPTURE_OPTION, "").strip().lower()
    if not value:
        return "user", ""
    if value in CAPTURE_MODES:
        return value, ""
    if value in ("false", "0", "no", "none"):
        return "off", ""
    return "user", f"note: ignoring {CAPTURE_OPTION}={value[:40]!r} (want user, project or off)"


def session_ref(session_id: str) -> str:
    """What a captured snapshot records of its session: a digest of the id, not the id."""
    return hook_io.digest(session_id.encode("utf-8", "surrogatepass"))[:16]


def captured_dir(env: Mapping[str, str], project_dir: str) -> str | None:
    """The folder of one project's captured snapshots in the user's cache folder:
    captured/{folder name}-{digest of its real path}; None without a cache folder."""
    folder = starts_dir(env)
    name = hook_io.project_folder(project_dir)
    if folder is None or name is None:
        return None
    return os.path.join(os.path.dirname(folder), CAPTURED, name)


def record_path(folder: str, session_id: str) -> str | None:
    """The record of one session: its id as the file name when it is a plain id (letters,
    digits, '-', '_', at most 100), else a digest of it; None for an empty id."""
    if not session_id or "\0" in session_id:
        return None
    plain = session_id.replace("-", "").replace("_", "")
    if plain.isascii() and plain.isalnum() and len(session_id) <= 100:
        return os.path.join(folder, session_id)
    return os.path.join(folder, hook_io.digest(session_id.encode("utf-8", "surrogatepass")))


def format_record(start: SessionStart) -> str | None:
    """The record's text; None when a value cannot be kept on one line."""
    values = start.values()
    if any("\n" in value or "\r" in value or "\0" in value for value in values):
        return None
    lines = [FORMAT, *(f"{name}={value}" for name, value in zip(FIELDS, values))]
    return "\n".join(lines) + "\n"


def parse_record(text: str) -> SessionStart | None:
    """A record's fields, or None when the text is not a whole record of this format."""
    lines = text.split("\n")
    if not lines or lines[0] != FORMAT:
        return None
    values = dict(line.split("=", 1) for line in lines[1:] if "=" in line)
    if any(name not in values for name in FIELDS):
        return None
    started = values["started"]
    if len(started) != 16 or not started.replace("-", "").isdigit() or not started.isascii():
        return None
    return SessionStart(started, values["project_dir"], values["cwd"], values["memory_dir_option"])


def stamp_of(moment: float) -> str:
    return time.strftime("%Y-%m-%d-%H-%M", time.gmtime(moment))


def record_start(payload: Mapping[str, object], env: Mapping[str, str], now: float) -> None:
    """At session start: write this session's record unless it has one (a resumed, cleared or
    compacted session keeps its first). Raises OSError when the folder cannot take it."""
    session_id = payload.get("session_id")
    folder = starts_dir(env)
    if folder is None or not isinstance(session_id, str):
        return
    path = record_path(folder, session_id)
    if path is None or os.path.lexists(path):
        return
    cwd = payload.get("cwd")
    text = format_record(
        SessionStart(
            stamp_of(now),
            env.get("CLAUDE_PROJECT_DIR", ""),
            cwd if isinstance(cwd, str) else "",
            env.get(MEMORY_DIR_OPTION, ""),
        )
    )
    if text is None:
        return
    os.makedirs(folder, mode=0o700, exist_ok=True)
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return  # another hook of the same session got there first
    try:
        os.write(handle, text.encode("utf-8", "surrogatepass"))
    finally:
        os.close(handle)


def read_start(folder: str, session_id: str) -> SessionStart | None:
    """The session's record, or None when it has none (or it cannot be read)."""
    path = record_path(folder, session_id)
    if path is None:
        return None
    try:
        data, _size = memory_io.read_regular(path, MAX_RECORD_BYTES)
    except (OSError, memory_io.MemoryIOError):
        return None
    if data is None:
        return None
    return parse_record(data.decode("utf-8", "surrogatepass"))


def write_start(folder: str, session_id: str, start: SessionStart) -> None:
    """Record a session's start after the fact (a pause in a session no hook recorded)."""
    path = record_path(folder, session_id)
    text = format_record(start)
    if path is None or text is None:
        return
    os.makedirs(folder, mode=0o700, exist_ok=True)
    memory_io.atomic_write(path, text.encode("utf-8", "surrogatepass"), durable=False)


def prune_starts(folder: str, now: float, keep_days: int = KEEP_DAYS) -> None:
    """Forget the records of sessions that started more than keep_days ago."""
    hook_io.forget_older(folder, now - keep_days * 86400)
