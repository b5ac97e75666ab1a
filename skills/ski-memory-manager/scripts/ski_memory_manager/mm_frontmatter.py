# The one place that reads and writes a snapshot's YAML front matter. PyYAML is imported lazily
# (only the functions that need it pay for it) and only its safe loader and dumper are used.
#
# Final newline: `dumps` returns `---\n{yaml}---\n{body}` with the body exactly as given, so the
# caller owns the file's last newline; `loads` returns the body exactly as it follows the closing
# `---` line (CRLF turned into LF), so `loads(dumps(meta, body)) == (meta, body)`.
from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from .mm_errors import ManagerError

INSTALL_HINT = "PyYAML is required: pip install pyyaml"
# A snapshot nests three levels (checkpoint_decisions -> CP -> fields); deeper is not one, and
# 400 levels overflowed the stack of whatever walked the result.
MAX_DEPTH = 16


class YamlMissing(ManagerError):
    """PyYAML is not installed."""


class FrontMatterError(ManagerError, ValueError):
    """The text has no readable front matter; the message says why, on one line."""


def require_yaml() -> Any:
    if sys.flags.no_site and "site" not in sys.modules:
        # The hooks start without site (`python3 -S`, hooks/hooks.json): a cache hit needs only
        # the standard library. What reads or writes a snapshot adds the site-packages folders
        # here, as the interpreter's start would have.
        import site

        site.main()
    try:
        import yaml
    except ImportError as exc:
        raise YamlMissing(INSTALL_HINT) from exc
    return yaml


def split(text: str) -> tuple[str, str]:
    """Return (yaml_text, body) of a `---` fenced front matter; the body follows the fence."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n"):
        raise FrontMatterError("no front matter (the file must start with a '---' line)")
    pos = 3  # the newline that ends the opening fence
    while True:
        end = text.find("\n", pos + 1)
        line = text[pos + 1 : end if end != -1 else len(text)]
        if line.rstrip() in ("---", "..."):
            body = text[end + 1 :] if end != -1 else ""
            return text[4 : pos + 1], body
        if end == -1:
            raise FrontMatterError("front matter is not closed (no '---' line after it)")
        pos = end


_LOADER: Any = None


def snapshot_loader(yaml: Any) -> Any:
    """PyYAML's SafeLoader, refusing anchors and aliases and nesting past MAX_DEPTH as each node
    is composed, before anything is constructed. `save` never writes an anchor or an alias, and
    refusing them is what bounds the work whatever PyYAML version is installed: versions that
    expand nested merge keys (`<<: *a`) copy every level again, so 600 bytes became 700 MB."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER

    class SnapshotLoader(yaml.SafeLoader):  # type: ignore[misc]
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            line = f" at line {event.start_mark.line + 2}" if event.start_mark else ""
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise FrontMatterError(
                    f"front matter uses a YAML anchor or alias{line} (& or *); snapshots have none"
                )
            self.depth += 1
            try:
                if self.depth > MAX_DEPTH:
                    raise FrontMatterError(f"front matter nests deeper than {MAX_DEPTH} levels")
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    _LOADER = SnapshotLoader
    return _LOADER


# PyYAML names what it met in angle brackets (`but found '<stream end>'`): its own words, not
# the file's, said plainly so that no cleaning of the line for a model turns them into a
# mangled tag.
_YAML_TOKENS = {
    "'<stream end>'": "the end of the front matter",
    "'<stream start>'": "the start of the front matter",
    "'<document start>'": "a '---' line",
    "'<document end>'": "a '...' line",
    "'<block end>'": "the end of an indented block",
    "'<block mapping start>'": "a new 'key: value' block",
    "'<block sequence start>'": "a new '- item' list",
    "'<block entry>'": "a '- item' entry",
    "'<flow mapping start>'": "a '{'",
    "'<flow sequence start>'": "a '['",
    "'<flow mapping end>'": "a '}'",
    "'<flow sequence end>'": "a ']'",
}


def plain_yaml_words(text: str) -> str:
    """PyYAML's `'<token>'` names in a message, as words."""
    for token, words in _YAML_TOKENS.items():
        text = text.replace(token, words)
    return text


def error_line(exc: BaseException) -> str:
    """An exception's first line, cut short, for a one-line message."""
    text = str(exc).strip().split("\n", 1)[0]
    return plain_yaml_words(text[:200]) or type(exc).__name__


def loads(text: str, max_yaml_bytes: int | None = None) -> tuple[dict[str, Any], str]:
    """Parse front matter into a mapping (string keys) and return it with the body. Every way
    the YAML can fail is a FrontMatterError with a one-line message; so is a front matter of
    more than max_yaml_bytes characters, which is not parsed."""
    yaml_text, body = split(text)
    if max_yaml_bytes is not None and len(yaml_text) > max_yaml_bytes:
        raise FrontMatterError(f"front matter larger than {max_yaml_bytes // 1024} KiB")
    yaml = require_yaml()
    try:
        # The reader checks for unprintable characters as the loader is made: inside the try.
        loader = snapshot_loader(yaml)(yaml_text)
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"invalid YAML in front matter: {error_line(exc)}") from None
    try:
        data = loader.get_single_data()
    except FrontMatterError:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = plain_yaml_words(getattr(exc, "problem", None) or type(exc).__name__)
        raise FrontMatterError(f"invalid YAML in front matter{where}: {problem}") from None
    except RecursionError:
        raise FrontMatterError("invalid YAML in front matter: nested too deeply") from None
    except Exception as exc:
        # A value PyYAML resolves but cannot build: 2026-02-30, 25:00:00, an offset of +99:00,
        # an integer of more than 4300 digits, an empty `!!int` (IndexError).
        raise FrontMatterError(f"invalid value in front matter: {error_line(exc)}") from None
    finally:
        loader.dispose()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontMatterError(
            f"front matter is a {type(data).__name__}, not a mapping of keys to values"
        )
    for key in data:
        if not isinstance(key, str):
            raise FrontMatterError(f"front matter key {key!r} is not a string")
    return data, body


def dumps(meta: Mapping[str, Any], body: str) -> str:
    yaml = require_yaml()
    # A wide line limit keeps paths and notes on one line; PyYAML quotes whatever needs it.
    yaml_text = yaml.safe_dump(
        dict(meta),
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=4096,
    )
    return f"---\n{yaml_text}---\n{body}"
