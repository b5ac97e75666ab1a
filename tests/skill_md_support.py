# What both skills' SKILL.md tests share: the front matter keys a client reads, the front matter
# itself, and the fenced blocks of a Markdown text.
from __future__ import annotations

import re

import yaml

# The Agent Skills keys plus Claude Code's own; nothing else is read by a client.
ALLOWED_KEYS = frozenset(
    {
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "allowed-tools",
        "user-invocable",
        "when_to_use",
        "argument-hint",
        "disable-model-invocation",
        "model",
        "context",
        "agent",
        "hooks",
        "paths",
    }
)


def front_matter(skill_md: str) -> dict[str, object]:
    assert skill_md.startswith("---\n")
    data = yaml.safe_load(skill_md.split("\n---\n", 1)[0][4:])
    assert isinstance(data, dict)
    return data


def blocks(text: str, language: str) -> list[str]:
    """The contents of every ```language fenced block, in order."""
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)
