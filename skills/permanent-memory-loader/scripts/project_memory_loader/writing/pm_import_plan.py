# From records to epics for `import`: each record's epic (ID from number and slug, intent from
# the title, its date, its decision as entries, its Keywords and Paths lines, its Source line),
# where it goes (the live file or the archive, by status), and an epic already on file brought up
# to date while keeping the lines added to it since. Pure: the project's tree and the dates git
# gives are passed in; pm_import reads files and writes them.
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from ..core.pm_meta_lines import MAX_KEYWORD_CHARS, keywords_value, split_keywords
from ..core.pm_parse import LABELS, Epic
from ..evidence.pm_globs import glob_problem
from ..shared import memory_text
from .pm_epic_input import (
    LIST_FIELDS,
    MAX_KEYWORDS_CHARS,
    Entry,
    Item,
    Keyword,
    keyword_key,
    read_entry,
)
from .pm_epic_layout import format_epic
from .pm_import_formats import PROPOSED, REJECTED, STOP_WORDS, SUPERSEDED, Record

PREFIXES = {"adr": "ADR", "madr": "ADR", "log4brains": "ADR", "rfc": "RFC", "kep": "KEP",
            "rule": "RULE"}  # fmt: skip
MAX_ID_CHARS = 28  # the block shows the ID and the intent within 20 tokens
MAX_IMPORT_KEYWORDS = 20
MAX_IMPORT_PATHS = 8
BROAD_FILES = (
    200  # a folder with more files than this, and a quarter of the project's, is too broad
)
MAX_HITS = 3  # a name found in more places than this names nothing in particular
SIGNALS = ("named", "tree", "git")
SIDE_FOLDERS = frozenset(
    "test tests testdata test_data __tests__ spec specs e2e e2e_env fixtures docs doc website "
    "examples example generated vendor third_party node_modules dist build target".split()
)
LIVE, ARCHIVE = "live", "archive"
_ID_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
_TERM = re.compile(r"[\w .:/*+#@&'-]{2,60}")
_LABEL_FIELD = dict(zip(LABELS, LIST_FIELDS))


class Tree(NamedTuple):
    """The project's files and folders (project-relative, `/`-separated), each name (case,
    `-`, `_` and a file's extension aside) with the paths that have it, and how many files
    each folder holds."""

    files: frozenset[str]
    dirs: frozenset[str]
    by_name: Mapping[str, tuple[str, ...]]
    sizes: Mapping[str, int] = {}


def name_key(name: str) -> str:
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    return re.sub(r"[-_ .]", "", stem).lower()


def build_tree(files: Iterable[str]) -> Tree:
    file_set = frozenset(files)
    sizes: dict[str, int] = {}
    for path in file_set:
        parts = path.split("/")
        for end in range(1, len(parts)):
            folder = "/".join(parts[:end])
            sizes[folder] = sizes.get(folder, 0) + 1
    dirs = set(sizes)
    by_name: dict[str, list[str]] = {}
    for path in sorted(file_set | dirs):
        by_name.setdefault(name_key(path.rsplit("/", 1)[-1]), []).append(path)
    return Tree(file_set, frozenset(dirs), {k: tuple(v) for k, v in by_name.items()}, sizes)


def as_glob(tree: Tree, path: str) -> str:
    return path + "/**" if path in tree.dirs else path


def _candidates(token: str) -> list[str]:
    """The spellings of a token that may be a path in the tree: as written, with `:` modules
    (Gradle's `:core:ui`) and Go or Java package names (`k8s.io/kubernetes/pkg/x`,
    `org.jabref.logic`) as folders."""
    token = token.strip().strip("'\"").split(" ", 1)[0].rstrip(".,;:")
    token = re.sub(r"^(?:\./|/)+", "", token).removesuffix("/*").removesuffix("/**")
    token = token.rstrip("/")
    found = [token]
    if ":" in token and "/" not in token:
        found.append(token.strip(":").replace(":", "/").removesuffix("/*"))
    if re.match(r"[\w-]+\.(?:io|com|org|net|dev)/", token):
        parts = token.split("/")
        found += ["/".join(parts[n:]) for n in (1, 2, 3) if len(parts) > n]
    if re.fullmatch(r"[a-z][\w]*(?:\.[a-z][\w]*){2,}", token):
        found.append(token.replace(".", "/"))
    return [f for f in found if f and ".." not in f.split("/") and len(f) <= 200]


def named_paths(record: Record, tree: Tree, own_folder: str) -> list[str]:
    """Signal 1: the files, folders, packages and modules the record names that exist in the
    tree, exactly or as the end of one path (at most MAX_HITS places)."""
    found: list[str] = []
    for token in record.named:
        for candidate in _candidates(token):
            if candidate in tree.files or candidate in tree.dirs:
                hits: Sequence[str] = (candidate,)
            elif token.endswith("/") and "/" not in candidate:  # `webhooks/`: a folder's name
                hits = [p for p in tree.by_name.get(name_key(candidate), ()) if p in tree.dirs]
            elif "/" in candidate:
                key = name_key(candidate.rsplit("/", 1)[-1])
                tail = candidate.rsplit("/", 1)[0]
                hits = [p for p in tree.by_name.get(key, ()) if p.rsplit("/", 1)[0].endswith(tail)]
            else:
                continue
            hits = [h for h in hits if not h.startswith(own_folder)] if own_folder else hits
            if 0 < len(hits) <= MAX_HITS:
                found.extend(as_glob(tree, hit) for hit in hits)
                break
    return found


def _within(path: str, folder: str) -> bool:
    return bool(folder) and path.startswith(folder)


def _is_side(path: str) -> bool:
    """A path under tests, docs, generated or vendored code: not what a decision governs."""
    return any(part.lower() in SIDE_FOLDERS for part in path.split("/")[:-1])


def tree_paths(record: Record, tree: Tree, own_folder: str) -> list[str]:
    """Signal 2: the folders (else files) whose name is one of the record's own identifiers (or
    its whole slug), of at least six characters, outside tests, docs and generated code, when
    they are found in at most MAX_HITS places."""
    found: list[str] = []
    for term in (*record.terms, record.slug):
        key = name_key(term.rsplit("/", 1)[-1])
        if len(key) < 6 or key in STOP_WORDS:
            continue
        hits = [p for p in tree.by_name.get(key, ())
                if not _within(p, own_folder) and not _is_side(p)]  # fmt: skip
        folders = [p for p in hits if p in tree.dirs]
        hits = [p for p in (folders or hits)
                if not any(o != p and p.startswith(o + "/") for o in hits)]  # fmt: skip
        if 0 < len(hits) <= MAX_HITS:
            found.extend(as_glob(tree, hit) for hit in hits)
    return found


def git_paths(changed: Sequence[str], tree: Tree, own_folder: str) -> list[str]:
    """Signal 3: the files changed in the commits that added or changed the record (git's
    history before the import), as their folders when three or more share one."""
    files = [
        p for p in changed if p in tree.files and not (own_folder and p.startswith(own_folder))
    ]
    by_dir: dict[str, list[str]] = {}
    for path in files:
        by_dir.setdefault(path.rsplit("/", 1)[0] if "/" in path else "", []).append(path)
    found = []
    for folder, paths in by_dir.items():
        found.extend([folder + "/**"] if folder and len(paths) >= 3 else paths)
    return found


def record_paths(
    record: Record,
    record_path: str,
    tree: Tree,
    signals: Sequence[str],
    changed: Sequence[str] = (),
) -> tuple[str, ...]:
    """The Paths globs from the chosen signals, each once, at most MAX_IMPORT_PATHS; a rule
    file's own globs come first and always."""
    own = record_path.rsplit("/", 1)[0] + "/" if "/" in record_path else ""
    found: list[str] = list(record.globs)
    if "named" in signals:
        found += named_paths(record, tree, own)
    if "tree" in signals:
        found += tree_paths(record, tree, own)
    if "git" in signals:
        found += git_paths(changed, tree, own)
    kept: list[str] = []
    broad = max(BROAD_FILES, len(tree.files) // 4)
    for glob in found:
        if not glob or glob in kept or glob_problem(glob) is not None or "," in glob:
            continue
        if glob.endswith("/**") and tree.sizes.get(glob[:-3], 0) > broad:
            continue  # `src/**`: a folder that holds a quarter of the project governs nothing
        if glob not in record.globs and _is_side(glob):
            continue
        kept.append(glob)
    # A folder's glob covers what is inside it.
    kept = [g for g in kept if not any(o != g and o.endswith("/**") and g.startswith(o[:-2])
                                       for o in kept)]  # fmt: skip
    return tuple(kept[:MAX_IMPORT_PATHS])


def epic_id(record: Record, record_path: str) -> str:
    """Prefix, number and slug (`ADR-0007-project-structure`): numbers collide in real
    folders, number and slug do not; a record with no number has its slug alone."""
    prefix = PREFIXES[record.kind]
    slug = _ID_CHARS.sub("-", record.slug).strip("-._") or _ID_CHARS.sub(
        "-", record_path.rsplit("/", 1)[-1]
    ).strip("-._")
    core = f"{record.number}-{slug}" if record.number and slug != record.number else (
        record.number or slug)  # fmt: skip
    text = f"{prefix}-{core}"
    if len(text) > MAX_ID_CHARS:
        text = text[:MAX_ID_CHARS].rsplit("-", 1)[0]
    return text.strip("-.")


def keywords_for(record: Record) -> list[str]:
    """The title's words, then the record's own terms, each once, at most MAX_IMPORT_KEYWORDS."""
    terms: list[str] = []
    seen: set[str] = set()
    words = re.findall(r"[A-Za-z][\w+#.-]*[\w+#]|[A-Za-z]", record.title)
    for term in (*words, *record.terms):
        term = term.strip(" .:/*")
        key = keyword_key(term)
        if (
            len(term) < 3
            or key in seen
            or key in STOP_WORDS
            or not _TERM.fullmatch(term)
            or len(term) > MAX_KEYWORD_CHARS
            or memory_text.redact_secrets(term)[1]
            or split_keywords(keywords_value(f"**Keywords:** {term}") or "") != (term,)
        ):
            continue
        if len(", ".join([*terms, term])) > MAX_KEYWORDS_CHARS:
            break
        seen.add(key)
        terms.append(term)
        if len(terms) == MAX_IMPORT_KEYWORDS:
            break
    return terms


class Planned(NamedTuple):
    record_path: str
    epic_id: str
    target: str  # LIVE or ARCHIVE
    entry: Entry
    digest: str  # of the epic text the import writes, Source line aside
    notes: tuple[str, ...]


def entries_for(record: Record, successor: str) -> dict[str, list[str]]:
    """The lists of an epic's fields, by the record's status."""
    decisions = list(record.decisions)
    gotchas = [text for kind, text in record.constraints if kind == "gotchas"]
    anti = [text for kind, text in record.constraints if kind == "anti_patterns"]
    if record.status == PROPOSED:
        what = record.status_text or "proposed"
        return {"tentative": [f"({what}) {text}" for text in decisions + gotchas + anti]}
    if record.status == REJECTED:
        return {"anti_patterns": [f"rejected: {text}" for text in decisions] + anti,
                "gotchas": gotchas}  # fmt: skip
    if record.status == SUPERSEDED:
        pointer = f"superseded by {successor}" if successor else "superseded (no successor named)"
        if record.status_text.lower().startswith("deprecated") and not successor:
            pointer = "deprecated"
        return {"decisions": [pointer, *decisions], "gotchas": gotchas, "anti_patterns": anti}
    return {"decisions": decisions, "gotchas": gotchas, "anti_patterns": anti}


def plan_record(
    record: Record,
    record_path: str,
    completed: str,
    paths: Sequence[str],
    successor: str,
    now: datetime,
    epic_name: str | None = None,
) -> Planned:
    """The epic for one record (InvalidEntry when none can be written from it)."""
    name = epic_name or epic_id(record, record_path)
    fields: dict[str, object] = {
        "id": name,
        "intent": record.title[:120],
        "completed": completed,
        "keywords": keywords_for(record),
        "paths": list(paths),
    }
    for field, texts in entries_for(record, successor).items():
        if texts:
            fields[field] = [{"text": text} for text in texts]
    entry, notes = read_entry(fields, now, schema=1)
    target = ARCHIVE if record.status == SUPERSEDED else LIVE
    digest = hashlib.sha256(format_epic(entry).encode("utf-8")).hexdigest()[:8]
    return Planned(record_path, name, target, entry, digest, (*record.notes, *notes))


def counts_stamp(entry: Entry) -> str:
    """How many items of each list (in LIST_FIELDS order), keywords and globs the import wrote:
    `2-1-0-0-0-0-8-2`."""
    counts = [sum(1 for item in entry.items if item.field == field) for field in LIST_FIELDS]
    return "-".join(map(str, (*counts, len(entry.keywords), len(entry.paths))))


def source_line(planned: Planned) -> str:
    """The Source line: the record, the digest of the import's epic, the import's counts."""
    stamp = f"{planned.digest}, {counts_stamp(planned.entry)}"
    return f"**Source:** {planned.record_path} (imported {stamp})"


def epic_text(planned: Planned, entry: Entry) -> str:
    """The epic as the import writes it: add's v1 layout with the Source line after the last
    metadata line."""
    lines = format_epic(entry).split("\n")
    at = 2 + bool(entry.keywords) + bool(entry.paths)
    lines.insert(at, source_line(planned))
    kept: list[str] = []
    for index, line in enumerate(lines):  # add's empty subsections: headings with no entry
        if line.startswith("### ") and not any(
            other.startswith("- ") for other in lines[index + 1 : index + 2]
        ):
            if kept and not kept[-1]:
                kept.pop()
            continue
        kept.append(line)
    return "\n".join(kept).rstrip("\n") + "\n"


def stamp_parts(stamp: str) -> tuple[str, list[int]] | None:
    """A Source stamp's digest and counts; None for one the import did not write."""
    found = re.fullmatch(r"([0-9a-f]{8}), ((?:\d{1,4}-){7}\d{1,4})", stamp)
    if found is None:
        return None
    return found.group(1), [int(n) for n in found.group(2).split("-")]


def updated_entry(planned: Planned, on_file: Epic) -> Entry:
    """The planned entry with what was added to the epic on file after the import kept: in
    each list, the items beyond the ones the import wrote (its stamp's counts), and the same
    for the keywords and the globs. Without a readable stamp everything on file is kept."""
    parts = stamp_parts(on_file.source_stamp)
    counts = parts[1] if parts else [0] * (len(LIST_FIELDS) + 2)
    entry = planned.entry
    mine = {keyword_key(item.text) for item in entry.items}
    items = list(entry.items)
    seen_fields: dict[str, int] = {}
    for sub in on_file.subsections:
        field = _LABEL_FIELD[sub.label]
        for text in sub.entries:
            position = seen_fields.get(field, 0)
            seen_fields[field] = position + 1
            if position < counts[LIST_FIELDS.index(field)]:
                continue  # the import's own line: replaced by the record's new text
            if keyword_key(text) not in mine:
                items.append(Item(field, len(items), text, None))
                mine.add(keyword_key(text))
    order = {field: index for index, field in enumerate(LIST_FIELDS)}
    items.sort(key=lambda item: order[item.field])  # stable: the import's first in each list
    keys = {keyword_key(k.text) for k in entry.keywords}
    keywords = list(entry.keywords)
    for term in on_file.keywords[counts[-2] :]:
        if keyword_key(term) not in keys:
            keywords.append(Keyword(len(keywords), term))
            keys.add(keyword_key(term))
    paths = list(entry.paths)
    paths += [glob for glob in on_file.paths[counts[-1] :] if glob not in paths]
    return entry._replace(items=tuple(items), keywords=tuple(keywords), paths=tuple(paths))
