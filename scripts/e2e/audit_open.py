#!/usr/bin/env python3
"""Run a Python script the way `python3 SCRIPT ARGS...` would, and record what it touched.

    python3 audit_open.py REPORT.json SCRIPT [ARGS ...]

Every file the script opens (source and bytecode of imported modules included: both go
through the interpreter's "open" audit event) and every module it ends up with are written to
REPORT.json as {"opened": [...], "modules": [...], "exit": code}. The end-to-end tests use it
to show that an installed skill copy runs on files inside its own folder, not on the
repository it was installed from. Stdout and stderr are the script's own.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from typing import Any


def main() -> int:
    if len(sys.argv) < 3:
        print("usage: audit_open.py REPORT.json SCRIPT [ARGS ...]", file=sys.stderr)
        return 2
    report, script, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    opened: list[str] = []

    def on_event(event: str, event_args: tuple[Any, ...]) -> None:
        if event == "open" and event_args and isinstance(event_args[0], (str, bytes)):
            opened.append(os.path.abspath(os.fsdecode(event_args[0])))

    script_dir = os.path.dirname(os.path.abspath(script))
    sys.argv = [script, *args]
    sys.path[0] = script_dir  # as `python3 SCRIPT` would have it
    sys.addaudithook(on_event)
    code: Any = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.stdout.flush()
        own = os.path.abspath(__file__)  # the wrapper itself is not the script's doing
        modules = sorted(
            {
                os.path.abspath(f)
                for m in list(sys.modules.values())
                if isinstance(f := getattr(m, "__file__", None), str)
            }
            - {own}
        )
        with open(report, "w", encoding="utf-8") as handle:
            json.dump({"opened": sorted(set(opened)), "modules": modules, "exit": code}, handle)
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


if __name__ == "__main__":
    raise SystemExit(main())
