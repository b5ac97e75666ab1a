# Prompt-time recall in the hook: find the cached index (its key is the block's and the
# archive's content), build it on a miss with the block's epics and tokenizer, record what a
# session received (the session-start block's lines included), and add the recall block after
# the permanent-memory block on a prompt. Import-light, as pm_hook: a cache hit loads neither
# the tokenizer nor the parser.
from __future__ import annotations

from . import pm_recall, pm_recall_store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from ..core.pm_parse import Epic
    from .pm_path_index import PathTable
    from .pm_recall import Index

# The events recall takes part in: a session's start records what its block showed; a prompt
# gets the entries relevant to it. (SubagentStart's input carries no task text in Claude Code
# 2.1.332: docs/hooks.md.)
EVENTS = ("SessionStart", "UserPromptSubmit")


class Recall:
    """One hook call's recall: its session's record, its event and input, its budgets."""

    def __init__(
        self, session: str, event: object, payload: dict[str, Any], budgets: tuple[int, int]
    ) -> None:
        self.record = pm_recall_store.session_record(session)
        self.event = event
        self.payload = payload
        self.prompt_budget, self.session_budget = budgets
        self.index: Index | None = None
        # The keys of the entries the block shows: all a session's start needs, read from a
        # small file beside the index (the index itself is not loaded then).
        self.shown: set[str] | None = None
        self.slot = ""
        self.key = ""
        self.archives: list[tuple[str, bytes]] = []
        self.table: PathTable | None = None  # recall at the file's, built with the index
        # The archive's stamp (pm_recall_store.archive_stamp) and the table's key from it: a
        # file tool's call finds the table without reading the archive.
        self.stamp = ""
        self.table_key = ""

    def look_up(self, path: str, root: str, block_slot: str, block_key: str) -> None:
        """Read the archive and the cached index (self.index stays None on a miss; block_key ""
        is one: the block's key is not known before the file is parsed)."""
        self.archives = pm_recall_store.archive_files(path, root)
        self.stamp = pm_recall_store.archive_stamp(path, root)
        self.key_by(block_key)
        if block_slot:
            self.slot = pm_recall_store.index_slot(block_slot)
            if block_key and self.event == "SessionStart":
                self.shown = pm_recall_store.read_shown(self.slot, self.key)
            elif block_key:
                self.index = pm_recall_store.read_index(self.slot, self.key)

    @property
    def ready(self) -> bool:
        """Whether what this call needs was cached (else the block is rendered again)."""
        return self.index is not None or self.shown is not None

    def key_by(self, block_key: str) -> None:
        """The index's key, from the block's (known only after a cache miss's render) and the
        archive's content."""
        self.key = pm_recall_store.index_key(
            block_key, pm_recall_store.archive_digest(self.archives)
        )
        self.table_key = pm_recall_store.table_key(block_key, self.stamp)

    def build(
        self,
        epics: Sequence[Epic],
        data: bytes | None,
        block: str,
        count: Callable[[str], int],
        states: Mapping[str, str] | None = None,
    ) -> None:
        """The cache miss: the index of the block's epics (read from data) and the archive's,
        cached; `states` marks the paths entries name, as the block does (pm_evidence)."""
        from ..core.pm_load import decode
        from .pm_path_index import table_of
        from .pm_recall_index import index_files

        lines = decode(data).split("\n") if data is not None and epics else []
        self.index = index_files(epics, lines, self.archives, block, count, states or {})
        self.shown = {entry[0] for entry in self.index["entries"] if entry[5]}
        self.table = table_of(epics, lines, self.archives, self.index, count)
        if self.slot:
            pm_recall_store.store_index(self.slot, self.key, self.index, self.shown)
            pm_recall_store.store_table(self.slot, self.table_key, self.table)

    def add_to(self, sent: str) -> str:
        """What this hook call sends: `sent` (the permanent-memory block or ""), then on a
        prompt the recall block; the session's record updated."""
        index = self.index
        shown = self.shown
        if shown is None and index is not None:
            shown = {entry[0] for entry in index["entries"] if entry[5]}
        if shown is None:
            return sent
        tokens, received = pm_recall_store.read_received(self.record)
        before = (tokens, set(received))
        if self.event == "SessionStart" and self.payload.get("source") != "resume":
            tokens, received = 0, set()  # a new context: nothing of an earlier one is in it
            pm_recall_store.note_prompt(self.record, None)
        if sent or self.event == "SessionStart":
            received.update(shown)
        extra = ""
        prompt = self.payload.get("prompt")
        if self.event == "UserPromptSubmit" and isinstance(prompt, str):
            pm_recall_store.note_prompt(self.record, prompt)  # what recall at the file reads
        if self.event == "UserPromptSubmit" and isinstance(prompt, str) and index is not None:
            left = self.session_budget - tokens
            extra, keys, used = pm_recall.recall(index, prompt, received, self.prompt_budget, left)
            received.update(keys)
            tokens += used
        if (tokens, received) != before:
            pm_recall_store.write_received(self.record, tokens, received)
        return sent + extra
