from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
LOADER_DIR = ROOT / "skills" / "permanent-memory-loader" / "scripts"
MANAGER_DIR = ROOT / "skills" / "ski-memory-manager" / "scripts"

E2E_DIR = ROOT / "scripts" / "e2e"

# Each skill's package sits in its scripts/ folder, which its entry script puts on sys.path (pip
# installs the same packages); the tests import the packages the same way, and the end-to-end
# helpers (fake_anthropic, e2e_env) from their folder.
for folder in (E2E_DIR, LOADER_DIR, MANAGER_DIR):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

SKILL_DIRS = {"loader": LOADER_DIR, "manager": MANAGER_DIR}


SKILL_PACKAGES = {"loader": "project_memory_loader", "manager": "ski_memory_manager"}


def skill_copy(skill: str, name: str) -> ModuleType:
    """The copy of a shared module (shared/{name}.py) that one skill's package carries."""
    return importlib.import_module(f"{SKILL_PACKAGES[skill]}.shared.{name}")


# Session-scoped, so hypothesis tests may use them: each test of a shared module runs once
# against each skill's copy.
@pytest.fixture(scope="session", params=sorted(SKILL_DIRS))
def memory_io(request: pytest.FixtureRequest) -> ModuleType:
    return skill_copy(request.param, "memory_io")


@pytest.fixture(scope="session", params=sorted(SKILL_DIRS))
def memory_text(request: pytest.FixtureRequest) -> ModuleType:
    return skill_copy(request.param, "memory_text")


@pytest.fixture(scope="session", params=sorted(SKILL_DIRS))
def hook_io(request: pytest.FixtureRequest) -> ModuleType:
    return skill_copy(request.param, "hook_io")


@pytest.fixture(scope="session", params=sorted(SKILL_DIRS))
def git_config(request: pytest.FixtureRequest) -> ModuleType:
    return skill_copy(request.param, "git_config")


@pytest.fixture(scope="session", params=sorted(SKILL_DIRS))
def doctor_report(request: pytest.FixtureRequest) -> ModuleType:
    return skill_copy(request.param, "doctor_report")


@pytest.fixture(scope="session", params=sorted(SKILL_DIRS))
def command_line(request: pytest.FixtureRequest) -> ModuleType:
    return skill_copy(request.param, "command_line")


@pytest.fixture(autouse=True, scope="session")
def no_user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test writes the user's cache folder: what would go to XDG_CACHE_HOME (a hook's cache
    without CLAUDE_PLUGIN_DATA, the session-start records `pause` reads) goes to a folder of this
    test run. A test that needs another value sets its own."""
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    yield
    patch.undo()


@pytest.fixture
def loader(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """loader(args, stdin=b""): permanent_memory.main(args) in-process (support.call_main),
    without an enclosing session's CLAUDE_PROJECT_DIR, with one exact counter for every command
    (support.reuse_exact_counter); stdin may be text or bytes."""
    import support
    from project_memory_loader import permanent_memory

    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    support.reuse_exact_counter(monkeypatch)

    def call(args: list[str], stdin: str | bytes = b"") -> support.Result:
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        return support.call_main(permanent_memory, args, data)

    return call


@pytest.fixture
def loader_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp_path/proj with the seed memory file (support.SEED_MEMORY), no CLAUDE_* variables."""
    import support

    support.clear_claude_env(monkeypatch)
    proj = tmp_path / "proj"
    (proj / ".claude" / "memory").mkdir(parents=True)
    (proj / ".claude" / "memory" / "permanent_memory.md").write_bytes(support.SEED_MEMORY)
    return proj


@pytest.fixture
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """For commands run in-process: no CLAUDE_* variable of an enclosing session, the hooks'
    caches under tmp_path, one exact counter for every loader command
    (support.reuse_exact_counter). Returns tmp_path."""
    import support

    support.clear_claude_env(monkeypatch)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "plugin-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    support.reuse_exact_counter(monkeypatch)
    return tmp_path


@pytest.fixture
def memory_dir(isolated_env: Path) -> Path:
    """An empty manager memory dir, `memory/` in the project `proj/` (its parent), in
    isolated_env."""
    folder = isolated_env / "proj" / "memory"
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def unicode_project(tmp_path: Path) -> Path:
    """tmp_path/proj with a memory file and a saved snapshot (project `demo`) in non-ASCII text
    (support.UNICODE_MEMORY, support.UNICODE_SNAPSHOT_INPUT)."""
    import support

    proj = tmp_path / "proj"
    (proj / ".claude" / "memory").mkdir(parents=True)
    (proj / ".claude" / "memory" / "permanent_memory.md").write_bytes(support.UNICODE_MEMORY)
    (proj / "memory").mkdir()
    saved = support.run(
        support.MANAGER,
        [
            *("save", "--memory-dir", str(proj / "memory"), "--project-name", "demo"),
            *("--session-timestamp", "2026-01-01-10-00", "--input", "-"),
        ],
        env=support.clean_env(tmp_path),
        stdin=json.dumps(support.UNICODE_SNAPSHOT_INPUT).encode(),
    )
    assert saved.code == 0, saved.err
    return proj


@pytest.fixture
def repo(tmp_path: Path) -> Any:
    """A git repository in tmp_path with none of the user's git config (support.make_repo)."""
    import support

    return support.make_repo(tmp_path)


def pinned_client(name: str) -> Path:
    """The pinned npm client `name` (scripts/e2e/node_modules); without it the test skips,
    except in CI, where it fails."""
    from e2e_env import NODE_BIN, in_ci, missing_client_reason

    reason = missing_client_reason(name)
    if reason is not None:
        if in_ci():
            pytest.fail(reason)
        pytest.skip(reason)
    return NODE_BIN / name


@pytest.fixture(scope="module")
def claude_bin() -> Path:
    return pinned_client("claude")


@pytest.fixture(scope="module")
def skillmd() -> Path:
    return pinned_client("skillmd")


@pytest.fixture(scope="module")
def api() -> Iterator[Any]:
    """A fake Anthropic Messages API on 127.0.0.1 that records every request."""
    from fake_anthropic import FakeAnthropic

    with FakeAnthropic() as server:
        yield server


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The long campaigns (marked slow) first, the rest in file order: on two workers the
    # campaigns are then spread early, instead of landing, one after the other, on whichever
    # worker takes the last tests of the other's queue, while it waits with nothing left to do.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
