# Lessons proposed for permanent memory, as text: the instruction the PreCompact hook adds to the
# client's compaction prompt, the section of the summary that answers it
# (`Lessons for project memory:` then one `- [type] text (files: a, b) (epic: ID)` line each, or
# `- none`), one lesson's text and files cleaned and made project-relative. Pure: no file, clock
# or environment here (pm_proposals keeps them, pm_harvest and pm_propose call in).
from __future__ import annotations

import posixpath
import re
from typing import NamedTuple

from ..shared import memory_text

HEADING = "Lessons for project memory:"
# The types a lesson may have and the list of the line form (`add --lines`) each one joins.
TYPES = {
    "decision": "decisions",
    "gotcha": "gotchas",
    "anti-pattern": "anti_patterns",
    "pattern": "patterns",
}
SPELLINGS = {"antipattern": "anti-pattern", "anti_pattern": "anti-pattern"}
INSTRUCTION = (
    f"After the summary, add a section headed exactly `{HEADING}` with one line per durable "
    "lesson: `- [decision|gotcha|anti-pattern|pattern] text (files: path, path) (epic: ID)`, the "
    "two parentheses optional, or `- none`. Only what binds later work in this project (a "
    "decision settled, a gotcha found); never a step of this session's task.\n"
)
MAX_TEXT_CHARS = 300
MAX_FILES = 8
MAX_FILE_CHARS = 200
MAX_SECTION_CHARS = 256 * 1024  # what is read after the heading, whatever the summary's size
MAX_EPIC_CHARS = 64
_EPIC_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:#/+-]{0,63}")
_LINE = re.compile(r"[-*\u2022]\s*\[\s*([A-Za-z_-]+)\s*\]\s*(.*)")
_TAIL = re.compile(r"\(\s*(files?|epic)\s*:\s*([^()]*)\)\s*$", re.IGNORECASE)


class Lesson(NamedTuple):
    kind: str  # one of TYPES
    text: str
    files: tuple[str, ...]
    epic: str | None


class Section(NamedTuple):
    lessons: list[Lesson]  # in the summary's order, every line that reads as a lesson
    found: bool  # whether the summary has the heading at all
    refused: list[str]  # one note per line or file left out, and why


def one_line(text: str, limit: int) -> str:
    """Text as data on one line: unsafe characters stripped, secrets redacted, stamps and tags
    neutralised, runs of white space one space, at most `limit` characters (cut with …)."""
    cleaned = " ".join(memory_text.clean(text).split())
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1].rstrip() + "\u2026"


def kind_of(word: str) -> str | None:
    word = word.strip().lower()
    word = SPELLINGS.get(word, word)
    return word if word in TYPES else None


def epic_id(value: str) -> str | None:
    value = value.strip()
    return value if _EPIC_ID.fullmatch(value) else None


def project_relative(path: str, root: str) -> str | None:
    """A file a lesson names, relative to the project rooted at `root` (an absolute, normalised
    path), or None when it is outside it, empty or not a plain path (`../../etc/passwd`, `/etc`,
    `~/x`, a glob's `**` is kept). Pure: nothing on disk is looked at."""
    path = path.strip().strip("`'\"").replace("\\", "/")
    if not path or len(path) > MAX_FILE_CHARS or path.startswith("~") or "\0" in path:
        return None
    if any(ord(char) < 32 for char in path):
        return None
    if posixpath.isabs(path):
        top = root.replace("\\", "/").rstrip("/") + "/"
        if not path.startswith(top):
            return None
        path = path[len(top) :]
    normal = posixpath.normpath(path)
    if normal in (".", "") or normal == ".." or normal.startswith("../") or normal.startswith("/"):
        return None
    return normal


def split_tail(rest: str) -> tuple[str, list[str], str | None]:
    """A lesson line's text without its `(files: …)` and `(epic: …)` tails, the files and the
    epic they name (raw)."""
    files: list[str] = []
    epic = None
    for _ in range(2):
        match = _TAIL.search(rest)
        if match is None:
            break
        if match.group(1).lower().startswith("file"):
            files = [part for part in match.group(2).split(",") if part.strip()]
        else:
            epic = match.group(2)
        rest = rest[: match.start()].rstrip()
    return rest, files, epic


def lesson(kind: str, text: str, files: list[str], epic: str | None, root: str) -> Lesson:
    """One lesson made safe: its text one clean line, its files project-relative (those outside
    the project left out) and at most MAX_FILES, its epic a valid ID or None."""
    kept: list[str] = []
    for file in files[: MAX_FILES * 4]:
        relative = project_relative(memory_text.strip_unsafe(file), root)
        if relative is not None and relative not in kept:
            kept.append(one_line(relative, MAX_FILE_CHARS))
    named = epic_id(epic) if epic else None
    return Lesson(kind, one_line(text, MAX_TEXT_CHARS), tuple(kept[:MAX_FILES]), named)


def heading_at(text: str) -> int:
    """Where the last line naming the section's heading ends (-1: none). The last one: the
    summary's own notes may mention the heading before the section."""
    at = text.lower().rfind(HEADING.lower())
    if at < 0:
        return -1
    end = text.find("\n", at)
    return len(text) if end < 0 else end + 1


def parse_section(summary: str, root: str) -> Section:
    """The lessons of a compaction summary's `Lessons for project memory:` section: the list
    lines after the heading, up to the first line that is neither blank nor a list item."""
    start = heading_at(summary)
    if start < 0:
        return Section([], False, [])
    lessons: list[Lesson] = []
    refused: list[str] = []
    for number, raw in enumerate(summary[start : start + MAX_SECTION_CHARS].split("\n"), 1):
        line = " ".join(memory_text.strip_unsafe(raw).split())
        if not line:
            continue
        if not line.startswith(("-", "*", "\u2022")):
            break
        if line.lstrip("-*\u2022 \t").strip().lower().rstrip(".") in ("none", "nothing"):
            continue
        match = _LINE.fullmatch(line)
        kind = kind_of(match.group(1)) if match else None
        if match is None or kind is None:
            refused.append(f"lesson line {number}: not `- [{'|'.join(TYPES)}] text`")
            continue
        text, files, epic = split_tail(match.group(2))
        made = lesson(kind, text, files, epic, root)
        if not made.text:
            refused.append(f"lesson line {number}: no text")
            continue
        if len(made.files) < len(files):
            refused.append(
                f"lesson line {number}: {len(files) - len(made.files)} file(s) outside the "
                "project or not a plain path, left out"
            )
        lessons.append(made)
    return Section(lessons, True, refused)


def key_of(text: str) -> str:
    """What two lessons share when they say the same thing: the words, case folded, without
    punctuation (`Use httpOnly cookies.` and `use httponly cookies` are one)."""
    folded = memory_text.skeleton(text).casefold()
    return " ".join(re.findall(r"\w+", folded))
