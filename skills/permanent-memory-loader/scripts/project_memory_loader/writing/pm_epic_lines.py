# The line form of `add`'s input, for an agent writing it on a quoted heredoc: `name: value`
# lines, and `name:` lines opening a list of `- item` lines. Every value is taken exactly as
# written (no quotes, no escapes, no braces), so any text passes unchanged through the shell and
# through Claude Code's check of the command, and a bare python3 reads it. This module only
# turns the text into the same fields as the JSON; pm_epic_input.read_entry checks them.
from __future__ import annotations

import re

# The fields whose value is a list on one line too: `keywords: luxon, dates, time zones`,
# `paths: billing_api/webhooks/**, billing_api/stripe_client.py`.
COMMA_LISTS = ("keywords", "paths")
_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):(?:[ \t]+(.*))?")
FORM = "'name: value', 'name:' (a list follows) or '- item'"


class LinesError(ValueError):
    """The text is not in the line form; str() is the one-line message."""


def parse_epic_lines(text: str) -> dict[str, str | list[str]]:
    """`name: value` -> text; `name:` then `- item` lines -> a list of texts. An indented line
    continues the value or item above it (joined with a space); blank lines are skipped. The
    values of `keywords` and `paths` are lists either way: `keywords: a, b` is split at its
    commas."""
    fields: dict[str, str | list[str]] = {}
    current: str | None = None  # the field the last value or item belongs to
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped == "-" or stripped.startswith(("- ", "-\t")):
            value = fields.get(current) if current is not None else None
            if not isinstance(value, list):
                raise LinesError(f"line {number}: '- item' outside a list; put 'name:' above it")
            value.append(stripped[1:].strip())
            continue
        if line[:1] in (" ", "\t") and current is not None:
            value = fields[current]
            if isinstance(value, list):
                if not value:
                    raise LinesError(f"line {number}: expected '- item' in the list {current}")
                value[-1] = f"{value[-1]} {stripped}".strip()
            else:
                fields[current] = f"{value} {stripped}".strip()
            continue
        match = _FIELD.fullmatch(stripped)
        if match is None:
            raise LinesError(f"line {number}: expected {FORM}")
        name, rest = match.group(1), match.group(2)
        if name in fields:
            raise LinesError(f"line {number}: {name} is given twice")
        rest = (rest or "").strip()
        fields[name] = rest if rest else []
        current = name
    for name in COMMA_LISTS:
        value = fields.get(name)
        if isinstance(value, str):
            fields[name] = [term.strip() for term in value.split(",")]
    return fields
