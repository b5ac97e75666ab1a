from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from conftest import ROOT
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(ROOT / "scripts"))
import dev

PYPROJECT = b'[project]\nname = "x"\n'
SYNC = "python3 scripts/dev.py sync-shared"


def test_no_command_prints_usage_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert dev.main([]) == 2
    assert capsys.readouterr() == (
        "",
        "usage: python3 scripts/dev.py demo | test [pytest args ...] | sync-shared [--check]"
        " | skill-zips [--out DIR]\n",
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["deploy"],
        ["--help"],
        ["demo", "--now", "2026-01-01"],
        ["sync-shared", "--force"],
        ["sync-shared", "--check", "--check"],
    ],
)
def test_unknown_command_or_demo_arguments_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert dev.main(argv) == 2
    assert capsys.readouterr() == ("", dev.USAGE + "\n")


@pytest.mark.parametrize(
    ("os_name", "expected"),
    [("posix", Path("v/bin/python")), ("nt", Path("v/Scripts/python.exe"))],
)
def test_venv_python(os_name: str, expected: Path) -> None:
    assert dev.venv_python(Path("v"), os_name) == expected


def test_install_digest_depends_on_pyproject_and_extras() -> None:
    digests = {
        dev.install_digest(PYPROJECT, ""),
        dev.install_digest(PYPROJECT, "test"),
        dev.install_digest(PYPROJECT + b"\n", ""),
    }
    assert len(digests) == 3


@pytest.mark.parametrize(
    ("stamps", "extras", "expected"),
    [
        ({}, "", False),
        ({}, "test", False),
        ({"base": ""}, "", True),
        ({"test": "test"}, "test", True),
        # `test` installs everything `demo` needs, so its stamp serves both...
        ({"test": "test"}, "", True),
        # ...but not the other way round.
        ({"base": ""}, "test", False),
        # A stamp left by an older pyproject.toml asks for a reinstall.
        ({"base": "stale"}, "", False),
        ({"test": "stale"}, "test", False),
    ],
)
def test_is_installed(tmp_path: Path, stamps: dict[str, str], extras: str, expected: bool) -> None:
    for name, stamped_extras in stamps.items():
        content = (
            "0" * 64 if stamped_extras == "stale" else dev.install_digest(PYPROJECT, stamped_extras)
        )
        (tmp_path / f".installed-{name}").write_text(content)
    assert dev.is_installed(tmp_path, PYPROJECT, extras) is expected


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("pip 20.2.3 from /x/lib/python3.9/site-packages/pip (python 3.9)\n", (20, 2)),
        ("pip 23.2.1 from /x (python 3.11)", (23, 2)),
        ("pip 24.0 from /x (python 3.12)", (24, 0)),
        ("", ()),
        ("/x/python: No module named pip", ()),
    ],
)
def test_pip_version(output: str, expected: tuple[int, ...]) -> None:
    assert dev.pip_version(output) == expected


@given(st.text())
def test_pip_version_never_raises(output: str) -> None:
    assert len(dev.pip_version(output)) in (0, 2)


def test_old_pip_is_below_the_pep660_minimum() -> None:
    assert dev.pip_version("pip 20.2.3 from x") < dev.MIN_PIP <= dev.pip_version("pip 21.3 from x")


def test_env_with_venv_puts_the_venv_first_on_path() -> None:
    venv_dir = Path("/r/.venv")
    env = dev.env_with_venv({"PATH": "/usr/bin:/bin", "PYTHONHOME": "/x", "LANG": "C"}, venv_dir)
    assert env == {
        "PATH": f"{dev.venv_python(venv_dir).parent}{os.pathsep}/usr/bin:/bin",
        "VIRTUAL_ENV": str(venv_dir),
        "LANG": "C",
    }


def test_env_with_venv_without_path() -> None:
    venv_dir = Path("/r/.venv")
    env = dev.env_with_venv({}, venv_dir)
    assert env["PATH"] == str(dev.venv_python(venv_dir).parent)


def test_ensure_venv_reuses_an_installed_venv(tmp_path: Path) -> None:
    # A venv whose stamp matches the current pyproject.toml is used as it is: nothing runs.
    python = dev.venv_python(tmp_path)
    python.parent.mkdir(parents=True)
    python.write_text("not a real interpreter: running it would fail the test\n")
    pyproject = (ROOT / "pyproject.toml").read_bytes()
    (tmp_path / ".installed-test").write_text(dev.install_digest(pyproject, "test"))
    assert dev.ensure_venv("", tmp_path) == python
    assert dev.ensure_venv("test", tmp_path) == python
    assert sorted(p.name for p in tmp_path.iterdir()) == [".installed-test", python.parent.name]


@pytest.mark.slow
def test_ensure_pip_bootstraps_a_venv_created_without_pip(tmp_path: Path) -> None:
    # An interrupted first run can leave a venv without pip; the next run repairs it.
    venv.EnvBuilder(with_pip=False).create(tmp_path / "v")
    python = dev.venv_python(tmp_path / "v")
    dev.ensure_pip(python)
    probe = subprocess.run(
        [str(python), "-m", "pip", "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert dev.pip_version(probe.stdout) >= dev.MIN_PIP


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "python3 scripts/dev.py test" in lines
    assert "python3 scripts/dev.py test" in (ROOT / "README.md").read_text()


def test_test_command_runs_pytest_in_the_venv_with_the_given_arguments() -> None:
    # `--version` makes the inner pytest cheap; the rest of the path (venv reuse, npm check,
    # PATH) is the real one.
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "dev.py"), "test", "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    # npm may print its summary first when it had to install the pinned clients.
    assert result.stdout.splitlines()[-1].startswith("pytest "), result.stdout


def test_the_skills_copies_of_the_shared_modules_are_current() -> None:
    # The check the README asks for after editing shared/: every copy is what sync-shared writes.
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "dev.py"), "sync-shared", "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    for name in dev.SHARED_MODULES:
        canonical = (dev.SHARED / name).read_text(encoding="utf-8")
        for folder in dev.SHARED_COPY_DIRS:
            copy = (folder / name).read_text(encoding="utf-8")
            assert copy.startswith(f"# Generated from shared/{name} by `python3 scripts/dev.py ")
            assert copy.endswith(canonical)


def test_sync_shared_writes_missing_and_stale_copies_and_check_names_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared, skill_a, skill_b = tmp_path / "shared", tmp_path / "a", tmp_path / "b"
    for folder in (shared, skill_a, skill_b):
        folder.mkdir()
    for name in dev.SHARED_MODULES:
        (shared / name).write_text(f"X = {name!r}\n")
    (skill_a / "memory_io.py").write_text(dev.shared_copy("memory_io.py", "X = 'memory_io.py'\n"))
    (skill_b / "memory_io.py").write_text("X = 'edited in the copy'\n")
    copies = (skill_a, skill_b)

    assert dev.sync_shared(check=True, shared=shared, copy_dirs=copies) == 1
    assert dev.SHARED_MODULES[0] == "memory_io.py"
    stale = [f"{tmp_path}/b/memory_io.py"] + [
        f"{tmp_path}/{skill}/{name}" for name in dev.SHARED_MODULES[1:] for skill in "ab"
    ]
    assert capsys.readouterr() == (
        "",
        "".join(f"{path} differs from shared/{Path(path).name}: run {SYNC}\n" for path in stale),
    )
    assert (skill_b / "memory_io.py").read_text() == "X = 'edited in the copy'\n"  # check only

    assert dev.sync_shared(check=False, shared=shared, copy_dirs=copies) == 0
    assert capsys.readouterr() == ("", "".join(f"wrote {path}\n" for path in stale))
    for folder in copies:
        for name in dev.SHARED_MODULES:
            assert (folder / name).read_text() == (
                f"# Generated from shared/{name} by `python3 scripts/dev.py sync-shared`; "
                f"edit that file.\nX = {name!r}\n"
            )
    assert dev.sync_shared(check=True, shared=shared, copy_dirs=copies) == 0
    assert dev.sync_shared(check=False, shared=shared, copy_dirs=copies) == 0
    assert capsys.readouterr() == ("", "")
