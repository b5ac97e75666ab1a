# `doctor`: is this machine and this project ready for session memory? One line per check, each
# failure with what to do about it. Python and PyYAML are required (FAIL, exit 1); the rest are
# warnings (a new project has no memory directory yet, and that is fine).
from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import mm_cli, mm_frontmatter, mm_snapshot, mm_store
from .shared import doctor_report, memory_text
from .shared.doctor_report import DoctorCheck, check_python

MAX_PARSED = 1000  # newest snapshots parsed; enough to find trouble, bounded on huge dirs
MAX_NAMED = 3

if TYPE_CHECKING:
    import argparse


def check_yaml() -> DoctorCheck:
    try:
        yaml = mm_frontmatter.require_yaml()
    except mm_frontmatter.YamlMissing:
        return DoctorCheck("pyyaml", "FAIL", "PyYAML is not installed", "pip install pyyaml")
    return DoctorCheck(
        "pyyaml", "ok", f"PyYAML {getattr(yaml, '__version__', '(unknown version)')}"
    )


def check_locking(memory_dir: Path) -> DoctorCheck:
    if not mm_store.HAVE_FLOCK:
        return DoctorCheck(
            "locking",
            "warn",
            "no fcntl on this platform: concurrent saves of one "
            "session are not serialised (each write is still atomic)",
            "save one session from one process at a time",
        )
    if not memory_dir.is_dir():
        return DoctorCheck(
            "locking",
            "warn",
            f"nothing to lock: no memory directory at {memory_dir}",
            "save creates it; the lock is the directory itself",
        )
    try:
        with mm_store.locked(memory_dir):
            pass
    except mm_store.StoreError as exc:
        return DoctorCheck("locking", "FAIL", str(exc), "put the memory directory on a local disk")
    return DoctorCheck("locking", "ok", f"fcntl.flock on the directory itself: {memory_dir}")


def check_memory_dir(memory_dir: Path) -> DoctorCheck:
    if not memory_dir.is_dir():
        return DoctorCheck(
            "memory-dir",
            "warn",
            f"no memory directory at {memory_dir}",
            f"mkdir -p {memory_dir} (save needs it; load-last works without)",
        )
    if not os.access(memory_dir, os.W_OK | os.X_OK):
        return DoctorCheck(
            "memory-dir",
            "warn",
            f"{memory_dir} is not writable",
            f"give yourself write permission on {memory_dir}",
        )
    return DoctorCheck("memory-dir", "ok", f"{memory_dir}")


def check_snapshots(memory_dir: Path, names: list[str]) -> list[DoctorCheck]:
    groups = mm_store.projects(names)
    snapshots = sorted((n for group in groups.values() for n in group), reverse=True)
    checks = []
    if not snapshots:
        checks.append(DoctorCheck("snapshots", "ok", "none yet"))
    else:
        parsed = snapshots[:MAX_PARSED]
        bad = []
        conflicted = []
        for name in parsed:
            try:
                text = mm_store.read_text(memory_dir / name)
                line = conflict_line(text)
                if line is not None:
                    conflicted.append(f"{name}:{line}")
                    bad.append(f"{name}: an unresolved merge conflict at line {line}")
                    continue
                mm_snapshot.parse_snapshot(text)
            except (mm_store.StoreError, mm_snapshot.SnapshotError) as exc:
                bad.append(f"{name}: {exc}")
        if conflicted:
            checks.append(conflicts_check(conflicted))
        scope = (
            f"{len(snapshots)}"
            if len(parsed) == len(snapshots)
            else (f"the newest {len(parsed)} of {len(snapshots)}")
        )
        projects = f"{len(groups)} project{'s' if len(groups) != 1 else ''}"
        if bad:
            shown = "; ".join(bad[:MAX_NAMED]) + ("; ..." if len(bad) > MAX_NAMED else "")
            checks.append(
                DoctorCheck(
                    "snapshots",
                    "warn",
                    f"{len(bad)} of {scope} snapshots ({projects}) do not parse: {shown}",
                    "repair or move them (load-last skips them; save will not update them)",
                )
            )
        else:
            noun = "snapshot parses" if len(snapshots) == 1 else "snapshots parse"
            checks.append(DoctorCheck("snapshots", "ok", f"{scope} {noun} ({projects})"))
    leftovers = [n for n in names if mm_store.is_temp_name(n)]
    if leftovers:
        checks.append(
            DoctorCheck(
                "temp-files",
                "warn",
                f"{len(leftovers)} temporary file(s) left by interrupted "
                f"saves, e.g. {sorted(leftovers)[0]}",
                "delete them when no save is running (they are never read)",
            )
        )
    return checks


def check_outside(memory_dir: Path, real: str) -> DoctorCheck:
    return DoctorCheck(
        "memory-dir",
        "FAIL",
        f"{memory_dir} leads outside the project (to {real}): save, load-last, list and the "
        "hook refuse it, reading and writing nothing there",
        f"replace the link with a directory of this project's own; to use {real} on purpose, "
        f"pass --memory-dir {real}",
    )


def conflict_line(text: str) -> int | None:
    """The 1-based line of the first git conflict marker (<<<<<<< or >>>>>>> at the start of a
    line, as git writes them), or None."""
    for number, line in enumerate(text.split("\n"), 1):
        if memory_text.conflict_mark(line) in ("<<<<<<<", ">>>>>>>"):
            return number
    return None


def conflicts_check(conflicted: list[str]) -> DoctorCheck:
    # A FAIL, not a warning: doctor's exit status is what a CI step or pre-commit hook sees.
    shown = ", ".join(conflicted[:MAX_NAMED]) + (", ..." if len(conflicted) > MAX_NAMED else "")
    return DoctorCheck(
        "conflicts",
        "FAIL",
        f"{len(conflicted)} snapshot(s) hold an unresolved merge conflict: {shown}",
        "keep one side's lines and delete the <<<<<<< ======= >>>>>>> lines; "
        f"{mm_cli.PROG} git-setup makes git merge a session by key",
    )


def run_checks(
    memory_dir: Path, version: tuple[int, ...] | None = None, outside: str | None = None
) -> list[DoctorCheck]:
    """The checks for `memory_dir`; `outside` is where it really leads when the project's
    `memory/` was refused for leading outside the project (then nothing in it is read)."""
    checks = [
        check_python(version or tuple(sys.version_info[:3]), sys.executable),
        check_yaml(),
        check_locking(memory_dir),
    ]
    if outside is not None:
        return [*checks, check_outside(memory_dir, outside)]
    checks.append(check_memory_dir(memory_dir))
    if not memory_dir.is_dir():
        return checks
    try:
        names = os.listdir(memory_dir)
    except OSError as exc:
        return [
            *checks,
            DoctorCheck(
                "snapshots",
                "warn",
                f"cannot list {memory_dir}: {exc.strerror or exc}",
                "check the directory's permissions",
            ),
        ]
    if checks[1].status != "ok":
        return [
            *checks,
            DoctorCheck("snapshots", "warn", "not checked (needs PyYAML)", "pip install pyyaml"),
        ]
    return checks + check_snapshots(memory_dir, names)


HELP = "check Python, PyYAML, file locking and the memory directory"
DESCRIPTION = (
    "Check Python, PyYAML, file locking and this project's memory directory; "
    "exit 1 if something required is missing or a snapshot holds a merge conflict."
)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mm_cli.add_command(commands, "doctor", HELP, DESCRIPTION)


def main(argv: Sequence[str]) -> int:
    return mm_cli.run(doctor, mm_cli.parse_command("doctor", add_parser, argv))


def doctor(args: argparse.Namespace) -> int:
    outside = None
    if args.memory_dir:
        memory_dir = Path(args.memory_dir)
    else:
        try:
            memory_dir = mm_cli.default_memory_dir(os.environ)
        except mm_cli.MemoryDirRefused as exc:
            memory_dir, outside = exc.memory_dir, exc.real
    checks = run_checks(memory_dir, outside=outside)
    sys.stdout.write(doctor_report.doctor_report(checks, args.format))
    return 1 if doctor_report.doctor_failed(checks) else 0
