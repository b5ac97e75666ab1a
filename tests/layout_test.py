# The loader's module folders stand in layers (docs/code.md): a module imports the loader's modules
# of its own folder and of the folders under it, never of one above or beside it.
from __future__ import annotations

import ast
from pathlib import Path

import permanent_memory
from conftest import LOADER_DIR

SHARED = {path.stem for path in (LOADER_DIR.parent.parent.parent / "shared").glob("*.py")}
# Each folder's floor: the entry and the hook over everything, the shared modules under it all.
# writing/ and recall/ stand side by side: neither imports the other.
FLOORS = {"": 5, "reading": 4, "writing": 3, "recall": 3, "core": 2, "evidence": 1}


def loader_modules() -> dict[str, str]:
    """Each of the loader's modules (but the vendored counter), by name: its folder."""
    found = {}
    for path in sorted(LOADER_DIR.rglob("*.py")):
        folder = path.parent.relative_to(LOADER_DIR).as_posix()
        if "_vendor" not in path.parts and path.stem not in SHARED:
            assert path.stem not in found, f"two modules named {path.stem}"
            found[path.stem] = "" if folder == "." else folder
    return found


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_every_module_folder_is_on_the_entry_s_path_and_has_a_floor() -> None:
    folders = {Path(folder).name for folder in permanent_memory.FOLDERS}
    assert folders == set(FLOORS) - {""}
    assert set(loader_modules().values()) == set(FLOORS)
    assert {"permanent_memory", "pm_main", "pm_hook"} == {
        m for m, f in loader_modules().items() if not f
    }


def test_no_module_imports_from_a_folder_above_or_beside_its_own() -> None:
    modules = loader_modules()
    wrong = []
    for name, folder in modules.items():
        path = LOADER_DIR / folder / f"{name}.py"
        for other in imported(path) & set(modules):
            there = modules[other]
            if there != folder and FLOORS[there] >= FLOORS[folder]:
                wrong.append(f"{folder or '.'}/{name} imports {there or '.'}/{other}")
    assert wrong == []


def test_the_shared_modules_import_none_of_the_loader_s() -> None:
    for name in SHARED:
        assert not imported(LOADER_DIR / f"{name}.py") & set(loader_modules()), name
