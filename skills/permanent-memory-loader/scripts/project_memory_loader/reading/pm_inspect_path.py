# `permanent_memory.py inspect --path FILE`: what recall at the file would add when a file tool
# is about to touch FILE as a session's first call (the session-start block's lines received,
# `--prompt` as the session's prompt), which globs and entries matched it and why each governing
# epic's entries were or were not offered.
from __future__ import annotations

import argparse
import sys

from ..core import pm_cli
from ..core.pm_cli import project_dir
from ..core.pm_load import decode
from ..recall import pm_file_hook, pm_path_index, pm_recall, pm_recall_store
from .pm_block import read_memory
from .pm_search import no_file, project_index


def inspect_path(args: argparse.Namespace) -> int:
    found = project_index(args)
    memory = read_memory(args.file, args.project_dir)
    if found is None or memory is None:
        return no_file(args)
    root = str(project_dir(args.project_dir))
    relative = pm_file_hook.project_relative(root, root, args.path)
    if not relative:
        sys.stdout.write(f"{args.path}: not inside the project: nothing is added\n")
        return 0
    index = found.built
    summary = found.loaded.summary
    usable = memory.data is not None and not summary.skipped
    lines = decode(memory.data).split("\n") if usable and memory.data is not None else []
    epics = summary.epics if usable else []
    archives = pm_recall_store.archive_files(memory.path, None if args.file else root)
    count = found.loaded.tokenizer.count
    table = pm_path_index.table_of(epics, lines, archives, index, count)
    named, governing = pm_path_index.governing(table, relative)
    prompts = [args.prompt] if args.prompt else []
    support = pm_path_index.support_text(relative, prompts)
    entries = index["entries"]
    received = {entry[0] for entry in entries if entry[5]}
    threshold = pm_path_index.FILE_THRESHOLD
    _order, best = pm_path_index.candidates(
        table, index, named, governing, support, threshold, set(received)
    )
    text, used = pm_file_hook.file_blocks(
        table,
        index,
        [(relative, named, governing)] if named or governing else [],
        prompts,
        set(received),
        args.file_tokens,
        args.session_tokens,
    )
    out = [f"file: {relative}"]
    out.append(f"support: the path{' and --prompt' if prompts else ''} (score >= {threshold:g})")
    for slot, globs in governing.items():
        epic_id, _start, _end, _written = table["epics"][slot]
        score = best.get(slot, 0.0)
        verdict = "offered" if score >= threshold else "not offered"
        out.append(f"  {epic_id}: Paths {', '.join(globs)} match; support {score:.2f}: {verdict}")
    for number in named:
        shown = " (in the session-start block)" if entries[number][5] else ""
        out.append(f"  named by {entries[number][3]}{shown}")
    if not named and not governing:
        out.append("  no Paths glob and no path an entry names governs it")
    out.append(f"added ({used} tokens):\n{text}" if text else "added: nothing (silence)")
    sys.stdout.write("\n".join(out) + ("" if text else "\n"))
    return 0


def add_file_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--path",
        metavar="FILE",
        help="instead: what recall at the file would add when a file tool touches FILE "
        "(relative to the project; with --prompt as the session's prompt), the globs and "
        "entries that matched and why",
    )
    pm_cli.add_count(
        parser,
        "--file-tokens",
        pm_recall.MIN_BUDGET,
        pm_path_index.FILE_BUDGET,
        "tokens recall at the file may add to one call",
    )
