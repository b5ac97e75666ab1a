from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
LOADER_DIR = ROOT / "skills" / "permanent-memory-loader" / "scripts"
MANAGER_DIR = ROOT / "skills" / "ski-memory-manager" / "scripts"

# The skill scripts import their siblings as top-level modules when run from their folder;
# tests import them the same way.
for folder in (LOADER_DIR, MANAGER_DIR):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

SKILL_DIRS = {"loader": LOADER_DIR, "manager": MANAGER_DIR}


def skill_copy(skill: str, name: str) -> ModuleType:
    """The copy of a shared module (shared/{name}.py) that one skill's folder carries, loaded
    from that folder under a name of its own (`loader_memory_io`)."""
    module_name = f"{skill}_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, SKILL_DIRS[skill] / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


# Session-scoped, so hypothesis tests may use them: each test of a shared module runs once
# against each skill's copy.
@pytest.fixture(scope="session", params=sorted(SKILL_DIRS))
def memory_io(request: pytest.FixtureRequest) -> ModuleType:
    return skill_copy(request.param, "memory_io")


@pytest.fixture(scope="session", params=sorted(SKILL_DIRS))
def memory_text(request: pytest.FixtureRequest) -> ModuleType:
    return skill_copy(request.param, "memory_text")


settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
