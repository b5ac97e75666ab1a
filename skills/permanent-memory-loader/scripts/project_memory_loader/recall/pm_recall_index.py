# The recall index, built when the block is rendered (the hook's cache miss, `search`,
# `inspect --prompt`): every entry of every epic of the memory file and of archive/*.md, each
# cleaned as block lines are and counted exactly, with the postings pm_recall scores a prompt
# against. BM25F over two fields (the epic's intent and the entry's text), with each posting's
# weight computed here once, so that a prompt only adds numbers up; and each epic's keywords
# (its Keywords line), matched whole and scored for the epic. Pure: texts and the token
# counter in, the index out. references/recall.md explains the weights.
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ..core.pm_parse import Epic, entry_items, parse_permanent
from ..core.pm_render import (
    NO_STATES,
    SHOWN_ID_CHARS,
    STAMP,
    States,
    cut_line,
    marked_line,
    safe_text,
)
from ..shared import hook_io, memory_text
from . import pm_recall

Counter = Callable[[str], int]

# BM25F: each field's weight and length normalisation (the intent is shared by every entry of
# its epic), and the saturation constant.
FIELDS = ("intent", "text")
HEADING_FIELDS = ("intent",)
FIELD_WEIGHTS = {"intent": 1.0, "text": 1.0}
FIELD_B = {"intent": 0.0, "text": 0.75}
K1 = 1.2
# A word of a keyword the prompt names is worth this many rare words to each entry of its
# epic, times its rarity; each word once per epic, however many of its keywords hold it. Half
# a word of the entries: one threshold then serves a file with Keywords lines and one without.
KEYWORD_WEIGHT = 0.5
# Bounds that keep building linear and small: the entries indexed (the newest first), the
# characters of an entry that are scored, the header counts kept.
MAX_ENTRIES = 5000
MAX_SCORED_CHARS = 1000
HEADER_COUNTS = 20
MEMORY_SOURCE = "permanent_memory.md"


class Source(NamedTuple):
    name: str  # MEMORY_SOURCE, or archive/NAME.md
    epics: Sequence[Epic]
    lines: Sequence[str]  # the normalised text's lines, which the epics' line numbers index


class Item(NamedTuple):
    epic: Epic
    label: str
    text: str  # cleaned, on one line
    first: str  # the first line as the block's sub-line shows it
    source: str


def items(source: Source) -> list[Item]:
    """The source's entries, newest epic first: a v2 summary, then each subsection's items
    (a list item with its continuation lines), in file order."""
    found = []
    for raw in reversed(source.epics):
        epic = redacted(raw, source.lines)
        if epic.summary and safe_text(epic.summary):
            text = safe_text(epic.summary)
            found.append(Item(epic, "summary", text, text, source.name))
        for index, sub in enumerate(epic.subsections):
            starts = epic.item_starts[index] if index < len(epic.item_starts) else ()
            for parts in entry_items(sub.entries, starts):
                text = safe_text(" ".join(parts))
                if text:
                    # The block shows a subsection's first entry cleaned on its own.
                    found.append(Item(epic, sub.label, text, safe_text(parts[0]), source.name))
    return found


def redacted(epic: Epic, lines: Sequence[str]) -> Epic:
    """The epic as read from its section with secrets redacted across lines, as `show` does (a
    private key or a YAML block scalar spans lines; each entry alone would not show it is
    one); the epic itself when there is nothing to redact."""
    section = "\n".join(lines[epic.start_line : epic.end_line])
    text, found = memory_text.redact_secrets(section)
    if not found:
        return epic
    again = parse_permanent(text)
    return again[0] if again else epic._replace(subsections=(), summary=None, item_starts=())


def entry_key(label: str, text: str) -> str:
    """What a session remembers of an entry it received: its content, wherever it is kept."""
    return hook_io.digest(f"{label}\0{text}".encode("utf-8", "surrogatepass"))[:16]


def recall_line(item: Item, states: States = NO_STATES) -> str:
    """`ID label: text`, the paths it names marked as the block marks them (pm_evidence)."""
    shown_id = cut_line(safe_text(item.epic.epic_id) or "?", SHOWN_ID_CHARS)
    return marked_line(item.label, item.text, states, f"{shown_id} ")[0]


def block_line(label: str, first: str, states: States = NO_STATES) -> str:
    """The sub-line the session-start block shows for an entry (pm_render.sub_lines)."""
    return marked_line(label, first, states)[0]


def scored_text(text: str) -> str:
    """The first MAX_SCORED_CHARS characters of text, cut at a space."""
    if len(text) <= MAX_SCORED_CHARS:
        return text
    cut = text[:MAX_SCORED_CHARS]
    return cut[: cut.rfind(" ")] if " " in cut else ""


def field_terms(item: Item) -> dict[str, list[str]]:
    return {
        "intent": pm_recall.terms(scored_text(safe_text(item.epic.intent))),
        "text": pm_recall.terms(scored_text(item.text)),
    }


def idf(entries: int, frequency: int) -> float:
    return math.log(1 + (entries - frequency + 0.5) / (frequency + 0.5))


def build_index(
    sources: Sequence[Source], block: str, count: Counter, states: States = NO_STATES
) -> pm_recall.Index:
    """The index of every entry of the sources (the memory file first, then the archive,
    newest first), with which ones the session-start block shows; `states` marks the paths the
    entries name, as in the block (the archive's paths are not checked)."""
    found = [item for source in sources for item in items(source)][:MAX_ENTRIES]
    shown = set(block.split("\n"))
    entries: list[pm_recall.Entry] = []
    fields: list[dict[str, list[str]]] = []
    ids: dict[str, list[int]] = {}
    ranges: dict[int, list[int]] = {}  # an epic's number: its first entry, one past its last
    keywords: dict[int, list[tuple[str, ...]]] = {}  # an epic's number: its keywords' words
    epic_of: dict[int, int] = {}  # an epic record's identity: its number
    epic_numbers = [epic_of.setdefault(id(item.epic), len(epic_of)) for item in found]
    for number, item in enumerate(found):
        epic = epic_numbers[number]
        if epic not in ranges:
            ranges[epic] = [number, number]
            keywords[epic] = keyword_words(item.epic)
        ranges[epic][1] = number + 1
        line = recall_line(item, states)
        in_block = block_line(item.label, item.first, states) in shown
        key = entry_key(item.label, item.text)
        entries.append(
            (key, safe_text(item.epic.epic_id), item.label, line, count(line + "\n"), in_block,
             item.source, item.text)
        )  # fmt: skip
        fields.append(field_terms(item))
        folded = safe_text(item.epic.epic_id).casefold()
        if any(c.isdigit() for c in folded) and len(folded) >= 3:
            ids.setdefault(folded, []).append(number)
    postings, rarity = weigh(fields, epic_numbers, keywords)
    total = len(entries) + len(set(epic_numbers))
    by_word: dict[str, list[int]] = {}
    listed: list[str] = []
    spans: list[int] = []
    for epic, words_of in keywords.items():
        for words in words_of:
            kept = [word for word in words if word in rarity]
            if kept:
                by_word.setdefault(kept[0], []).append(len(listed))
                listed.append(" ".join(kept))
                spans.extend(ranges[epic])
    return {
        "format": pm_recall.INDEX_FORMAT,
        "entries": entries,
        "postings": postings,
        "ids": {epic_id: tuple(numbers) for epic_id, numbers in ids.items()},
        "unit": idf(max(total, 1), 1) / (1 + K1),
        "stamp_tokens": count(STAMP + "\n"),
        "header_tokens": tuple(
            count(pm_recall.header(n) + "\n") for n in range(1, HEADER_COUNTS + 1)
        ),
        "keywords": listed,
        "keyword_spans": tuple(spans),
        "keyword_words": {word: tuple(numbers) for word, numbers in by_word.items()},
        "keyword_worth": {word: KEYWORD_WEIGHT * value for word, value in rarity.items()},
    }


def keyword_words(epic: Epic) -> list[tuple[str, ...]]:
    """The words of each of the epic's keywords, cleaned as entries are (each once, in order;
    a keyword with no word left out)."""
    found = []
    for keyword in epic.keywords:
        words = tuple(dict.fromkeys(pm_recall.terms(safe_text(keyword))))
        if words and words not in found:
            found.append(words)
    return found


def weigh(
    fields: Sequence[dict[str, list[str]]],
    epics: Sequence[int],
    keywords: dict[int, list[tuple[str, ...]]],
) -> tuple[dict[str, tuple[tuple[int, ...], tuple[float, ...]]], dict[str, float]]:
    """BM25F postings: for each word, the entries that have it and its weight in each; and the
    rarity of each word of the keywords (in units of a word of one entry). `epics` numbers each
    entry's epic: a word of an epic's intent or keywords, which every entry of the epic
    carries, counts once towards how common it is, as if the epic's heading were one more
    entry."""
    total = len(fields)
    lengths = {f: [len(entry[f]) for entry in fields] for f in FIELDS}
    average = {f: (sum(lengths[f]) / total if total else 0.0) or 1.0 for f in FIELDS}
    # term -> entry -> the field-weighted, length-normalised frequency
    frequency: dict[str, dict[int, float]] = {}
    # term -> the entries (text) and the epics (intent, keywords) that have it
    holders: dict[str, set[tuple[str, int]]] = {}
    for number, entry in enumerate(fields):
        for name in FIELDS:
            found = entry[name]
            norm = 1 - FIELD_B[name] + FIELD_B[name] * len(found) / average[name]
            weight = FIELD_WEIGHTS[name] / norm
            holder = ("epic", epics[number]) if name in HEADING_FIELDS else ("entry", number)
            for term in found:
                per = frequency.setdefault(term, {})
                per[number] = per.get(number, 0.0) + weight
                holders.setdefault(term, set()).add(holder)
    for epic, words_of in keywords.items():
        for words in words_of:
            for word in words:
                holders.setdefault(word, set()).add(("epic", epic))
    units = total + len(set(epics))
    rare = {
        word: idf(units, len(holders[word])) / idf(units, 1)
        for words_of in keywords.values()
        for words in words_of
        for word in words
    }
    postings = {}
    for term, per in frequency.items():
        value = idf(units, len(holders[term]))
        numbers = sorted(per)
        weights = [value * per[n] / (K1 + per[n]) for n in numbers]
        postings[term] = (tuple(numbers), tuple(weights))
    return postings, rare


def index_files(
    epics: Sequence[Epic],
    lines: Sequence[str],
    archives: Sequence[tuple[str, bytes]],
    block: str,
    count: Counter,
    states: States = NO_STATES,
) -> pm_recall.Index:
    """The index of the memory file's epics (none when the block skipped the file; `lines`
    their text's) and of the archive files' (`archive/NAME.md`, bytes), newest file first."""
    from ..core.pm_load import decode

    sources = [Source(MEMORY_SOURCE, epics, lines)]
    for name, data in archives:
        text = decode(data)
        sources.append(Source(name, parse_permanent(text), text.split("\n")))
    return build_index(sources, block, count, states)
