"""`pip install .` gives `permanent-memory` and `ski-memory`, running the skill scripts' code.

The project is built into a wheel from a copy of its sources, the wheel is installed with pip
into a new virtual environment, and the installed commands are run side by side with the skill
scripts on the same arguments: their stdout, stderr and exit codes must match. The new venv
borrows this interpreter's site-packages (PyYAML, tiktoken) through a .pth line, so nothing but
the wheel's build backend comes from the network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import pytest
import support
from conftest import LOADER_DIR, MANAGER_DIR, ROOT
from support import clean_env, run_command

DEMO = ROOT / "examples" / "demo-project"
NOW = "2026-11-29T12:00:00Z"
TIMEOUT = 120
# What setuptools needs to build the distribution; the rest of the tree stays out of the copy.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "skills")


class Installed(NamedTuple):
    python: Path
    bin_dir: Path
    site_packages: Path


def _venv_paths(venv_dir: Path) -> tuple[Path, Path]:
    scheme = "nt" if os.name == "nt" else "posix_prefix"
    paths = sysconfig.get_paths(scheme, vars={"base": str(venv_dir), "platbase": str(venv_dir)})
    return Path(paths["scripts"]), Path(paths["purelib"])


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    # One wheel and one venv for the whole test run, whichever xdist workers run these tests;
    # the commands only read it.
    paths = support.once_per_run(tmp_path_factory, "pip-install", _build_and_install)
    return Installed(*map(Path, paths))


def _build_and_install(work: Path) -> list[str]:
    source = work / "source"
    source.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif path.exists():
            shutil.copy2(path, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "wheel", "--quiet", "--no-deps", "--wheel-dir", str(work / "dist"), str(source)],
        check=True,
        timeout=300,
    )
    [wheel] = (work / "dist").glob("project_memory-*.whl")

    venv_dir = work / "venv"
    venv.EnvBuilder(with_pip=True).create(venv_dir)
    bin_dir, site_packages = _venv_paths(venv_dir)
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    # The dependencies, from this interpreter (appended after the venv's own site-packages).
    (site_packages / "borrowed_dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n"
    )
    subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-index",
            wheel,
        ],
        check=True,
        timeout=300,
    )
    return [str(python), str(bin_dir), str(site_packages)]


def _run(cmd: Sequence[str | Path], cwd: Path) -> tuple[int, str, str]:
    env = clean_env()
    env["NO_COLOR"] = "1"
    env["XDG_CACHE_HOME"] = str(cwd / "cache")  # doctor probes the cache dir
    result = run_command(cmd, env=env, cwd=cwd, timeout=TIMEOUT)
    return result.code, result.out, result.err


CASES = [
    ("permanent-memory", LOADER_DIR / "permanent_memory.py", ["--help"]),
    ("permanent-memory", LOADER_DIR / "permanent_memory.py", ["load", "--help"]),
    (
        "permanent-memory",
        LOADER_DIR / "permanent_memory.py",
        ["load", "--project-dir", str(DEMO), "--now", NOW],
    ),
    (
        "permanent-memory",
        LOADER_DIR / "permanent_memory.py",
        ["load", "--project-dir", str(DEMO), "--now", NOW, "--format", "json", "--explain"],
    ),
    (
        "permanent-memory",
        LOADER_DIR / "permanent_memory.py",
        ["inspect", "--project-dir", str(DEMO), "--now", NOW],
    ),
    (
        "permanent-memory",
        LOADER_DIR / "permanent_memory.py",
        ["doctor", "--project-dir", str(DEMO)],
    ),
    # Expected error: same message, same exit code.
    ("permanent-memory", LOADER_DIR / "permanent_memory.py", ["load", "--target", "many"]),
    ("ski-memory", MANAGER_DIR / "memory_manager.py", ["--help"]),
    ("ski-memory", MANAGER_DIR / "memory_manager.py", ["load-last", "--help"]),
    (
        "ski-memory",
        MANAGER_DIR / "memory_manager.py",
        [
            "load-last",
            "--memory-dir",
            str(DEMO / "memory"),
            "--project-name",
            "billing-api",
            "--now",
            NOW,
        ],
    ),
    (
        "ski-memory",
        MANAGER_DIR / "memory_manager.py",
        ["list", "--memory-dir", str(DEMO / "memory"), "--format", "json"],
    ),
    (
        "ski-memory",
        MANAGER_DIR / "memory_manager.py",
        ["load-last", "--memory-dir", str(DEMO / "missing"), "--project-name", "billing-api"],
    ),
    (
        "ski-memory",
        MANAGER_DIR / "memory_manager.py",
        ["doctor", "--memory-dir", str(DEMO / "memory")],
    ),
]


@pytest.mark.parametrize(
    ("command", "script", "args"),
    CASES,
    ids=[f"{c}-{'-'.join(a[:2])}" for c, _, a in CASES],
)
def test_installed_command_matches_the_skill_script(
    installed: Installed, tmp_path: Path, command: str, script: Path, args: list[str]
) -> None:
    from_package = _run([installed.bin_dir / command, *args], tmp_path)
    # The script run under the command's name, as the command names itself (`usage:
    # permanent-memory load …`; argparse wraps the usage by that name's length).
    typed = tmp_path / "bin" / command
    typed.parent.mkdir()
    typed.symlink_to(script)
    from_script = _run([installed.python, typed, *args], tmp_path)
    # Each counts with the encoding file bundled beside its own code: only that path differs.
    package = str(installed.site_packages / "project_memory_loader")
    skill = str(LOADER_DIR / "project_memory_loader")
    status, out, err = from_package
    assert (status, out.replace(package, skill), err.replace(package, skill)) == from_script
    assert from_package[1] or from_package[2]  # it said something


@pytest.mark.parametrize(
    ("command", "args", "usage"),
    [
        ("permanent-memory", ["--help"], "usage: permanent-memory [-h] COMMAND ..."),
        ("permanent-memory", ["load", "--help"], "usage: permanent-memory load [-h]"),
        ("ski-memory", ["--help"], "usage: ski-memory [-h] COMMAND ..."),
        ("ski-memory", ["load-last", "--help"], "usage: ski-memory load-last [-h]"),
    ],
)
def test_installed_commands_name_themselves_as_typed(
    installed: Installed, tmp_path: Path, command: str, args: list[str], usage: str
) -> None:
    status, out, err = _run([installed.bin_dir / command, *args], tmp_path)
    assert (status, err) == (0, "")
    assert out.startswith(usage), out
    assert ".py" not in out.split("\n\n")[0], out  # the usage names no script file


def test_an_installed_command_s_errors_name_it_as_typed(
    installed: Installed, tmp_path: Path
) -> None:
    status, out, err = _run([installed.bin_dir / "permanent-memory", "nonsense"], tmp_path)
    assert (status, out, err) == (
        2,
        "",
        "usage: permanent-memory [-h] COMMAND ...\n"
        "permanent-memory: error: invalid choice: 'nonsense' (choose from load, hook, inspect, "
        "show, search, doctor, add, archive, import, check, merge, git-setup, propose, review)\n",
    )
    status, out, err = _run([installed.bin_dir / "ski-memory", "nonsense"], tmp_path)
    assert (status, out) == (2, "")
    assert err.startswith("usage: ski-memory [-h] COMMAND ...\nski-memory: error: "), err


def test_the_installed_commands_run_the_installed_copy(
    installed: Installed, tmp_path: Path
) -> None:
    code = (
        "import project_memory_loader.permanent_memory as a, "
        "ski_memory_manager.memory_manager as b; print(a.__file__); print(b.__file__)"
    )
    status, out, err = _run([installed.python, "-c", code], tmp_path)
    assert status == 0, err
    for line in out.splitlines():
        assert Path(line).is_relative_to(installed.site_packages), line


def test_wheel_carries_both_skills_whole(installed: Installed) -> None:
    # Every Python file of each skill's scripts folder is in the installed package.
    for package, folder in (
        ("project_memory_loader", LOADER_DIR),
        ("ski_memory_manager", MANAGER_DIR),
    ):
        expected = {p.name for p in folder.glob("*.py")}
        present = {p.name for p in (installed.site_packages / package).glob("*.py")}
        assert expected <= present, expected - present


def test_load_shows_the_demo_block(installed: Installed, tmp_path: Path) -> None:
    status, out, err = _run(
        [installed.bin_dir / "permanent-memory", "load", "--project-dir", DEMO, "--now", NOW],
        tmp_path,
    )
    assert status == 0, err
    assert out.startswith("[permanent-memory | trust:file]\n")
    status, out, err = _run(
        [
            installed.bin_dir / "ski-memory",
            "load-last",
            "--memory-dir",
            DEMO / "memory",
            "--project-name",
            "billing-api",
            "--now",
            NOW,
        ],
        tmp_path,
    )
    assert status == 0, err
    assert out.startswith(
        "[session-memory | trust:file]\n"
        "Resuming `billing-api` (last touched 4 days ago, status: in-progress at CP-S2)\n\n"
    )
