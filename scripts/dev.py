#!/usr/bin/env python3
"""The two README commands: `demo` (see it work) and `test` (see its tests pass).

Both create or reuse `.venv/` at the repository root, so they need only `python3` (>= 3.9)
and access to PyPI; `test` also installs the pinned npm clients for the end-to-end checks
when `npm` is on PATH.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
E2E = ROOT / "scripts" / "e2e"
DEMO = ROOT / "examples" / "demo-project"
DEMO_PROJECT_NAME = "billing-api"


def _venv_python() -> Path:
    if os.name == "nt":
        return VENV / "Scripts" / "python.exe"
    return VENV / "bin" / "python"


def _run(cmd: Sequence[str | os.PathLike[str]], **kwargs: object) -> None:
    subprocess.run([str(c) for c in cmd], check=True, **kwargs)  # type: ignore[call-overload]


def ensure_venv(extras: str) -> Path:
    python = _venv_python()
    if not python.exists():
        print(f"creating {VENV.relative_to(ROOT)}/ ...", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    # Reinstall only when pyproject.toml (or the extras asked for) changed since the last install.
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    stamp = VENV / f".installed-{extras or 'base'}"
    if not stamp.exists() or stamp.read_text() != digest:
        print(f"installing project-memory{extras and f'[{extras}]'} into .venv ...", file=sys.stderr)
        target = f"{ROOT}[{extras}]" if extras else str(ROOT)
        _run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", target])
        stamp.write_text(digest)
    return python


def ensure_npm_clients() -> None:
    npm = shutil.which("npm")
    if npm is None:
        print("npm not found: end-to-end tests with Claude Code and skillmds will be skipped",
              file=sys.stderr)
        return
    lock = E2E / "package-lock.json"
    stamp = E2E / "node_modules" / ".installed-lock"
    if not lock.exists():
        return
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    print("installing pinned npm clients into scripts/e2e/node_modules ...", file=sys.stderr)
    _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=E2E)
    stamp.write_text(digest)


def _env_with_venv(python: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(VENV)
    return env


def demo(python: Path) -> int:
    env = _env_with_venv(python)
    loader = ROOT / "skills" / "permanent-memory-loader" / "scripts" / "permanent_memory.py"
    manager = ROOT / "skills" / "ski-memory-manager" / "scripts" / "memory_manager.py"
    first = subprocess.run(
        [str(python), str(loader), "load", "--project-dir", str(DEMO)], env=env, check=False
    )
    print()
    sys.stdout.flush()
    second = subprocess.run(
        [str(python), str(manager), "load-last", "--memory-dir", str(DEMO / "memory"),
         "--project-name", DEMO_PROJECT_NAME],
        env=env, check=False,
    )
    return first.returncode or second.returncode


def test(python: Path, pytest_args: Sequence[str]) -> int:
    ensure_npm_clients()
    env = _env_with_venv(python)
    result = subprocess.run([str(python), "-m", "pytest", *pytest_args], cwd=ROOT, env=env,
                            check=False)
    return result.returncode


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("demo", "test"):
        print("usage: python3 scripts/dev.py demo | test [pytest args ...]", file=sys.stderr)
        return 2
    command, rest = args[0], args[1:]
    if sys.version_info < (3, 9):
        print("project-memory needs Python 3.9 or newer", file=sys.stderr)
        return 1
    try:
        if command == "demo":
            return demo(ensure_venv(""))
        return test(ensure_venv("test"), rest)
    except subprocess.CalledProcessError as exc:
        print(f"error: {' '.join(map(str, exc.cmd))} exited {exc.returncode}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
