# The thin shell around the pure core: each command reads the environment, the clock, stdin and
# the memory directory, calls mm_snapshot / mm_render, and prints. Core errors are typed; they
# become one stderr line and exit 1 in memory_manager.main.
from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import memory_io
import memory_text
import mm_frontmatter
import mm_render
import mm_snapshot
import mm_store

SIZE_WARNING = 2048  # bytes; snapshots are meant to be 1-2 KB
MAX_HOOK_STDIN = 1024 * 1024
MEMORY_DIR_OPTION = "CLAUDE_PLUGIN_OPTION_MEMORY_DIR"
CREATE_DIR_HINT = "to create it, run the same save again with --create-dir"
# The SessionStart listing's budget, for the whole hook: snapshots are 1-2 KB, and a hostile
# memory/ (dense 230 KB snapshots, 150,000 dangling links named like snapshots) must neither
# hold the session's start nor flood stderr. What the hook did not get to is said once.
# Pure-Python YAML parses dense front matter at tens of KB a second: a front matter larger than
# this (a snapshot's is under 1 KB) is skipped by the hook, not parsed; load-last reads it.
HOOK_YAML_BYTES = 8 * 1024
HOOK_TOTAL_BYTES = 128 * 1024
HOOK_TRIES = 50
HOOK_SECONDS = 1.5
HOOK_WARNINGS = 5


class CommandError(Exception):
    """An expected failure; str() is the one-line message, exit 1. `hint`, when given, is a
    second line saying how to go on."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class MemoryDirRefused(CommandError):
    """The project's `memory/` leads outside the project: nothing is read or written there."""

    def __init__(self, memory_dir: Path, real: str) -> None:
        self.memory_dir = memory_dir
        self.real = real
        super().__init__(
            f"memory directory {memory_dir} leads outside the project (to {real}); refused: "
            f"pass --memory-dir {real} to use it on purpose"
        )


def say(line: str, stream: Any = None) -> None:
    """One diagnostic line on stderr, made safe to show to a model (stderr reaches it too):
    no control characters, no markup, no secret echoed back from a rejected value."""
    stream = stream or sys.stderr
    if stream is None:  # stderr closed: print(file=None) would write to stdout instead
        return
    try:
        print(" ".join(memory_text.clean(line).split("\n")), file=stream)
    except (OSError, ValueError):  # a diagnostic must never become the failure
        pass


def dump_json(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def parse_now(text: str | None) -> datetime:
    if text is None:
        return datetime.now(timezone.utc)
    moment = mm_snapshot.parse_iso(text)
    if moment is None:
        raise mm_snapshot.InvalidField(
            f"--now must be an ISO 8601 date-time like 2026-05-01T10:00:00Z (got {text!r})"
        )
    return moment


def project_dir(env: Mapping[str, str], fallback: str | None = None) -> Path:
    """$CLAUDE_PROJECT_DIR, else the given fallback (the hook JSON's cwd), else the cwd."""
    for candidate in (env.get("CLAUDE_PROJECT_DIR"), fallback):
        if candidate and "\0" not in candidate:
            return Path(candidate)
    return Path.cwd()


def default_memory_dir(env: Mapping[str, str], fallback: str | None = None) -> Path:
    """The plugin's memory-dir option (relative to the project dir), else `memory/` there.

    The option is the user's and may point anywhere; `memory/` is the repository's, and a clone
    may link it to another project's: it must not lead outside the project (OutsideProject)."""
    base = project_dir(env, fallback)
    option = env.get(MEMORY_DIR_OPTION, "").strip()
    if option:
        if "\0" in option or "\n" in option:
            say(f"note: ignoring {MEMORY_DIR_OPTION} (not a path); using memory/")
        else:
            return base / Path(option).expanduser()
    memory_dir = base / "memory"
    try:
        memory_io.inside_project(base, memory_dir)
    except memory_io.OutsideProject as exc:
        raise MemoryDirRefused(memory_dir, exc.real) from None
    return memory_dir


# --- save --------------------------------------------------------------------------------------


def _read_source(flag: str, source: str) -> str:
    try:
        if source == "-":
            raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
        else:
            raw = Path(source).read_bytes()
    except OSError as exc:
        raise CommandError(f"{flag}: cannot read {source}: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise CommandError(f"{flag}: not UTF-8 text") from None


def parse_json_fields(text: str) -> dict[str, Any]:
    """--input: a JSON object of fields (for programs)."""
    import json

    try:
        data = json.loads(text)
    except RecursionError:
        raise CommandError("--input: invalid JSON: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise CommandError(
            f"--input: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    if not isinstance(data, dict):
        raise CommandError(
            '--input must be a JSON object of fields, like {"project_name": "my-project", ...}'
        )
    return data


def parse_yaml_fields(text: str) -> dict[str, Any]:
    """--yaml: a block YAML mapping of the same fields (for a model on a quoted heredoc: block
    YAML needs no braces, which Claude Code refuses next to quotes in a command). Read with the
    snapshots' loader: no anchors or aliases, bounded nesting."""
    yaml = mm_frontmatter.require_yaml()
    loader = mm_frontmatter.snapshot_loader(yaml)(text)
    try:
        data = loader.get_single_data()
    except mm_frontmatter.FrontMatterError as exc:
        # Its line numbers count a snapshot's opening '---'; the input has none, so drop them.
        message = str(exc).replace("front matter", "the input").split(" at line ")[0]
        raise CommandError(f"--yaml: {message}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise CommandError(f"--yaml: invalid YAML{where}: {problem}") from None
    except RecursionError:
        raise CommandError("--yaml: invalid YAML: nested too deeply") from None
    except Exception as exc:  # a value PyYAML resolves but cannot build, e.g. 2026-02-30
        detail = str(exc).strip().split("\n", 1)[0][:200] or type(exc).__name__
        raise CommandError(f"--yaml: invalid value: {detail}") from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise CommandError("--yaml must be a mapping of fields, one 'name: value' per line")
    return data


def read_fields(json_source: str | None, yaml_source: str | None) -> dict[str, Any]:
    """The fields given on --input (JSON) or --yaml (YAML), as a dict; validation is elsewhere."""
    if json_source is not None and yaml_source is not None:
        raise CommandError("give the fields with --input (JSON) or --yaml, not both")
    if json_source is not None:
        return parse_json_fields(_read_source("--input", json_source))
    if yaml_source is not None:
        return parse_yaml_fields(_read_source("--yaml", yaml_source))
    return {}


def save(args: Any) -> int:
    import mm_update

    if args.project_name is not None:  # reject path tricks before touching any file
        mm_snapshot.validate_project_name(args.project_name)
    now = parse_now(args.now)
    data = read_fields(args.input, args.yaml)
    flags = {
        "project_name": args.project_name,
        "session_timestamp": args.session_timestamp,
        "mode": args.mode,
        "status": args.status,
        "last_checkpoint": args.last_checkpoint,
        "checkpoints_approved": args.checkpoints_approved,
        "target_dir": args.target_dir,
    }
    data.update((key, value) for key, value in flags.items() if value is not None)
    if data.get("session_timestamp") is None and data.get("project_name") is not None:
        data["session_timestamp"] = mm_snapshot.session_stamp(now)
    update = mm_update.parse_input(data)
    for key in mm_update.COMPUTED_FIELDS:
        if data.get(key) is not None:
            say(f"note: {key} is computed by the memory manager; ignoring the given value")
    memory_dir = _memory_dir_for_save(args.memory_dir, data.get("memory_dir"))
    if not memory_dir.is_dir() and not args.create_dir:
        raise CommandError(f"memory directory not found at {memory_dir}", CREATE_DIR_HINT)
    mm_frontmatter.require_yaml()
    if not memory_dir.is_dir():
        create_memory_dir(memory_dir)
    path = memory_dir / mm_store.snapshot_name(update.session_timestamp, update.project_name)
    with mm_store.locked(memory_dir):
        saved, mode = _saved_snapshot(path)
        merged, redacted = mm_update.redact_snapshot(mm_update.merge(saved, update, now))
        for name in redacted:
            say(f"warning: {name} held a secret; it is stored as {memory_text.REDACTED}")
        encoded = mm_snapshot.format_snapshot(merged).encode("utf-8")
        if len(encoded) > mm_store.MAX_SNAPSHOT_BYTES:
            raise CommandError(
                f"snapshot would be {len(encoded)} bytes, over the "
                f"{mm_store.MAX_SNAPSHOT_BYTES} limit; save a 1-2 KB summary"
            )
        if len(encoded) > SIZE_WARNING:
            say(
                f"warning: {path.name} is {len(encoded)} bytes; keep snapshots to 1-2 KB "
                "(summaries, not the full record)"
            )
        mm_store.atomic_write(path, encoded, mode)
    if args.format == "json":
        sys.stdout.write(
            dump_json(
                {
                    "path": str(path),
                    "created": saved is None,
                    "bytes": len(encoded),
                    "redacted": redacted,
                }
            )
        )
    else:
        print(path)
    return 0


def create_memory_dir(memory_dir: Path) -> None:
    """Create the memory directory and any missing parents, each made durable in its parent."""
    missing = []
    folder = memory_dir
    while not os.path.lexists(folder) and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except OSError as exc:
            raise CommandError(f"cannot create {folder}: {exc.strerror or exc}") from None
        memory_io.fsync_dir(folder.parent)
    if not memory_dir.is_dir():
        raise CommandError(f"cannot create {memory_dir}: something else is in its place")
    say(f"note: created {memory_dir}")


def _memory_dir_for_save(flag: str | None, from_input: object) -> Path:
    if flag is not None:
        return Path(flag)
    if from_input is not None:
        if not isinstance(from_input, str) or not from_input or "\0" in from_input:
            raise mm_snapshot.InvalidField("memory_dir must be a path (a non-empty string)")
        return Path(from_input)
    return default_memory_dir(os.environ)


def _saved_snapshot(path: Path) -> tuple[mm_snapshot.Snapshot | None, int | None]:
    """The snapshot already saved for this session (None if there is none) and its mode."""
    if not os.path.lexists(path):
        return None, None
    try:
        text = mm_store.read_text(path)
        return mm_snapshot.parse_snapshot(text), os.stat(path).st_mode & 0o7777
    except (mm_store.StoreError, mm_snapshot.SnapshotError, OSError) as exc:
        raise CommandError(
            f"cannot update {path}: {exc}; fix the file or save under another session timestamp"
        ) from None


# --- load-last and list -----------------------------------------------------------------------


def _listing(memory_dir: Path) -> list[str]:
    try:
        return os.listdir(memory_dir)
    except OSError as exc:
        raise CommandError(
            f"cannot read memory directory {memory_dir}: {exc.strerror or exc}"
        ) from None


class ReadBudget:
    """What the hook may still spend on reading snapshots: files, bytes, time and warnings."""

    def __init__(self, now: float | None = None) -> None:
        self.deadline = (time.monotonic() if now is None else now) + HOOK_SECONDS
        self.tries = HOOK_TRIES
        self.total_bytes = HOOK_TOTAL_BYTES
        self.warnings = HOOK_WARNINGS
        self.unsaid = 0  # warnings left out
        self.stopped = ""  # why the hook stopped reading ("" while it has not)

    def spent(self) -> bool:
        if not self.stopped:
            if self.tries <= 0:
                self.stopped = f"tried {HOOK_TRIES} files"
            elif self.total_bytes <= 0:
                self.stopped = f"read {HOOK_TOTAL_BYTES // 1024} KiB"
            elif time.monotonic() > self.deadline:
                self.stopped = f"spent {HOOK_SECONDS:g} s"
        return bool(self.stopped)

    def warn(self, line: str) -> None:
        if self.warnings > 0:
            self.warnings -= 1
            say(line)
        else:
            self.unsaid += 1

    def close(self) -> None:
        """One last line: warnings left out, and where the hook stopped."""
        parts = [f"{self.unsaid} more warnings left out"] if self.unsaid else []
        if self.stopped:
            parts.append(f"stopped reading snapshots after it {self.stopped}")
        if parts:
            say(f"ski-memory-manager hook: {'; '.join(parts)}; run memory_manager.py doctor")


def first_readable(
    memory_dir: Path, names: Iterable[str], budget: ReadBudget | None = None
) -> tuple[mm_render.Found | None, int]:
    """The first of `names` that reads as a snapshot, and how many were skipped before it
    (each unreadable one with a warning on stderr). With a budget (the hook), it stops when the
    budget is spent, and a front matter over HOOK_YAML_BYTES is skipped without being parsed."""
    skipped = 0
    warn = budget.warn if budget is not None else say
    for name in names:
        if budget is not None:
            if budget.spent():
                break
            budget.tries -= 1
        try:
            text = mm_store.read_text(memory_dir / name)
            limit = None
            if budget is not None:
                budget.total_bytes -= len(text)
                limit = HOOK_YAML_BYTES
            return mm_render.Found(name, text, mm_snapshot.parse_header(text, limit)), skipped
        except (mm_store.StoreError, mm_snapshot.SnapshotError) as exc:
            warn(f"warning: skipping {name}: {exc}")
            skipped += 1
    return None, skipped


def load_last(args: Any) -> int:
    project = mm_snapshot.validate_project_name(args.project_name)
    now = parse_now(args.now)
    memory_dir = Path(args.memory_dir) if args.memory_dir else default_memory_dir(os.environ)
    found, skipped = None, 0
    if memory_dir.is_dir():
        names = _listing(memory_dir)
        _warn_misnamed(memory_dir, names, project)
        candidates = mm_store.newest_first(names, project)
        found, skipped = first_readable(memory_dir, candidates)
    else:
        say(f"note: memory directory not found at {memory_dir}")
    if found is None:
        if skipped:
            say(f"warning: no readable snapshot for project '{project}' ({skipped} skipped)")
        return _no_memory(args.format, project)
    if args.format == "json":
        session = found.name[: mm_store.STAMP_LEN]
        fields = mm_render.row_fields(
            mm_render.Row(project, session, str(memory_dir / found.name), found.snapshot), now
        )
        sys.stdout.write(
            dump_json(
                {
                    "found": True,
                    **fields,
                    "stamp": mm_render.STAMP,
                    "resume_line": mm_render.resume_line(project, found.snapshot, session, now),
                    "content": memory_text.clean(found.text),
                }
            )
        )
    else:
        sys.stdout.write(mm_render.load_last_block(project, found, now))
    return 0


def _warn_misnamed(memory_dir: Path, names: list[str], project: str) -> None:
    odd = mm_store.misnamed(names, project)
    if not odd:
        return
    shown = memory_text.clean(str(memory_dir / odd[0]))
    more = f" and {len(odd) - 1} more" if len(odd) > 1 else ""
    say(
        f"warning: {shown}{more} not read: a snapshot of '{project}' is named "
        f"YYYY-MM-DD-HH-MM-{project}.md"
    )


def _no_memory(output_format: str, project: str) -> int:
    message = mm_render.no_memory(project)
    if output_format == "json":
        sys.stdout.write(dump_json({"found": False, "project": project, "message": message}))
    else:
        print(message)
    return 0


def list_snapshots(args: Any) -> int:
    project = args.project_name
    if project is not None:
        mm_snapshot.validate_project_name(project)
    now = parse_now(args.now)
    memory_dir = Path(args.memory_dir) if args.memory_dir else default_memory_dir(os.environ)
    if not memory_dir.is_dir():
        raise CommandError(f"memory directory not found at {memory_dir}")
    groups = mm_store.projects(_listing(memory_dir))
    rows: list[mm_render.Row] = []
    if project is not None:
        for name in groups.get(project, []):
            found, _ = first_readable(memory_dir, [name])
            rows.append(
                mm_render.Row(
                    project,
                    name[: mm_store.STAMP_LEN],
                    str(memory_dir / name),
                    found.snapshot if found is not None else None,
                )
            )
    else:
        for name, group in groups.items():
            found, _ = first_readable(memory_dir, group)
            if found is None:
                say(f"warning: no readable snapshot for project '{name}'")
                continue
            rows.append(
                mm_render.Row(
                    name,
                    found.name[: mm_store.STAMP_LEN],
                    str(memory_dir / found.name),
                    found.snapshot,
                )
            )
        rows.sort(key=lambda row: row.project)
        rows.sort(key=lambda row: _touched_key(row), reverse=True)
    if args.format == "json":
        sys.stdout.write(dump_json([mm_render.row_fields(row, now) for row in rows]))
    elif not rows:
        print(
            mm_render.no_memory(project)
            if project is not None
            else f"No session memory found in {memory_dir}"
        )
    else:
        sys.stdout.write(mm_render.list_table(rows, now, by_session=project is not None))
    return 0


def _touched_key(row: mm_render.Row) -> float:
    if row.snapshot is None:
        return float("-inf")
    touched = mm_render.touched_at(row.snapshot, row.session)
    return touched.timestamp() if touched is not None else float("-inf")


# --- hook --------------------------------------------------------------------------------------


def hook_output(payload: object, env: Mapping[str, str], now: datetime) -> str:
    """The SessionStart block for the project the hook runs in ('' when there is nothing)."""
    return resume(payload, env, now).block


class Resume(NamedTuple):
    """The resume block, its part of the user's status line, and what it was made from."""

    block: str
    status: str
    memory_dir: str
    files: list[str]  # the snapshot names read (or tried) for it
    touched: list[datetime]  # the "last touched" times it shows
    complete: bool = True  # False when the read budget ran out (then it depends on the clock)


def resume(payload: object, env: Mapping[str, str], now: datetime) -> Resume:
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    base = project_dir(env, cwd if isinstance(cwd, str) else None)
    try:
        memory_dir = default_memory_dir(env, cwd if isinstance(cwd, str) else None)
    except MemoryDirRefused as exc:
        say(f"ski-memory-manager hook: {exc}")
        return Resume("", "", "", [], [])
    if not memory_dir.is_dir():
        return Resume("", "", str(memory_dir), [], [])
    groups = mm_store.projects(_listing(memory_dir))
    ranked = sorted(groups, key=lambda name: (groups[name][0], name), reverse=True)
    found: list[tuple[str, mm_render.Found]] = []
    budget = ReadBudget()
    files: list[str] = []
    for name in ranked[: mm_render.HOOK_PROJECTS]:
        item, skipped = first_readable(memory_dir, groups[name], budget)
        files.extend(groups[name][: skipped + 1])
        if item is not None:
            found.append((name, item))
        if budget.spent():
            break
    budget.close()
    complete = not budget.stopped
    if not found:
        return Resume("", "", str(memory_dir), files, [], complete)
    found.sort(
        key=lambda pair: _touched_key(
            mm_render.Row(pair[0], pair[1].name[: mm_store.STAMP_LEN], "", pair[1].snapshot)
        ),
        reverse=True,
    )
    try:
        label = str(memory_dir.relative_to(base)) + "/"
    except ValueError:
        label = str(memory_dir)
    more = max(len(ranked) - mm_render.HOOK_PROJECTS, 0)
    touched = [
        moment
        for _, item in found
        if (moment := mm_render.touched_at(item.snapshot, item.name[: mm_store.STAMP_LEN]))
    ]
    return Resume(
        mm_render.hook_block(found, label, more, now),
        mm_render.hook_status(found, more),
        str(memory_dir),
        files,
        touched,
        complete,
    )


def resume_and_store(
    payload: dict[str, Any], env: Mapping[str, str], now: float, slot: str, key: str
) -> tuple[str, str]:
    """The session-start hook's cache miss: render the resume block, and cache it in slot ("" for
    none) with what it was made from, so that mm_hot can tell when it is no longer true."""
    import mm_hot

    cwd = payload.get("cwd")
    try:
        memory_dir = str(default_memory_dir(env, cwd if isinstance(cwd, str) else None))
    except MemoryDirRefused:
        return resume(payload, env, datetime.fromtimestamp(now, timezone.utc))[:2]  # says why
    # Taken before reading, so that a change made meanwhile shows as a change next time.
    names = mm_hot.listing_digest(memory_dir)
    moment = datetime.fromtimestamp(now, timezone.utc)
    before: dict[str, list[int] | None] = {}
    if names != "missing":
        groups = mm_store.projects(_listing(Path(memory_dir)))
        for group in groups.values():
            before[group[0]] = mm_hot.file_stamp(os.path.join(memory_dir, group[0]))
    made = resume(payload, env, moment)
    import json

    if slot and made.memory_dir == memory_dir and made.complete:
        files = [
            [name, before.get(name) or mm_hot.file_stamp(os.path.join(memory_dir, name))]
            for name in made.files
        ]
        changes = [mm_render.ago_changes_in((moment - t).total_seconds()) for t in made.touched]
        entry = {
            "format": mm_hot.CACHE_FORMAT,
            "key": key,
            "valid_until": now + min(changes) if changes else None,
            "memory_dir": memory_dir,
            "names": names,
            "files": files,
            "block": made.block,
            "status": made.status,
        }
        try:
            os.makedirs(os.path.dirname(slot), mode=0o700, exist_ok=True)
            data = json.dumps(entry, ensure_ascii=False).encode("utf-8", "surrogatepass")
            memory_io.atomic_write(Path(slot), data)
        except (OSError, memory_io.MemoryIOError) as exc:
            say(f"ski-memory-manager hook: cannot write its cache: {exc}")
    return made.block, made.status
