# `permanent_memory.py search WORDS`: the entries of every epic (the archive included) that
# match the words, ranked as prompt-time recall ranks them, stamped and cleaned; and the report
# behind `inspect --prompt TEXT`: each candidate's score and why it was or was not added.
# project_index builds the index exactly as the hook's cache miss does.
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..core import pm_cli
from ..core.pm_cli import MEMORY_FILE, PROG, plural, project_dir
from ..core.pm_load import decode
from ..core.pm_render import NO_STATES, States, safe_text
from ..evidence import pm_evidence
from ..recall import pm_recall, pm_recall_store
from ..recall.pm_recall_index import MEMORY_SOURCE, index_files
from ..shared import memory_text
from .pm_block import LoadedSummary, add_block_options, read_memory, summary_of

HELP = "the entries that match some words, from every epic and the archive"
DEFAULT_LIMIT = 10
SHOWN_CANDIDATES = 20


class ProjectIndex(NamedTuple):
    built: pm_recall.Index
    loaded: LoadedSummary
    archives: list[str]  # the archive files read, as archive/NAME.md
    skipped: str  # why the memory file itself was not searched ("" when it was)


def project_index(args: argparse.Namespace) -> ProjectIndex | None:
    """The recall index of the memory file load would read (and of its archive/ folder), built
    as the hook builds it; None when there is no memory file."""
    found = read_memory(args.file, args.project_dir)
    if found is None:
        return None
    loaded = summary_of(found, args)
    summary, tokenizer = loaded.summary, loaded.tokenizer
    # The archive of a file the user named is beside it, wherever that is (a path the user
    # sets); the project's own must not lead outside the project.
    root = None if args.file else str(project_dir(args.project_dir))
    archives = pm_recall_store.archive_files(found.path, root)
    usable = found.data is not None and not summary.skipped
    lines = decode(found.data).split("\n") if usable and found.data is not None else []
    epics = summary.epics if usable else []
    states = summary.evidence.states
    index = index_files(epics, lines, archives, summary.block.text, tokenizer.count, states)
    skipped = "" if usable else skipped_line(found.path, summary.block.reason)
    return ProjectIndex(index, loaded, [name for name, _ in archives], skipped)


def skipped_line(path: object, reason: str) -> str:
    """Why the memory file was not searched: the loader skips it as a whole (`reason` is the
    skipped block's, e.g. `file over 8000 tokens`), and what to do."""
    why = reason.removeprefix("file ")
    return (
        f"{path} was not searched: {why}, so the loader skips it; move old epics to the "
        f"archive, which search reads: {PROG} archive"
    )


def no_file(args: argparse.Namespace) -> int:
    path = args.file or project_dir(args.project_dir) / MEMORY_FILE
    sys.stdout.write(f"no permanent memory file at {path}\n")
    return 0


def entries_text(number: int) -> str:
    return f"{number} entr{'y' if number == 1 else 'ies'}"


def search_line(entry: pm_recall.Entry, states: States = NO_STATES) -> str:
    """An entry in full, on one line, with where it is kept when that is the archive, the paths
    it names marked as the block marks them (pm_evidence)."""
    _key, epic_id, label, _line, _tokens, _in_block, source, text = entry
    if states:
        text = pm_evidence.mark_line(text, states, safe_text)[0]
    where = f" ({source})" if source != MEMORY_SOURCE else ""
    return memory_text.neutralise_markup(f"{epic_id} {label}: {text}{where}")


def search(args: argparse.Namespace) -> int:
    found = project_index(args)
    if found is None:
        return no_file(args)
    index = found.built
    words = " ".join(args.words)
    scores, matched, asked = pm_recall.score(index, words)
    order = pm_recall.ranked(scores)[: args.limit]
    entries = index["entries"]
    if args.format == "json":
        pm_cli.emit_json(
            {
                "query": words,
                "terms": asked,
                "entries_searched": len(entries),
                "archive_files": found.archives,
                "skipped": found.skipped or None,
                "results": [result_json(entries[n], scores[n], matched[n]) for n in order],
            }
        )
        return 0
    shown_query = memory_text.neutralise_markup(" ".join(memory_text.clean(words).split()))
    out = [pm_recall.STAMP]
    searched = f"{entries_text(len(entries))} searched, "
    searched += f"{plural(len(found.archives), 'archive file')} included"
    if not order:
        out.append(f'No entries match "{shown_query}" ({searched}).')
    else:
        epics = len({entries[n][1] for n in order})
        out.append(
            f'{len(order)} best entr{"y" if len(order) == 1 else "ies"} for "{shown_query}" '
            f"(from {epics} epic{'' if epics == 1 else 's'}; {searched}):"
        )
        states = found.loaded.summary.evidence.states
        out += [search_line(entries[n], states) for n in order]
    if found.skipped:
        out.append(found.skipped)
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def result_json(entry: pm_recall.Entry, score: float, matched: list[str]) -> dict[str, Any]:
    _key, epic_id, label, _line, tokens, in_block, source, text = entry
    return {
        "id": epic_id,
        "label": label,
        "text": text,
        "source": source,
        "score": round(score, 3),
        "matched": matched,
        "tokens": tokens,
        "in_session_start_block": in_block,
    }


def add_recall_options(parser: argparse.ArgumentParser) -> None:
    minimum = pm_recall.MIN_BUDGET
    for flag, default, what in (
        ("--prompt-tokens", pm_recall.PROMPT_BUDGET, "tokens recall may add to one prompt"),
        ("--session-tokens", pm_recall.SESSION_BUDGET, "tokens recall may add to one session"),
    ):
        pm_cli.add_count(parser, flag, minimum, default, what)


def inspect_prompt(args: argparse.Namespace) -> int:
    """`inspect --prompt TEXT`: what recall would add to that prompt as a session's first, and
    why each candidate was or was not added."""
    found = project_index(args)
    if found is None:
        return no_file(args)
    index = found.built
    prompt = args.prompt
    entries = index["entries"]
    received = {entry[0] for entry in entries if entry[5]}
    scores, matched, asked = pm_recall.score(index, prompt)
    needed = pm_recall.threshold(prompt)
    chosen, why = pm_recall.choose(
        index, scores, received, args.prompt_tokens, args.session_tokens, needed=needed
    )
    block, _keys, tokens = pm_recall.recall(
        index, prompt, received, args.prompt_tokens, args.session_tokens
    )
    order = pm_recall.ranked(scores)
    if args.format == "json":
        pm_cli.emit_json(
            {
                "prompt_chars": len(prompt),
                "scored_chars": min(len(prompt), pm_recall.PROMPT_PREFIX_CHARS),
                "terms": asked,
                "threshold": needed,
                "reads_as_report": pm_recall.reads_as_report(prompt),
                "candidates": [
                    {
                        **result_json(entries[n], scores[n], matched[n]),
                        "added": n in chosen,
                        "why": "added" if n in chosen else why.get(n, ""),
                    }
                    for n in order
                ],
                "block": block,
                "block_tokens": tokens,
            }
        )
        return 0
    sys.stdout.write(inspect_text(found, prompt, asked, order, scores, matched, chosen, why))
    sys.stdout.write(
        f"added ({tokens} tokens):\n{block}" if block else "added: nothing (silence)\n"
    )
    return 0


def report_note(prompt: str) -> str:
    """Why the threshold is higher, when it is."""
    if not pm_recall.reads_as_report(prompt):
        return ""
    return (
        f" ({pm_recall.THRESHOLD:g} x {pm_recall.REPORT_FACTOR:g}: the prompt reads as a report"
        " of a failure)"
    )


def inspect_text(
    found: ProjectIndex,
    prompt: str,
    asked: Sequence[str],
    order: Sequence[int],
    scores: dict[int, float],
    matched: dict[int, list[str]],
    chosen: Sequence[int],
    why: dict[int, str],
) -> str:
    index = found.built
    entries = index["entries"]
    epics = len({entry[1] for entry in entries})
    scored = min(len(prompt), pm_recall.PROMPT_PREFIX_CHARS)

    def shown(text: str) -> str:
        return memory_text.neutralise_markup(" ".join(memory_text.clean(text).split()))

    lines = [
        f"prompt: {scored} of {len(prompt)} characters scored; terms: "
        + (shown(", ".join(asked)) or "none"),
        f"index: {entries_text(len(entries))} of {plural(epics, 'epic')} "
        f"({plural(len(found.archives), 'archive file')})",
        f"added when: score >= {pm_recall.threshold(prompt):g}{report_note(prompt)}, not already"
        " in the session, within the budget",
        "",
    ]
    if not order:
        lines.append("no entry matches any term")
    for number in order[:SHOWN_CANDIDATES]:
        outcome = "added" if number in chosen else why.get(number, "")
        line = entries[number][3]
        lines.append(f"{scores[number]:7.2f}  {line}")
        lines.append(f"         {outcome}; matched: {shown(', '.join(matched[number]))}")
    if len(order) > SHOWN_CANDIDATES:
        lines.append(f"({len(order) - SHOWN_CANDIDATES} more candidates with lower scores)")
    return "\n".join(lines) + "\n\n"


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser(
        "search",
        "Print the entries of every epic (the memory file and its archive/ folder) that best "
        "match WORDS, ranked as prompt-time recall ranks them, stamped and cleaned.",
    )
    parser.add_argument("words", nargs="+", metavar="WORDS", help="what to look for")
    pm_cli.add_count(parser, "--limit", 1, DEFAULT_LIMIT, "entries to print at most")
    add_block_options(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = pm_cli.parse_args(build_parser(), sys.argv[1:] if argv is None else argv)
    return pm_cli.run(lambda: search(args))
