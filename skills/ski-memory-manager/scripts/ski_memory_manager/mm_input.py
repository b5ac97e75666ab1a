# save's fields as the caller gives them: --input, a JSON object (for programs), or --yaml, a
# block YAML mapping of the same fields (for a model on a quoted heredoc), from a file or stdin.
# Only their syntax is checked here; mm_update validates the fields.
#
# parse_yaml_fields catches PyYAML's errors in the order mm_frontmatter.loads does,
# and its handlers have the same shape, but each says its own thing: a line and column of the
# input here, a line of the snapshot file there (counting its opening `---`).
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import mm_frontmatter
from .mm_errors import CommandError

if TYPE_CHECKING:
    import argparse


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """--input and --yaml, the two ways to give the fields (read_fields reads them)."""
    parser.add_argument("--input", metavar="FILE", help="JSON object of fields; - for stdin")
    parser.add_argument(
        "--yaml",
        metavar="FILE",
        help="the same fields as a block YAML mapping; - for stdin (a quoted heredoc)",
    )


def _read_source(flag: str, source: str) -> str:
    try:
        if source == "-":
            raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
        else:
            raw = Path(source).read_bytes()
    except OSError as exc:
        raise CommandError(f"{flag}: cannot read {source}: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise CommandError(f"{flag}: not UTF-8 text") from None


def parse_json_fields(text: str) -> dict[str, Any]:
    """--input: a JSON object of fields (for programs)."""
    import json

    try:
        data = json.loads(text)
    except RecursionError:
        raise CommandError("--input: invalid JSON: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise CommandError(
            f"--input: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    if not isinstance(data, dict):
        raise CommandError(
            '--input must be a JSON object of fields, like {"project_name": "my-project", ...}'
        )
    return data


def parse_yaml_fields(text: str) -> dict[str, Any]:
    """--yaml: a block YAML mapping of the same fields (for a model on a quoted heredoc: block
    YAML needs no braces, which Claude Code refuses next to quotes in a command). Read with the
    snapshots' loader: no anchors or aliases, bounded nesting."""
    yaml = mm_frontmatter.require_yaml()
    loader = mm_frontmatter.snapshot_loader(yaml)(text)
    try:
        data = loader.get_single_data()
    except mm_frontmatter.FrontMatterError as exc:
        # Its line numbers count a snapshot's opening '---'; the input has none, so drop them.
        message = str(exc).replace("front matter", "the input").split(" at line ")[0]
        raise CommandError(f"--yaml: {message}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise CommandError(f"--yaml: invalid YAML{where}: {problem}") from None
    except RecursionError:
        raise CommandError("--yaml: invalid YAML: nested too deeply") from None
    except Exception as exc:  # a value PyYAML resolves but cannot build, e.g. 2026-02-30
        raise CommandError(f"--yaml: invalid value: {mm_frontmatter.error_line(exc)}") from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise CommandError("--yaml must be a mapping of fields, one 'name: value' per line")
    return data


def read_fields(json_source: str | None, yaml_source: str | None) -> dict[str, Any]:
    """The fields given on --input (JSON) or --yaml (YAML), as a dict; validation is elsewhere."""
    if json_source is not None and yaml_source is not None:
        raise CommandError("give the fields with --input (JSON) or --yaml, not both")
    if json_source is not None:
        return parse_json_fields(_read_source("--input", json_source))
    if yaml_source is not None:
        return parse_yaml_fields(_read_source("--yaml", yaml_source))
    return {}
