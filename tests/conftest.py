from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
LOADER_DIR = ROOT / "skills" / "permanent-memory-loader" / "scripts"
MANAGER_DIR = ROOT / "skills" / "ski-memory-manager" / "scripts"

# The skill scripts import their siblings as top-level modules when run from their folder;
# tests import them the same way.
for folder in (LOADER_DIR, MANAGER_DIR):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
