# The block's budget: the defaults and the lowest values accepted, one definition for the
# command line, pm_render.Budget and the hook's plugin options. .claude-plugin/plugin.json
# declares the same numbers for the plugin's settings (tests/plugin_manifest_test.py checks).
# Import-light: the hook's cache hit imports it.

from __future__ import annotations

TOKEN_TARGET = 120
HARD_CAP = 200
STALE_DAYS = 90

# An Epic line (stale prefix included) stays within this many tokens; a target below it cannot
# hold one Epic line, so it is the lowest target.
EPIC_LINE_TOKENS = 20
MIN_TOKEN_TARGET = EPIC_LINE_TOKENS
MIN_HARD_CAP = 40
MIN_STALE_DAYS = 1

# The largest values the plugin's settings offer; the command line takes any larger number.
MAX_OPTION_TOKENS = 2000
MAX_STALE_DAYS = 3650
