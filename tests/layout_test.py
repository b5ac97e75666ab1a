# Each skill's code is one package (docs/code.md). The loader's sub-packages stand in layers: a
# module imports the loader's modules of its own sub-package and of the ones under it, never of
# one above or beside it. No module of either skill is imported by a bare top-level name.
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import LOADER_DIR, MANAGER_DIR

PACKAGES = {"project_memory_loader": LOADER_DIR, "ski_memory_manager": MANAGER_DIR}
# Each sub-package's floor: the command line and the hook over everything, the shared modules
# under it all. writing and recall stand side by side: neither imports the other.
FLOORS = {"": 5, "reading": 4, "writing": 3, "recall": 3, "core": 2, "evidence": 1, "shared": 0}


def modules(package: str) -> dict[str, Path]:
    """Each module of a skill's package (but the vendored counter), by its dotted name."""
    found = {}
    for path in sorted((PACKAGES[package] / package).rglob("*.py")):
        parts = path.relative_to(PACKAGES[package]).with_suffix("").parts
        if "_vendor" not in parts:
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imported(name: str, path: Path) -> set[str]:
    """The dotted names a module imports, relative imports resolved (a name imported from a
    package may be a module of it: both the package and package.name are given)."""
    package = name.rsplit(".", 1)[0] if path.name != "__init__.py" else name
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def floor(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FLOORS else ""


def test_every_loader_module_sits_in_a_sub_package_with_a_floor() -> None:
    found = {floor(name) for name in modules("project_memory_loader")}
    assert found == set(FLOORS)
    top = {name for name in modules("project_memory_loader") if floor(name) == ""}
    assert top == {
        "project_memory_loader",
        "project_memory_loader.permanent_memory",
        "project_memory_loader.pm_hook",
    }


def test_no_loader_module_imports_from_a_sub_package_above_or_beside_its_own() -> None:
    known = modules("project_memory_loader")
    wrong = []
    for name, path in known.items():
        for other in imported(name, path) & set(known):
            there, here = floor(other), floor(name)
            if other != name and there != here and FLOORS[there] >= FLOORS[here]:
                wrong.append(f"{name} imports {other}")
    assert wrong == []


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_the_shared_modules_import_only_each_other(package: str) -> None:
    for name, path in modules(package).items():
        if ".shared." in name:
            outside = {
                other
                for other in imported(name, path)
                if other.startswith(package) and not other.startswith(f"{package}.shared")
            }
            assert outside == set(), name


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_module_is_imported_by_a_bare_name(package: str) -> None:
    """Every module of both skills is imported by its package's name (relative inside it):
    no bare `import pm_parse` or `import memory_io`, which made a module loadable twice."""
    bare = {path.stem for pkg in PACKAGES for path in (PACKAGES[pkg] / pkg).rglob("*.py")}
    wrong = []
    for name, path in modules(package).items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                wrong += [f"{name}: {a.name}" for a in node.names if a.name in bare]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module in bare:
                wrong.append(f"{name}: {node.module}")
    assert wrong == []
