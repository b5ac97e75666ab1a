# From the file's bytes to the block: decode, decide the 8000-token skip (counting only as far
# as the decision needs), parse, render. Shared by `load`, `inspect` and the hook's cache miss.
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from typing import NamedTuple

from ..evidence import pm_evidence
from .pm_file import CERTAIN_SKIP_BYTES
from .pm_parse import Epic, is_stale, normalise_text, parse_permanent
from .pm_render import (
    NO_STATES,
    SKIP_TOKENS,
    Block,
    Budget,
    States,
    render_block,
    render_skipped,
    safe_text,
)
from .pm_tokens import ESTIMATE_BYTES_PER_TOKEN, Tokenizer, count_up_to

# CERTAIN_SKIP_BYTES (pm_file): more bytes than this means more than SKIP_TOKENS tokens, with no
# counting; the file reader does not even read such a file.
# More bytes than this is over SKIP_TOKENS unless most of it is padding (prose takes about 4
# bytes a token; this is 8): such a file is not summarised and not counted either, so no file
# costs more than counting this many bytes. A run of whitespace is the slowest text there is
# to count (a megabyte of spaces: seconds), and only padding makes a file this big that small.
PADDED_SKIP_BYTES = SKIP_TOKENS * 8


class Evidence(NamedTuple):
    """The paths the epics name, checked against the project (pm_evidence)."""

    root: str | None = None  # the project checked against; None: not checked
    paths: tuple[str, ...] = ()  # the distinct paths named, in file order
    states: States = NO_STATES  # path -> pm_evidence.EXISTS, GONE or MOVED + where to
    git: str = ""  # what git said (pm_evidence_git.GIT_ASKED, or why it was not asked)

    def listed(self) -> list[str]:
        """What the hook's cache key checks: the paths, then where moved ones went."""
        return pm_evidence.listed_paths(self.paths, self.states)

    def bits(self) -> str:
        return pm_evidence.bits_of(self.listed(), self.states)


NO_EVIDENCE = Evidence()


class Summary(NamedTuple):
    block: Block
    epics: list[Epic]
    size: int  # bytes of the file
    skipped: bool
    file_tokens: int | None  # tokens of the whole file when counted (None: not needed)
    budget: Budget  # as applied (the estimate widens the Epic-line limit to bytes)
    evidence: Evidence = NO_EVIDENCE
    now: datetime | None = None  # the moment the block was rendered for (None: skipped)


def decode(data: bytes) -> str:
    """UTF-8 with replacement; UTF-16 when the file starts with its byte-order mark (what
    Windows PowerShell 5 writes with `>`)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return normalise_text(data.decode("utf-16", "replace"))
    return normalise_text(data.decode("utf-8", "replace"))


def line_budget(budget: Budget, tokenizer: Tokenizer) -> Budget:
    """The estimate counts bytes, so the per-Epic-line limit is read as about that many
    tokens' worth of bytes; the block's hard cap stays a hard cap in bytes."""
    if tokenizer.exact:
        return budget
    return budget._replace(epic_line_tokens=budget.epic_line_tokens * ESTIMATE_BYTES_PER_TOKEN)


def epic_texts(epic: Epic) -> list[str]:
    """What of an epic can name a path, as shown: the intent, the summary, every entry."""
    texts = [safe_text(epic.intent), safe_text(epic.summary or "")]
    return texts + [safe_text(entry) for sub in epic.subsections for entry in sub.entries]


def check_evidence(epics: Sequence[Epic], root: str) -> Evidence:
    """Every path the epics name, checked inside `root`; git asked where gone ones went, since
    the completion of the earliest epic naming each (the whole history when one has no date)."""
    since: dict[str, int | None] = {}
    order: list[str] = []
    for epic in epics:
        when = None if epic.completed_at is None else int(epic.completed_at.timestamp())
        for path in pm_evidence.named_paths(epic_texts(epic)):
            if path not in since:
                order.append(path)
                since[path] = when
            elif since[path] is not None:
                since[path] = None if when is None else min(when, since[path] or when)
    paths = tuple(order[: pm_evidence.MAX_PATHS])
    states, git = pm_evidence.check_paths(root, paths, since)
    return Evidence(root, paths, states, git)


def summarise(
    data: bytes | None,
    size: int,
    budget: Budget,
    tokenizer: Tokenizer,
    now: datetime,
    root: str | None = None,
) -> Summary:
    """data is None when the file was too large to be worth reading (size > CERTAIN_SKIP_BYTES).
    With `root`, the paths entries name are checked against that project (pm_evidence)."""
    if data is None or size > CERTAIN_SKIP_BYTES:
        block = render_skipped(size, budget, tokenizer.count)
        return Summary(block, [], size, True, None, budget)
    text = decode(data)
    encoded = len(text.encode("utf-8", "surrogatepass"))
    file_tokens: int | None = None
    if encoded <= SKIP_TOKENS:
        skipped = False  # a token is at least one byte
    elif encoded > PADDED_SKIP_BYTES:
        over = "too large to count"
        block = render_skipped(size, budget, tokenizer.count, over=over)
        return Summary(block, [], size, True, None, budget)
    elif tokenizer.exact:
        file_tokens = count_up_to(text, SKIP_TOKENS, tokenizer.count)
        skipped = file_tokens > SKIP_TOKENS
    else:
        skipped = encoded > SKIP_TOKENS * ESTIMATE_BYTES_PER_TOKEN
    if skipped:
        block = render_skipped(size, budget, tokenizer.count, estimated=not tokenizer.exact)
        return Summary(block, [], size, True, file_tokens, budget)
    epics = parse_permanent(text)
    evidence = check_evidence(epics, root) if root is not None and epics else NO_EVIDENCE
    applied = line_budget(budget, tokenizer) if epics else budget
    block = render_block(epics, applied, tokenizer.count, now, evidence.states)
    return Summary(block, epics, size, False, file_tokens, applied, evidence, now)


def hook_status(summary: Summary, tokenizer: Tokenizer, now: datetime) -> str:
    """What the user is told at session start about the block: `6 epics, 193 tokens (tentative
    and patterns lines left out), 5 stale`; "" when nothing is shown."""
    block = summary.block
    if not block.text:
        return ""
    if summary.skipped:
        return f"permanent memory not loaded (file over {SKIP_TOKENS} tokens)"
    tokens = tokenizer.count(block.text)  # the block as shown (a level's count may be of less)
    # An estimate counts bytes, an upper bound of the tokens.
    bound = "" if tokenizer.exact else "\u2264"
    status = f"{len(summary.epics)} epic{'' if len(summary.epics) == 1 else 's'}, "
    status += f"{bound}{tokens} tokens"
    if block.trimmed:
        status += f" ({block.trimmed})"
    stale = sum(is_stale(epic, now, summary.budget.stale_days) for epic in summary.epics)
    if stale:
        status += f", {stale} stale"
    return status


def hook_summary(
    data: bytes | None,
    size: int,
    target: int,
    hard_cap: int,
    stale_days: int,
    tokenizer: Tokenizer | None = None,
    root: str | None = None,
) -> tuple[Summary, str, Tokenizer]:
    """The hook's cache miss: the summary for these options, now, its paths checked against the
    project at root; the status line for the user; and the tokenizer counted with (recall's
    index counts with it too)."""
    budget = Budget(target=target, hard_cap=hard_cap, stale_days=stale_days)
    # A hook counts at most about SKIP_TOKENS tokens: the bundled counter is done before
    # tiktoken has loaded (scripts/bench measures both).
    tokenizer = tokenizer or Tokenizer(bundled_first=True)
    now = datetime.now(timezone.utc)
    summary = summarise(data, size, budget, tokenizer, now, root)
    return summary, hook_status(summary, tokenizer, now), tokenizer


def hook_block(
    data: bytes | None, size: int, target: int, hard_cap: int, stale_days: int, root: str
) -> tuple[str, str, str, Evidence]:
    """The hook's cache miss: the block for these options, now; the status line for the user;
    why the count is only an estimate ("" when it is exact or nothing needed counting); and the
    evidence the block shows (the paths its cache key checks)."""
    summary, status, tokenizer = hook_summary(data, size, target, hard_cap, stale_days, root=root)
    return summary.block.text, status, tokenizer.problem, summary.evidence
