# `permanent_memory.py check`: what in a permanent_memory.md text the loader would ignore, cut
# or refuse, as findings with line numbers. Pure: the token counters are passed in.
#
# Epics, their entries and the lines of their headings and Completed values all come from
# pm_parse, so the check and the loader always agree on what is a heading.
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import NamedTuple

from ..core import pm_names
from ..core.pm_meta_lines import MAX_KEYWORD_CHARS, MAX_KEYWORDS, completed_value, keywords_value
from ..core.pm_parse import (
    LABELS,
    Epic,
    entry_text,
    epic_heading,
    normalise_text,
    parse_permanent,
    subsection_heading,
    subsection_label,
    v2_marker,
)
from ..core.pm_render import MAX_LINE_CHARS, SKIP_TOKENS, Budget, cut_line, epic_line, safe_text
from ..evidence import pm_evidence
from ..shared import memory_text
from ..writing.pm_epic_input import HEADINGS, MAX_EPIC_TOKENS, keywords_over

ERROR, WARNING = "error", "warning"
# No epic is stale at this moment, so an Epic line is checked without the stale prefix.
_NEVER_STALE = datetime.min.replace(tzinfo=timezone.utc)

Counter = Callable[[str], int]


class Finding(NamedTuple):
    line: int  # 1-based, in the text with its line ends normalised
    level: str  # ERROR or WARNING
    message: str


class EpicSize(NamedTuple):
    epic_id: str
    line: int
    tokens: int


class Report(NamedTuple):
    findings: list[Finding]  # in line order
    epics: list[EpicSize]
    tokens: int  # of the whole text


def _line_of(lines: Sequence[str], start: int, end: int, entry: str) -> int:
    """Index of the first line in [start, end) that the loader reads as `entry`, else start."""
    for index in range(start, end):
        if lines[index].strip() and entry_text(lines[index]) == entry:
            return index
    return start


# Subsections the producer writes that the block does not show: never an error.
PRODUCER_SUBSECTIONS = ("cross-cutting concerns",)


def _subsection_findings(epic: Epic, name: str) -> list[Finding]:
    known = ", ".join(HEADINGS[field].split(" (")[0] for field in HEADINGS)
    findings = []
    for index, title in epic.unknown_subsections:
        if " ".join(title.casefold().split()).rstrip(":").strip() in PRODUCER_SUBSECTIONS:
            continue
        findings.append(
            Finding(
                index + 1,
                ERROR,
                f"{name}: unknown subsection '### {safe_text(title)}'; the loader ignores it "
                f"(known: {known})",
            )
        )
    return findings


def _no_completed(epic: Epic, name: str) -> Finding:
    """A missing date is not an error (the v2 form often has none): staleness cannot be judged."""
    where = "a **Completed:** line or completed= in the v2 marker"
    return Finding(
        epic.start_line + 1,
        WARNING,
        f"{name}: no completion date, so the loader cannot tell when it goes stale; add {where}",
    )


def _epic_findings(
    epic: Epic, lines: Sequence[str], line_count: Counter, line_budget: Budget
) -> list[Finding]:
    name = safe_text(epic.epic_id) or "?"  # file text, shown in a terminal: cleaned
    heading = epic.start_line + 1
    findings = []
    if not epic.epic_id:
        findings.append(Finding(heading, ERROR, "epic heading without an ID"))
    findings.extend(_subsection_findings(epic, name))
    if epic.completed is None:
        findings.append(_no_completed(epic, name))
    elif epic.completed_at is None:
        where = epic.start_line if epic.completed_line is None else epic.completed_line
        findings.append(
            Finding(
                where + 1,
                ERROR,
                f"{name}: Completed {safe_text(epic.completed)!r} is not an ISO 8601 date or "
                "date-time (e.g. 2026-05-15T14:00:00Z)",
            )
        )
    shown = epic_line(epic, _NEVER_STALE, line_budget, line_count)
    shown_id, intent = safe_text(epic.epic_id) or "?", safe_text(epic.intent)
    whole = f"Epic {shown_id} ({intent}):" if intent else f"Epic {shown_id}:"
    if shown != memory_text.neutralise_markup(whole):
        findings.append(
            Finding(
                heading,
                WARNING,
                f"{name}: the loader cuts this heading to {shown!r} (at most "
                f"{MAX_LINE_CHARS} characters and {Budget().epic_line_tokens} tokens)",
            )
        )
    for index in epic.keywords_lines[1:]:
        findings.append(
            Finding(
                index + 1,
                WARNING,
                f"{name}: a second Keywords line (first at line "
                f"{(epic.keywords_line or 0) + 1}): only the first is read; put the terms on "
                "one line",
            )
        )
    if epic.keywords_line is not None:
        findings.extend(_keywords_findings(lines[epic.keywords_line], epic.keywords_line, name))
    for index in epic.paths_lines[1:]:
        findings.append(
            Finding(
                index + 1,
                WARNING,
                f"{name}: a second Paths line (first at line {(epic.paths_line or 0) + 1}): "
                "only the first is read; put the globs on one line",
            )
        )
    for label in LABELS:
        for position, sub in enumerate(epic.subsections):
            if sub.label != label:
                continue
            entry = next((e for e in sub.entries if safe_text(e)), None)
            if entry is None:
                continue
            line = memory_text.neutralise_markup(f"  {label}: {safe_text(entry)}")
            if cut_line(line) != line:
                # Search from the subsection's heading; v2 entries outside one: from the epic's.
                lines_known = position < len(epic.subsection_lines)
                start = epic.subsection_lines[position] if lines_known else -1
                if start < 0:
                    start = epic.start_line
                index = _line_of(lines, start + 1, epic.end_line, entry)
                findings.append(
                    Finding(
                        index + 1,
                        WARNING,
                        f"{name}: the loader cuts this {label} line to {MAX_LINE_CHARS} "
                        "characters; put the gist first, or details in a later line",
                    )
                )
            break
    return findings


def _keywords_findings(line: str, index: int, name: str) -> list[Finding]:
    """A Keywords line over what `add` writes (a merge of two lines, or a hand edit, can be):
    too many terms, too many characters in all, or a term longer than the parser reads."""
    terms = [term.strip() for term in (keywords_value(line) or "").split(",") if term.strip()]
    findings = []
    over = keywords_over(terms)
    if over:
        read = f"recall reads the first {MAX_KEYWORDS}; " if len(terms) > MAX_KEYWORDS else ""
        findings.append(
            Finding(
                index + 1,
                WARNING,
                f"{name}: the Keywords line holds {over}; {read}keep the words a request "
                "about this area would use",
            )
        )
    longest = max(terms, key=len, default="")
    if len(longest) > MAX_KEYWORD_CHARS:
        findings.append(
            Finding(
                index + 1,
                WARNING,
                f"{name}: a Keywords term of {len(longest)} characters; at most "
                f"{MAX_KEYWORD_CHARS}, and recall reads only its first {MAX_KEYWORD_CHARS}: "
                "shorten it",
            )
        )
    return findings


EVIDENCE_FIX = "update the entry, or archive the epic"


def _stale_paths(text: str, states: Mapping[str, str]) -> list[str]:
    """`PATH is gone` / `PATH moved to NEW` for each path the text names that is not there."""
    found = []
    for _start, _end, path in pm_evidence.path_spans(text):
        state = states.get(path, pm_evidence.EXISTS)
        if state == pm_evidence.GONE:
            found.append(f"{path} is gone")
        elif state.startswith(pm_evidence.MOVED):
            found.append(f"{path} {pm_evidence.MOVED}{safe_text(state[len(pm_evidence.MOVED) :])}")
    return list(dict.fromkeys(found))


def evidence_findings(
    lines: Sequence[str], epics: Sequence[Epic], states: Mapping[str, str]
) -> list[Finding]:
    """A warning for each line of an epic (its heading's intent, its summary, each entry the
    loader reads) that names a path that is gone or moved (`states`, from pm_evidence)."""
    if not states:
        return []
    findings = []
    for epic in epics:
        name = safe_text(epic.epic_id) or "?"
        texts = [(epic.start_line, safe_text(epic.intent))]
        ignored = in_fence = False
        # never shown: a path there goes stale unseen (the Paths line is checked as globs)
        metadata = set(epic.keywords_lines) | set(epic.paths_lines)
        for index in range(epic.start_line + 1, epic.end_line):
            line = lines[index]
            if line.lstrip(" \t").startswith(("```", "~~~")):
                in_fence = not in_fence
                continue
            title = None if in_fence else subsection_heading(line)
            if title is not None:
                ignored = subsection_label(title) is None  # the loader skips its lines
                continue
            if ignored or not line.strip() or (not in_fence and v2_marker(line) is not None):
                continue
            if not in_fence and (completed_value(line) is not None or index in metadata):
                continue
            texts.append((index, safe_text(entry_text(line))))
        for index, shown in texts:
            stale = _stale_paths(shown, states)
            if stale:
                message = f"{name}: {', '.join(stale)}; {EVIDENCE_FIX}"
                findings.append(Finding(index + 1, WARNING, message))
    return findings


def check_text(
    text: str,
    count: Counter,
    line_count: Counter,
    line_budget: Budget,
    max_tokens: int = SKIP_TOKENS,
    epic_tokens: int = MAX_EPIC_TOKENS,
    states: Mapping[str, str] | None = None,
) -> Report:
    """Findings for a normalised permanent_memory.md text. `count` sizes epics and the file;
    `line_count` and `line_budget` are what the loader cuts Epic lines with; `states` says
    which of the paths entries name are gone or moved (pm_load.check_evidence)."""
    # The parser numbers lines of the normalised text (a lone CR ends a line too): split the
    # same text, so a finding's line number is the parser's and never past the end.
    text = normalise_text(text)
    lines = text.split("\n")
    epics = parse_permanent(text)
    findings: list[Finding] = []
    findings.extend(evidence_findings(lines, epics, states or {}))
    sizes = []
    first_seen: dict[str, int] = {}
    for epic in epics:
        heading = epic.start_line + 1
        findings.extend(_epic_findings(epic, lines, line_count, line_budget))
        if epic.epic_id in first_seen:
            findings.append(
                Finding(
                    heading,
                    ERROR,
                    f"duplicate epic ID {safe_text(epic.epic_id)} "
                    f"(first at line {first_seen[epic.epic_id]}); keep one of the two "
                    f"sections{MERGE_FIX}",
                )
            )
        elif epic.epic_id:
            first_seen[epic.epic_id] = heading
        body = "\n".join(lines[epic.start_line : epic.end_line]).rstrip() + "\n"
        tokens = count(body)
        sizes.append(EpicSize(epic.epic_id, heading, tokens))
        if tokens > epic_tokens:
            findings.append(
                Finding(
                    heading,
                    WARNING,
                    f"{safe_text(epic.epic_id) or '?'}: {tokens} tokens; keep an epic within "
                    f"{epic_tokens} (add trims to that)",
                )
            )
    total = count(text)
    if total > max_tokens:
        findings.append(
            Finding(
                1,
                ERROR,
                f"{total} tokens, over the {max_tokens}-token ceiling: the loader will not "
                f"summarise this file; move old epics out with {pm_names.prog()} archive",
            )
        )
    if not epics:
        findings.append(Finding(1, WARNING, "no '## Epic:' section; the loader shows nothing"))
    findings.extend(conflict_findings(lines, epics))
    typos = heading_typos(lines)
    findings.extend(typos)
    findings.extend(not_after_typo(torn_findings(lines, epics), typos, epics))
    findings.sort(key=lambda finding: finding.line)
    return Report(findings, sizes, total)


# What a merge that ran without the epic-aware driver leaves behind (a hosted merge button, a
# clone without `git-setup`, `merge=union`): conflict markers, and epics torn apart or
# interleaved with another version of themselves.

MERGE_FIX = (
    f" (a line-based merge can do this; `{pm_names.prog()} git-setup` makes git merge this "
    "file epic by epic)"
)


def conflict_findings(lines: Sequence[str], epics: Sequence[Epic]) -> list[Finding]:
    """Every git conflict marker line. A bare ======= counts inside an open conflict or inside
    an epic (before the first epic it can be a Markdown heading underline)."""
    first_epic = epics[0].start_line if epics else len(lines)
    findings = []
    open_at: int | None = None
    for index, line in enumerate(lines):
        mark = memory_text.conflict_mark(line)
        if (
            mark is None
            and line.rstrip() == "======="
            and (open_at is not None or index >= first_epic)
        ):
            mark = "======="
        if mark is None:
            continue
        if mark == "<<<<<<<":
            open_at = index
        elif mark == ">>>>>>>":
            open_at = None
        findings.append(
            Finding(
                index + 1,
                ERROR,
                f"unresolved merge conflict: a '{mark}' line; keep the lines that are right, "
                f"delete the <<<<<<< ======= >>>>>>> lines, then check again{MERGE_FIX}",
            )
        )
    return findings


_NEAR_EPIC_HEADING = re.compile(r"[ \t]{0,3}#{1,6}[ \t]*epic[ \t]*:[ \t]*(.*)", re.IGNORECASE)


def heading_typos(lines: Sequence[str]) -> list[Finding]:
    """Lines meant as an epic heading that the loader does not read as one (`##Epic: X`,
    `# Epic: X`), outside code fences: the fix is the heading, not a merge."""
    findings = []
    fenced = False
    for index, line in enumerate(lines):
        if line.lstrip(" \t").startswith(("```", "~~~")):
            fenced = not fenced
            continue
        near = None if fenced else _NEAR_EPIC_HEADING.fullmatch(line)
        if near is not None and epic_heading(line) is None:
            fixed = cut_line(safe_text(f"## Epic: {near.group(1).strip()}"), 60)
            shown = cut_line(safe_text(line), 60)
            why = (
                "the space after ## is missing"
                if line.lstrip(" \t").startswith("##") and line.lstrip(" \t")[2:3] not in "# \t"
                else "an epic heading is ## (two #), a space, then Epic:"
            )
            findings.append(
                Finding(
                    index + 1, ERROR, f"'{shown}' is not an epic heading ({why}); write '{fixed}'"
                )
            )
    return findings


def not_after_typo(
    torn: Sequence[Finding], typos: Sequence[Finding], epics: Sequence[Epic]
) -> list[Finding]:
    """The torn-epic findings a heading typo does not explain: one that follows a typo with no
    real epic heading between them is the typo's doing, not a merge's."""
    starts = [epic.start_line + 1 for epic in epics]
    kept = []
    for finding in torn:
        typo = max((t.line for t in typos if t.line < finding.line), default=0)
        start = max((line for line in starts if line < finding.line), default=0)
        if not typo or typo < start:
            kept.append(finding)
    return kept


def torn_findings(lines: Sequence[str], epics: Sequence[Epic]) -> list[Finding]:
    """Epics a line-based merge tore: a subsection heading, Completed line or v2 marker that
    appears twice in one epic (two versions interleaved), or a subsection before any epic (its
    heading went missing)."""
    findings = []
    first_epic = epics[0].start_line if epics else len(lines)
    for index in range(first_epic):
        line = lines[index]
        title = subsection_heading(line)
        if title is not None and subsection_label(title) is not None:
            findings.append(
                Finding(
                    index + 1,
                    ERROR,
                    f"subsection '{safe_text(line.strip())}' outside any epic: the '## Epic:' "
                    f"heading above it is missing; restore it or remove the part{MERGE_FIX}",
                )
            )
    for epic in epics:
        name = safe_text(epic.epic_id) or "?"
        seen: dict[str, int] = {}
        for index in epic.heading_lines:
            title = lines[index].strip()
            if title in seen:
                findings.append(_torn(index, name, f"'{safe_text(title)}' again", seen[title]))
            else:
                seen[title] = index
        for what, found in (
            ("a second Completed line", epic.completed_lines),
            ("a second af-memory:v2 marker", epic.marker_lines),
        ):
            for index in found[1:]:
                findings.append(_torn(index, name, what, found[0]))
    return findings


def _torn(index: int, name: str, what: str, first: int) -> Finding:
    return Finding(
        index + 1,
        ERROR,
        f"{name}: {what} (first at line {first + 1}): two versions of this epic are "
        f"interleaved; keep one version of each part{MERGE_FIX}",
    )
