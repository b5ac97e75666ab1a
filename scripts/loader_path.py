"""Puts the loader's package within reach of the tools in scripts/, as its entry script does: the
skill's scripts/ folder on sys.path. Import it before project_memory_loader."""

import sys
from pathlib import Path

LOADER = Path(__file__).resolve().parent.parent / "skills" / "permanent-memory-loader" / "scripts"

if str(LOADER) not in sys.path:
    sys.path.insert(0, str(LOADER))
