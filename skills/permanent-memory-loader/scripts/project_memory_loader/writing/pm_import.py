# `permanent_memory.py import PATH…`: the decision records and rule files a project already has,
# as epics. Reads each file (within the project, bounded, UTF-8), recognises its format
# (pm_import_formats), plans its epic (pm_import_plan), and, with --write, adds or updates the
# epics under the directory's lock, the live file kept within its cap (pm_live_cap). Without
# --write it writes nothing anywhere. See references/import.md.
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from ..core import pm_cli
from ..core.pm_cli import plural, say
from ..core.pm_errors import MemoryFileError
from ..core.pm_parse import Epic, normalise_text, parse_permanent
from ..shared import memory_io
from .pm_archive_plan import ARCHIVE_DIR, text_without
from .pm_epic_input import InvalidEntry
from .pm_import_formats import SUPERSEDED, NotARecord, Record, file_parts, parse_record
from .pm_import_plan import (
    ARCHIVE,
    LIVE,
    SIGNALS,
    Planned,
    Tree,
    build_tree,
    epic_id,
    epic_text,
    plan_record,
    record_paths,
    stamp_parts,
    updated_entry,
)
from .pm_live_cap import write_live
from .pm_write_file import encode_as, inside, make_dirs, memory_path, read_for_writing

HELP = "turn decision records and rule files into epics (dry run first)"
MAX_RECORD_BYTES = 512 * 1024
MAX_FILES = 20000
SUFFIXES = (".md", ".mdc", ".markdown")
IMPORTED_ARCHIVE = "imported.md"  # where superseded and deprecated records go
GIT_TIMEOUT = 30
IMPORTED_HEADER = (
    "# Imported records no longer in force\n"
    "\n"
    "Epics `permanent_memory.py import` made from superseded or deprecated decision records.\n"
    "Prompt-time recall and `search` read this folder; the block shown at session start does\n"
    "not.\n"
)


class Skip(NamedTuple):
    path: str
    why: str


class Found(NamedTuple):
    path: str  # project-relative, `/`-separated
    record: Record


def relative(root: Path, path: Path) -> str:
    return os.path.relpath(os.path.abspath(path), os.path.abspath(root)).replace(os.sep, "/")


def gather(root: Path, given: Sequence[str]) -> tuple[list[tuple[str, Path]], list[Skip]]:
    """Every file the PATHs name (folders walked in name order, links never followed out of
    the project), and the ones skipped before reading, with why."""
    files: list[tuple[str, Path]] = []
    skipped: list[Skip] = []
    for name in given:
        path = Path(name) if os.path.isabs(name) else Path(os.getcwd()) / name
        try:
            memory_io.inside_project(root, path)
        except memory_io.OutsideProject as exc:
            skipped.append(Skip(name, f"outside the project ({exc.real})"))
            continue
        if path.is_dir():
            folders = log4brains_folders(root, path)
            if folders:
                files_in, skipped_in = gather(root, [str(f) for f in folders])
                files.extend(files_in)
                skipped.extend(skipped_in)
                continue
            for folder, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") or d in (".claude",
                                 ".cursor", ".github", ".rules", ".instructions"))  # fmt: skip
                dirs[:] = [d for d in dirs if d not in (ARCHIVE_DIR, "node_modules")]
                for file_name in sorted(names):
                    files.append((relative(root, Path(folder, file_name)), Path(folder, file_name)))
        elif path.exists() or path.is_symlink():
            files.append((relative(root, path), path))
        else:
            skipped.append(Skip(name, "not found"))
    return files, skipped


def log4brains_folders(root: Path, path: Path) -> list[Path]:
    """The record folders a `.log4brains.yml` in `path` names (`project.adrFolder` and each
    package's `adrFolder`, relative to it), when it has one; else none."""
    config = path / ".log4brains.yml"
    if not config.is_file():
        return []
    text = read_record(root, config)
    if isinstance(text, Skip):
        return []
    import yaml

    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError, ValueError):
        return []
    project = data.get("project") if isinstance(data, dict) else None
    if not isinstance(project, dict):
        return []
    named = [project.get("adrFolder")]
    packages = project.get("packages")
    if isinstance(packages, list):
        named += [p.get("adrFolder") for p in packages if isinstance(p, dict)]
    return [path / folder for folder in named if isinstance(folder, str) and folder]


def read_record(root: Path, path: Path) -> str | Skip:
    shown = relative(root, path)
    try:
        data, size = memory_io.read_inside(root, path, MAX_RECORD_BYTES)
    except memory_io.OutsideProject as exc:
        return Skip(shown, f"a link out of the project (to {exc.real}); not read")
    except memory_io.NotRegularFile:
        return Skip(shown, "not a regular file")
    except OSError as exc:
        return Skip(shown, f"cannot read: {exc.strerror or exc}")
    if data is None:
        return Skip(shown, f"{size // 1024} KiB, over {MAX_RECORD_BYTES // 1024} KiB; not a record")
    if b"\0" in data:
        return Skip(shown, "binary")
    try:
        return normalise_text(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return Skip(shown, f"not UTF-8 (byte {exc.start})")


def read_records(root: Path, files: Sequence[tuple[str, Path]]) -> tuple[list[Found], list[Skip]]:
    found: list[Found] = []
    skipped: list[Skip] = []
    names = {shown for shown, _path in files}
    for shown, path in files:
        if shown.endswith("/kep.yaml") and shown.rsplit("/", 1)[0] + "/README.md" in names:
            continue  # read with its README.md
        if not shown.lower().endswith(SUFFIXES):
            skipped.append(Skip(shown, "not a Markdown file"))
            continue
        text = read_record(root, path)
        if isinstance(text, Skip):
            skipped.append(text)
            continue
        kep_yaml = None
        if shown.endswith("/README.md"):
            beside = path.parent / "kep.yaml"
            if beside.is_file():
                kep = read_record(root, beside)
                kep_yaml = kep if isinstance(kep, str) else None
        try:
            found.append(Found(shown, parse_record(shown, text, kep_yaml)))
        except NotARecord as exc:
            skipped.append(Skip(shown, f"no known format: {exc}"))
    return found, skipped


def git_lines(root: Path, args: Sequence[str]) -> list[str] | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace").split("\n")


def git_history(root: Path, paths: Sequence[str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """For each record path, the date git first saw it (YYYY-MM-DD, the commit that added it),
    and the other files changed by the commits that touched it. One git call for the dates,
    one for the commits' files; nothing when the project is not a git work tree."""
    first: dict[str, str] = {}
    commits: dict[str, list[str]] = {}
    if not paths:
        return first, commits
    lines = git_lines(root, ["log", "--format=%x01%H %aI", "--name-only", "--", *paths])
    if lines is None:
        return first, commits
    wanted = set(paths)
    current, day = "", ""
    for line in lines:
        if line.startswith("\x01"):
            current, _, stamp = line[1:].partition(" ")
            day = stamp[:10]
        elif line in wanted:
            first[line] = day  # newest first: the last one seen is the oldest
            commits.setdefault(line, []).append(current)
    return first, commits


def cochanged(root: Path, commits: dict[str, list[str]]) -> dict[str, list[str]]:
    every = sorted({sha for shas in commits.values() for sha in shas})
    if not every:
        return {}
    lines = git_lines(root, ["show", "--no-walk", "--format=%x01%H", "--name-only", *every])
    if lines is None:
        return {}
    files: dict[str, list[str]] = {}
    current = ""
    for line in lines:
        if line.startswith("\x01"):
            current = line[1:]
        elif line:
            files.setdefault(current, []).append(line)
    result = {}
    for record, shas in commits.items():
        result[record] = [f for sha in shas if len(files.get(sha, ())) <= 40 for f in files[sha]]
    return result


def project_tree(root: Path) -> Tree:
    """The project's files: git's list of them (untracked ones too, ignored ones not), else a
    walk of the folder (hidden folders and node_modules left out), at most MAX_FILES * 10."""
    lines = git_lines(root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    if lines is not None:
        return build_tree(p for p in "\n".join(lines).split("\0") if p)
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
        found.extend(relative(root, Path(folder, name)) for name in names)
        if len(found) > MAX_FILES * 10:
            break
    return build_tree(found)


def successor_of(record: Record, path: str, by_number: dict[tuple[str, str], str]) -> str:
    """A superseded record's successor as an epic ID when it names a record being imported
    (by file name or number, in the same folder), else as written."""
    text = record.successor
    if not text:
        return ""
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    name = re.search(r"([\w.-]+\.md)", text)
    if name is not None:
        _day, number, _slug = file_parts(name.group(1))
        if (folder, number.lstrip("0")) in by_number:
            return by_number[(folder, number.lstrip("0"))]
    number_found = re.search(r"(\d{1,6})", text)
    if number_found is not None and (folder, number_found.group(1).lstrip("0")) in by_number:
        return by_number[(folder, number_found.group(1).lstrip("0"))]
    return text


class Action(NamedTuple):
    kind: str  # "add", "update", "unchanged", "move", "conflict"
    planned: Planned
    where: str  # LIVE or ARCHIVE: where the epic ends up
    detail: str = ""


def plan_all(
    found: Sequence[Found],
    root: Path,
    signals: Sequence[str],
    now: datetime,
) -> tuple[list[Planned], list[Skip]]:
    first_seen, commits = git_history(root, [f.path for f in found])
    changes = cochanged(root, commits) if "git" in signals else {}
    tree = project_tree(root) if signals else build_tree(())
    skipped: list[Skip] = []
    names: list[str] = []
    by_number: dict[tuple[str, str], str] = {}
    for item in found:
        name = epic_id(item.record, item.path)
        if name in names:  # the same number and slug in two folders: the folder tells them apart
            parent = item.path.rsplit("/", 2)[-2] if item.path.count("/") >= 1 else ""
            name = f"{name[:20]}-{re.sub(r'[^A-Za-z0-9]+', '-', parent)[-7:]}".strip("-")
            while name in names:
                name += "-2"
        names.append(name)
        if item.record.number:
            folder = item.path.rsplit("/", 1)[0] if "/" in item.path else ""
            by_number.setdefault((folder, item.record.number.lstrip("0")), name)
    result = []
    for item, name in zip(found, names):
        record = item.record
        completed = record.date or first_seen.get(item.path) or mtime_day(root / item.path)
        paths = record_paths(record, item.path, tree, signals, changes.get(item.path, ()))
        successor = (
            successor_of(record, item.path, by_number) if record.status == SUPERSEDED else ""
        )
        try:
            result.append(plan_record(record, item.path, completed, paths, successor, now, name))
        except InvalidEntry as exc:
            skipped.append(Skip(item.path, f"cannot be written as an epic: {exc}"))
    return result, skipped


def mtime_day(path: Path) -> str:
    try:
        moment = datetime.fromtimestamp(os.stat(path).st_mtime, timezone.utc)
    except OSError:
        moment = datetime.now(timezone.utc)
    return moment.date().isoformat()


class Texts(NamedTuple):
    live: str
    archives: dict[Path, str]  # archive file -> its text (normalised), every one read


def on_file(texts: Texts) -> dict[str, tuple[Path | None, Epic]]:
    """Each imported epic on file by its record's path: (None for the live file, else the
    archive file, the epic)."""
    found: dict[str, tuple[Path | None, Epic]] = {}
    for where, text in [(None, texts.live), *texts.archives.items()]:
        for epic in parse_permanent(text):
            if epic.source and epic.source not in found:
                found[epic.source] = (where, epic)
    return found


def replace_epic(text: str, epic: Epic, new_section: str) -> str:
    lines = text.split("\n")
    before = "\n".join(lines[: epic.start_line])
    after = "\n".join(lines[epic.end_line :]).strip("\n")
    return (before + "\n" if before else "") + new_section.rstrip("\n") + "\n" + (
        "\n" + after + "\n" if after else "")  # fmt: skip


def append_epic(text: str, section: str) -> str:
    base = text.rstrip("\n")
    return (base + "\n\n" if base.strip() else "") + section.rstrip("\n") + "\n"


def apply(planned: Sequence[Planned], texts: Texts, imported: Path) -> tuple[list[Action], Texts]:
    """The actions and the files' new texts: new epics appended (to the live file, or to the
    imported archive for superseded records), changed ones replaced where they are, an epic
    whose record became superseded moved to the archive."""
    live = texts.live
    archives = dict(texts.archives)
    actions: list[Action] = []
    ids_on_file = {epic.epic_id: epic.source for epic in parse_permanent(live)}
    for text in archives.values():
        ids_on_file.update({e.epic_id: e.source for e in parse_permanent(text)})
    for plan in planned:
        known = on_file(Texts(live, archives)).get(plan.record_path)
        if known is None:
            if plan.epic_id in ids_on_file:
                actions.append(Action("conflict", plan, LIVE, "an epic with this ID not imported "
                                      "from this record is on file; left alone"))  # fmt: skip
                continue
            section = epic_text(plan, plan.entry)
            if plan.target == LIVE:
                live = append_epic(live, section)
            else:
                archives[imported] = append_epic(archives.get(imported) or IMPORTED_HEADER, section)
            ids_on_file[plan.epic_id] = plan.record_path
            actions.append(Action("add", plan, plan.target))
            continue
        where, epic = known
        parts = stamp_parts(epic.source_stamp)
        in_archive = where is not None
        wanted_archive = plan.target == ARCHIVE
        if parts is not None and parts[0] == plan.digest and (in_archive or not wanted_archive):
            actions.append(Action("unchanged", plan, ARCHIVE if in_archive else LIVE))
            continue
        section = epic_text(plan, updated_entry(plan, epic))
        if wanted_archive and not in_archive:
            live = text_without(
                live.split("\n"),
                parse_permanent(live),
                {i for i, e in enumerate(parse_permanent(live)) if e.source == plan.record_path},
            )
            archives[imported] = append_epic(archives.get(imported) or IMPORTED_HEADER, section)
            actions.append(Action("move", plan, ARCHIVE))
        elif where is None:
            live = replace_epic(live, epic, section)
            actions.append(Action("update", plan, LIVE))
        else:
            archives[where] = replace_epic(archives[where], epic, section)
            actions.append(Action("update", plan, ARCHIVE))
    return actions, Texts(live, archives)


def read_texts(path: Path) -> tuple[Texts, dict[Path, object]]:
    """The live file's text and every archive file's, with what each was (for writing back)."""
    current = read_for_writing(path)
    like: dict[Path, object] = {path: current}
    archives: dict[Path, str] = {}
    folder = path.parent / ARCHIVE_DIR
    if folder.is_dir():
        inside(path.parent, folder)
        for archive in sorted(folder.glob("*.md")):
            existing = read_for_writing(archive)
            if existing is not None:
                archives[archive] = existing.text
                like[archive] = existing
    return Texts(current.text if current else "", archives), like


def run_import(args: argparse.Namespace) -> int:
    path, explicit = memory_path(args.file, args.project_dir)
    root = pm_cli.project_dir(args.project_dir)
    now = args.now or datetime.now(timezone.utc)
    signals = [s for s in args.paths.split(",") if s] if args.paths != "none" else []
    for signal in signals:
        if signal not in SIGNALS:
            build_parser().error(f"--paths: {signal!r} is not one of {', '.join(SIGNALS)}")
    files, skipped = gather(root, args.paths_given)
    found, unread = read_records(root, files)
    skipped += unread
    planned, unplanned = plan_all(found, root, signals, now)
    skipped += unplanned
    imported = path.parent / ARCHIVE_DIR / IMPORTED_ARCHIVE
    counting = pm_cli.write_counting(args.tokenizer)
    note = None
    if not args.write:
        texts = read_texts(path)[0] if path.parent.is_dir() else Texts("", {})
        actions, _new = apply(planned, texts, imported)
    else:
        if not path.parent.is_dir():
            if explicit:
                raise MemoryFileError(f"directory not found: {path.parent}")
            make_dirs(path.parent)
        with memory_io.locked(path.parent):
            texts, like = read_texts(path)
            actions, new = apply(planned, texts, imported)
            for archive, text in new.archives.items():
                if texts.archives.get(archive) != text:
                    inside(path.parent, archive)
                    make_dirs(archive.parent)
                    memory_io.atomic_write(archive, encode_as(text, like.get(archive)))  # type: ignore[arg-type]
            if new.live != texts.live:
                written = write_live(path, like[path], new.live, counting, now)  # type: ignore[arg-type]
                note = written.note
    report(args, path, actions, skipped, note)
    return 0


VERBS = {
    "add": ("would add", "added"),
    "update": ("would update", "updated"),
    "move": ("would archive", "archived"),
    "unchanged": ("unchanged", "unchanged"),
    "conflict": ("would skip", "skipped"),
}


def report(
    args: argparse.Namespace,
    path: Path,
    actions: Sequence[Action],
    skipped: Sequence[Skip],
    note: str | None,
) -> None:
    if note:
        say(note)
    if args.format == "json":
        pm_cli.emit_json(
            {
                "path": str(path),
                "dry_run": not args.write,
                "epics": [
                    {
                        "action": a.kind,
                        "id": a.planned.epic_id,
                        "source": a.planned.record_path,
                        "where": a.where,
                        "intent": a.planned.entry.intent,
                        "completed": a.planned.entry.completed,
                        "paths": list(a.planned.entry.paths),
                        "detail": a.detail,
                        "notes": list(a.planned.notes),
                    }
                    for a in actions
                ],
                "skipped": [{"path": s.path, "why": s.why} for s in skipped],
                "archive_note": note,
            }
        )
        return
    out = []
    for action in actions:
        verb = VERBS[action.kind][1 if args.write else 0]
        where = " (archive)" if action.where == ARCHIVE and action.kind != "unchanged" else ""
        detail = f": {action.detail}" if action.detail else f": {action.planned.entry.intent}"
        out.append(
            f"{verb} {action.planned.epic_id}{where} from {action.planned.record_path}{detail}"
        )
        if action.kind in ("add", "update", "move"):
            out.extend(f"  note: {n}" for n in action.planned.notes)
    out.extend(f"skipped {s.path}: {s.why}" for s in skipped)
    counts = {kind: sum(1 for a in actions if a.kind == kind) for kind in VERBS}
    done = ", ".join(
        f"{counts[kind]} {VERBS[kind][1 if args.write else 0]}" for kind in VERBS if counts[kind]
    )
    summary = f"{plural(len(actions), 'record')} ({done or 'none'}), " + (
        f"{plural(len(skipped), 'file')} skipped")  # fmt: skip
    if args.write:
        out.append(f"{summary}; {path}")
    else:
        out.append(f"{summary}; nothing written (dry run: --write writes {path})")
    sys.stdout.write("".join(line + "\n" for line in out))


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser(
        "import",
        "Read decision records (Nygard/adr-tools, MADR, log4brains, RFC and KEP folders) and "
        "other agents' path-scoped rule files (.claude/rules, .cursor/rules, "
        ".github/instructions) and turn each into an epic with a Source line. A dry run unless "
        "--write. Importing again changes only epics whose record changed, keeping the lines "
        "added to them since; superseded records go to archive/imported.md.",
    )
    parser.add_argument("paths_given", nargs="+", metavar="PATH", help="a record or a folder")
    parser.add_argument("--write", action="store_true", help="write the epics (default: dry run)")
    parser.add_argument(
        "--paths",
        default="named",
        metavar="SIGNALS",
        help="where the Paths lines come from, comma-separated: named (files and folders the "
        "record names that exist), tree (folders and files named like the record's terms), "
        "git (files changed with the record); none for no Paths lines (default: named)",
    )
    pm_cli.add_writing_options(parser)
    pm_cli.add_now(parser, "the date of a record without one and outside git (default: now)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = pm_cli.parse_writing_args(build_parser(), "import", argv)
    return pm_cli.run(lambda: run_import(args))
