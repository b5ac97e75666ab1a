# `permanent_memory.py show ID …`: the whole of one or more epics, for when a block's first
# lines are not enough. The section is shown as the file has it, but cleaned, redacted and
# stamped like the block, and bounded in size. show_text is pure: text in, text out; main reads
# the file.
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..core import pm_cli
from ..core.pm_cli import MEMORY_FILE, PROG, project_dir
from ..core.pm_errors import LoaderError
from ..core.pm_fit import most_that_fit
from ..core.pm_load import decode
from ..core.pm_parse import Epic, normalise_text, parse_permanent, v2_marker
from ..core.pm_render import STAMP, cut_line, safe_text
from ..shared import memory_text
from .pm_block import read_memory

HELP = "print whole epics by ID, cleaned, redacted and stamped"

MAX_SHOW_CHARS = 8000  # well under what a tool result or a hook may carry
MAX_LISTED_IDS = 10
MIN_LINE_CHARS = 120  # a cut line still shows its beginning


class UnknownEpic(LoaderError):
    """An asked-for ID is not in the file; str() is the one-line message."""


def find_epics(epics: Sequence[Epic], ids: Sequence[str]) -> list[Epic]:
    """The epics asked for, in the order asked, each once. An ID matches exactly, else ignoring
    case; the first section with it wins (the file is append-only)."""
    found: list[Epic] = []
    for wanted in ids:
        match = next((e for e in epics if e.epic_id == wanted), None)
        if match is None:
            folded = wanted.casefold()
            match = next((e for e in epics if e.epic_id.casefold() == folded), None)
        if match is None:
            known = [safe_text(e.epic_id) or "?" for e in epics]
            listed = ", ".join(known[:MAX_LISTED_IDS]) + (", …" if len(known) > 10 else "")
            raise UnknownEpic(
                f"no epic {safe_text(wanted)!r} in the file"
                + (f" (epics: {listed})" if known else " (it has no '## Epic:' section)")
            )
        if match not in found:
            found.append(match)
    return found


def section_text(lines: Sequence[str], epic: Epic) -> str:
    """The epic's section, cleaned: control characters out, secrets redacted, anything that
    could pass for a stamp or a tag made inert. The `<!-- af-memory:v2 … -->` marker line is
    left out: it is the writer's bookkeeping, and cleaned it would read as a mangled tag."""
    section = lines[epic.start_line : epic.end_line]
    raw = "\n".join(line for line in section if v2_marker(line) is None).strip("\n")
    return memory_text.clean(raw)


def show_text(text: str, ids: Sequence[str], max_chars: int = MAX_SHOW_CHARS) -> str:
    """The stamp, then each asked-for epic's whole section, a blank line between them. Over
    max_chars, each long line is cut to the longest length that lets every line's beginning
    fit; only when even MIN_LINE_CHARS a line is too much are the last lines left out. A note
    says what was cut."""
    lines = normalise_text(text).split("\n")
    chosen = find_epics(parse_permanent(text), ids)
    body = "\n\n".join(section_text(lines, epic) for epic in chosen)
    shown = f"{STAMP}\n{body}\n"
    if len(shown) <= max_chars:
        return shown
    all_lines = shown.split("\n")[:-1]
    longest = max(map(len, all_lines))

    def cut_to(limit: int) -> list[str]:
        return [cut_line(line, limit) for line in all_lines]

    def cut_note(limit: int) -> str:
        cut = sum(len(line) > limit for line in all_lines)
        return (
            f"(long lines cut to {limit:,} characters, {cut} of them, to keep within "
            f"{max_chars:,}; read the file for the rest)"
        )

    def size(kept: Sequence[str]) -> int:
        return sum(len(line) + 1 for line in kept)

    fits_at = most_that_fit(
        MIN_LINE_CHARS, longest, lambda n: size([*cut_to(n), cut_note(n)]) <= max_chars
    )
    kept = cut_to(fits_at)
    if size([*kept, cut_note(fits_at)]) <= max_chars:
        return "\n".join([*kept, cut_note(fits_at)]) + "\n"
    cut = f"lines cut to {fits_at:,} characters and " if fits_at < longest else ""
    note = "({}cut at {:,} characters: {} more lines not shown; ask for fewer epics at a time)"
    out: list[str] = []
    for index, line in enumerate(kept):
        rest = note.format(cut, max_chars, len(kept) - index)
        if size(out) + len(line) + 1 + len(rest) + 1 > max_chars:
            return "\n".join([*out, rest]) + "\n"
        out.append(line)
    return "\n".join(out) + "\n"  # not reached: the cut lines were over max_chars


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser(
        "show",
        "Print the whole section of each epic asked for, cleaned and redacted like the block and "
        "stamped [permanent-memory | trust:file]; use it when the block's first lines are not "
        "enough, instead of reading the file raw.",
    )
    parser.add_argument("ids", nargs="+", metavar="ID", help="epic IDs, e.g. FEAT-007")
    pm_cli.add_project_dir(parser)
    pm_cli.add_file(parser)
    pm_cli.add_format(parser)
    return parser


def show(args: argparse.Namespace) -> int:
    found = read_memory(args.file, args.project_dir)
    if found is None:
        raise LoaderError(
            f"no permanent memory file at {project_dir(args.project_dir) / MEMORY_FILE}"
        )
    if found.data is None:
        raise LoaderError(f"{found.path} is too large to read; archive old epics: {PROG} archive")
    try:
        shown = show_text(decode(found.data), args.ids)
    except UnknownEpic as exc:
        raise LoaderError(f"{found.path}: {exc}") from None
    if args.format == "json":
        pm_cli.emit_json({"file": found.path, "ids": list(args.ids), "text": shown})
    else:
        sys.stdout.write(shown)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = pm_cli.parse_args(build_parser(), sys.argv[1:] if argv is None else argv)
    return pm_cli.run(lambda: show(args))
