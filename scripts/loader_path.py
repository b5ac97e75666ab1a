"""Puts the loader's modules within reach of the tools in scripts/, as its entry does: its folder
and its module folders (permanent_memory.FOLDERS) on sys.path. Import it before any pm_ module."""

import sys
from pathlib import Path

LOADER = Path(__file__).resolve().parent.parent / "skills" / "permanent-memory-loader" / "scripts"

if str(LOADER) not in sys.path:
    sys.path.insert(0, str(LOADER))
    import permanent_memory  # type: ignore[import-not-found]

    sys.path[1:1] = permanent_memory.FOLDERS
