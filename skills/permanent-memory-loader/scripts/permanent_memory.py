#!/usr/bin/env python3
"""Print the budgeted permanent-memory block for a project (see SKILL.md)."""

# The entry point of the skill and of the plugin's per-prompt hook. Python compiles a script on
# every run and never caches it, so this file is only the dispatch: the hook's steady state is
# pm_hook (loaded from cached bytecode), the other commands are pm_cli.
import os
import sys

if __package__:  # installed with pip: the folder's modules import each other by name, as here
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


def main(argv: "Sequence[str] | None" = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"]:
        import pm_hook

        return pm_hook.hook()
    import pm_cli

    return pm_cli.main(args)


def load_encoding() -> "Any":
    """The verified, offline cl100k_base tiktoken Encoding, or None when it is not available."""
    import pm_tokens

    try:
        return pm_tokens.load_tiktoken_encoding()
    except pm_tokens.EncodingUnavailable:
        return None


if __name__ == "__main__":
    if sys.argv[1:2] == ["hook"]:
        # The hook runs on every prompt: keep its modules' bytecode even where
        # PYTHONDONTWRITEBYTECODE is set (container images often do), or every run compiles
        # them again. In a read-only skill folder none is written and nothing else changes.
        sys.dont_write_bytecode = False
    raise SystemExit(main())
