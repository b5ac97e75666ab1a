#!/usr/bin/env python3
"""The two README commands: `demo` (see it work) and `test` (see its tests pass).

Both create or reuse `.venv/` at the repository root, so they need only `python3` (>= 3.9)
and access to PyPI; `test` also installs the pinned npm clients for the end-to-end checks
when `npm` is on PATH. `sync-shared` writes the skills' copies of the modules in `shared/`
(`--check`: only say which copy differs). `skill-zips [--out DIR]` writes one zip per skill for
uploading to Claude.ai (default folder `dist/skills/`).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import venv
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
E2E = ROOT / "scripts" / "e2e"
DEMO = ROOT / "examples" / "demo-project"
DEMO_PROJECT_NAME = "billing-api"
LOADER = ROOT / "skills" / "permanent-memory-loader" / "scripts" / "permanent_memory.py"
MANAGER = ROOT / "skills" / "ski-memory-manager" / "scripts" / "memory_manager.py"
# Modules both skills use (each skill uses every one of them: the file layer, the hooks' input
# and output, git set-up, the doctors' report, text cleaning). A skill folder is installed
# alone (`npx skillmds add`, a plugin install), so each one carries a committed copy of the
# canonical file in shared/.
SHARED = ROOT / "shared"
SHARED_MODULES = (
    "memory_io.py",
    "hook_io.py",
    "git_config.py",
    "doctor_report.py",
    "memory_text.py",
    "command_line.py",
)
SHARED_COPY_DIRS = (
    LOADER.parent / "project_memory_loader" / "shared",
    MANAGER.parent / "ski_memory_manager" / "shared",
)
SHARED_HEADER = (
    "# Generated from shared/{name} by `python3 scripts/dev.py sync-shared`; edit that file.\n"
)
# Editable installs from pyproject.toml alone (PEP 660) need pip 21.3; Python 3.9.0 ships 20.2.
MIN_PIP = (21, 3)
# The test extras include everything the base install has, so a venv set up by `test`
# serves `demo` too.
SUPERSETS = {"": ("", "test"), "test": ("test",)}
# What `test` gives pytest before the caller's arguments (a later `-n 0` or `--durations=N`
# wins): two workers, one per core of the machines this is developed and checked on (how tests
# are shared out between them: `--dist` in pyproject.toml), and the ten slowest tests at the end,
# so a test that grew slow is seen.
TEST_ARGS = ("-n", "2", "--durations=10")
USAGE = (
    "usage: python3 scripts/dev.py demo | test [pytest args ...] | sync-shared [--check]"
    " | skill-zips [--out DIR]"
)
SKILLS = ROOT / "skills"
ZIPS = ROOT / "dist" / "skills"
# What a skill folder may hold that the skill does not need: bytecode the hooks leave behind.
ZIP_SKIP_DIRS = frozenset({"__pycache__"})
ZIP_SKIP_SUFFIXES = (".pyc", ".pyo")
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # a fixed stamp: the same folder always gives the same zip


class DevError(Exception):
    pass


def venv_python(venv_dir: Path, os_name: str = os.name) -> Path:
    if os_name == "nt":
        return venv_dir / "Scripts" / "python.exe"
    return venv_dir / "bin" / "python"


def install_digest(pyproject: bytes, extras: str) -> str:
    return hashlib.sha256(pyproject + extras.encode()).hexdigest()


def stamp_path(venv_dir: Path, extras: str) -> Path:
    return venv_dir / f".installed-{extras or 'base'}"


def is_installed(venv_dir: Path, pyproject: bytes, extras: str) -> bool:
    # Installed when this set of extras, or one that contains it, was installed from this
    # very pyproject.toml.
    for candidate in SUPERSETS.get(extras, (extras,)):
        stamp = stamp_path(venv_dir, candidate)
        if stamp.is_file() and stamp.read_text() == install_digest(pyproject, candidate):
            return True
    return False


def pip_version(pip_version_output: str) -> tuple[int, ...]:
    match = re.match(r"pip (\d+)\.(\d+)", pip_version_output)
    if match is None:
        return ()
    return (int(match.group(1)), int(match.group(2)))


def env_with_venv(env: Mapping[str, str], venv_dir: Path) -> dict[str, str]:
    # The venv's bin first on PATH, so `python3` in test subprocesses is the venv's.
    result = dict(env)
    bin_dir = venv_python(venv_dir).parent
    result["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}" if env.get("PATH") else str(bin_dir)
    result["VIRTUAL_ENV"] = str(venv_dir)
    result.pop("PYTHONHOME", None)
    return result


def _run(cmd: Sequence[str | os.PathLike[str]], cwd: Path | None = None) -> None:
    subprocess.run([str(c) for c in cmd], check=True, cwd=cwd)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def create_venv(venv_dir: Path) -> None:
    _say(f"creating {venv_dir.name}/ ...")
    try:
        venv.EnvBuilder(with_pip=True).create(venv_dir)
    except subprocess.CalledProcessError as exc:
        raise DevError(
            f"could not create {venv_dir} with pip (on Debian or Ubuntu: "
            "`sudo apt install python3-venv`, then run this command again)"
        ) from exc


def ensure_pip(python: Path) -> None:
    probe = subprocess.run(
        [str(python), "-m", "pip", "--version"], capture_output=True, text=True, check=False
    )
    if probe.returncode != 0:
        _say("bootstrapping pip into .venv ...")
        _run([python, "-m", "ensurepip", "--upgrade"])
    elif pip_version(probe.stdout) < MIN_PIP:
        _say("upgrading pip in .venv ...")
        _run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"])


def ensure_venv(extras: str, venv_dir: Path = VENV) -> Path:
    python = venv_python(venv_dir)
    if not python.exists():
        create_venv(venv_dir)
    pyproject = (ROOT / "pyproject.toml").read_bytes()
    # Reinstall only when pyproject.toml (or the extras asked for) changed since the last install.
    if not is_installed(venv_dir, pyproject, extras):
        ensure_pip(python)
        label = f"project-memory[{extras}]" if extras else "project-memory"
        _say(f"installing {label} into .venv ...")
        target = f"{ROOT}[{extras}]" if extras else str(ROOT)
        pip_install = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        _run([python, *pip_install, "-e", target])
        stamp_path(venv_dir, extras).write_text(install_digest(pyproject, extras))
    return python


def ensure_npm_clients() -> None:
    npm = shutil.which("npm")
    if npm is None:
        _say("npm not found: end-to-end tests with Claude Code, Codex and skillmds will be skipped")
        return
    lock = E2E / "package-lock.json"
    stamp = E2E / "node_modules" / ".installed-lock"
    if not lock.exists():
        return
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    _say("installing pinned npm clients into scripts/e2e/node_modules ...")
    _run(
        [npm, "ci", "--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=error"], cwd=E2E
    )
    stamp.write_text(digest)


def shared_copy(name: str, canonical: str) -> str:
    return SHARED_HEADER.format(name=name) + canonical


def stale_copies(
    shared: Path = SHARED, copy_dirs: Sequence[Path] = SHARED_COPY_DIRS
) -> list[tuple[Path, str]]:
    # Each copy that is missing or differs from what sync-shared would write, with that text.
    stale = []
    for name in SHARED_MODULES:
        expected = shared_copy(name, (shared / name).read_text(encoding="utf-8"))
        for folder in copy_dirs:
            copy = folder / name
            if not copy.is_file() or copy.read_text(encoding="utf-8") != expected:
                stale.append((copy, expected))
    return stale


def sync_shared(
    check: bool, shared: Path = SHARED, copy_dirs: Sequence[Path] = SHARED_COPY_DIRS
) -> int:
    stale = stale_copies(shared, copy_dirs)
    for copy, expected in stale:
        shown = copy.relative_to(ROOT) if copy.is_relative_to(ROOT) else copy
        if check:
            _say(f"{shown} differs from shared/{copy.name}: run python3 scripts/dev.py sync-shared")
        else:
            copy.write_text(expected, encoding="utf-8")
            _say(f"wrote {shown}")
    return 1 if check and stale else 0


def skill_files(folder: Path) -> list[Path]:
    """The files of a skill folder that go into its zip, sorted; a link is an error."""
    found = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if ZIP_SKIP_DIRS & set(relative.parts) or path.name.endswith(ZIP_SKIP_SUFFIXES):
            continue
        if path.is_symlink():
            raise DevError(f"{path} is a link; a skill zip holds regular files only")
        if path.is_file():
            found.append(path)
    return found


def zip_mode(path: Path) -> int:
    """A member's mode as a release archive has it, whatever the umask of the checkout: a
    regular file, 0755 when it is executable (git records only that bit), else 0644."""
    executable = path.stat().st_mode & 0o111
    return stat.S_IFREG | (0o755 if executable else 0o644)


def write_skill_zip(folder: Path, out: Path) -> Path:
    """`out/<skill>.zip`: the skill folder at the root of the archive, as Claude.ai takes it."""
    target = out / f"{folder.name}.zip"
    handle, temporary = tempfile.mkstemp(dir=out, prefix=f".{folder.name}.", suffix=".zip")
    os.close(handle)
    try:
        with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in skill_files(folder):
                name = f"{folder.name}/{path.relative_to(folder).as_posix()}"
                info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
                info.create_system = 3  # Unix: the mode below is read by unzip
                info.external_attr = zip_mode(path) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
    return target


def skill_zips(out: Path, skills: Path = SKILLS) -> list[Path]:
    folders = sorted(p.parent for p in skills.glob("*/SKILL.md"))
    if not folders:
        raise DevError(f"no skill folders (*/SKILL.md) in {skills}")
    out.mkdir(parents=True, exist_ok=True)
    return [write_skill_zip(folder, out) for folder in folders]


def demo(python: Path) -> int:
    env = env_with_venv(os.environ, VENV)
    first = subprocess.run(
        [str(python), str(LOADER), "load", "--project-dir", str(DEMO)], env=env, check=False
    )
    print(flush=True)
    second = subprocess.run(
        [
            str(python),
            str(MANAGER),
            "load-last",
            "--memory-dir",
            str(DEMO / "memory"),
            "--project-name",
            DEMO_PROJECT_NAME,
        ],
        env=env,
        check=False,
    )
    return first.returncode or second.returncode


def test(python: Path, pytest_args: Sequence[str]) -> int:
    ensure_npm_clients()
    env = env_with_venv(os.environ, VENV)
    result = subprocess.run(
        [str(python), "-m", "pytest", *TEST_ARGS, *pytest_args], cwd=ROOT, env=env, check=False
    )
    return result.returncode


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("demo", "test", "sync-shared", "skill-zips"):
        print(USAGE, file=sys.stderr)
        return 2
    command, rest = args[0], args[1:]
    # Reachable: this file still parses on older Pythons, which should get a clear message.
    if sys.version_info < (3, 9):  # noqa: UP036
        print("error: project-memory needs Python 3.9 or newer", file=sys.stderr)
        return 1
    if command == "sync-shared":
        if rest not in ([], ["--check"]):
            print(USAGE, file=sys.stderr)
            return 2
        return sync_shared(check=bool(rest))
    try:
        if command == "skill-zips":
            if rest and (len(rest) != 2 or rest[0] != "--out"):
                print(USAGE, file=sys.stderr)
                return 2
            for written in skill_zips(Path(rest[1]) if rest else ZIPS):
                print(written)
            return 0
        if command == "demo":
            if rest:
                print(USAGE, file=sys.stderr)
                return 2
            return demo(ensure_venv(""))
        return test(ensure_venv("test"), rest)
    except DevError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as exc:
        print(f"error: {' '.join(map(str, exc.cmd))} exited {exc.returncode}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
