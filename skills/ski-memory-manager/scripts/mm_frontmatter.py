# The one place that reads and writes a snapshot's YAML front matter. PyYAML is imported lazily
# (only the functions that need it pay for it) and only its safe loader and dumper are used.
#
# Final newline: `dumps` returns `---\n{yaml}---\n{body}` with the body exactly as given, so the
# caller owns the file's last newline; `loads` returns the body exactly as it follows the closing
# `---` line (CRLF turned into LF), so `loads(dumps(meta, body)) == (meta, body)`.
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

INSTALL_HINT = "PyYAML is required: pip install pyyaml"


class YamlMissing(Exception):
    """PyYAML is not installed."""


class FrontMatterError(ValueError):
    """The text has no readable front matter; the message says why, on one line."""


def require_yaml() -> Any:
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


def loads(text: str) -> tuple[dict[str, Any], str]:
    """Parse front matter into a mapping (string keys) and return it with the body."""
    yaml_text, body = split(text)
    yaml = require_yaml()
    try:
        data = yaml.safe_load(yaml_text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise FrontMatterError(f"invalid YAML in front matter{where}: {problem}") from None
    except RecursionError:
        raise FrontMatterError("invalid YAML in front matter: nested too deeply") from None
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
