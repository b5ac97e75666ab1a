"""The figures docs/, README and the skills' pages quote from the code agree with the code.

Each FIGURES row is one constant and the phrasings that quote it: regular expressions (case
does not matter) whose one group is the number, e.g. `hard cap[^\\d\\n]{0,12}(\\d[\\d,]*)` for
"hard cap 200", "hard cap (200)" and "the hard cap: 200". Every match in every page of PAGES
must give the constant's value (`8,000` reads as 8000); a page may state a figure in any
words the patterns do not know (nothing is then checked there), and README may drop a figure
altogether. The patterns are kept near the figure's unit and keyword so a rewording keeps
matching: "over 8000 tokens, the loader skips the file" and "the loader skips a file past
8,000 tokens" both do.

To add a figure: add a row with the constant itself (imported, never the number written out)
and one pattern for each way the pages put it; run this test: a row whose patterns match
nowhere fails too (a pattern that rotted checks nothing). When a page quotes a number that
merely looks like the figure (a measured example, another option's value), make the pattern
stricter rather than listing exceptions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import ROOT
from project_memory_loader.core import pm_limits, pm_render
from project_memory_loader.reading import pm_show
from project_memory_loader.recall import pm_path_index, pm_recall
from project_memory_loader.writing import pm_epic_input, pm_live_cap

PAGES = sorted(
    [
        ROOT / "README.md",
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "skills").glob("*/SKILL.md"),
        *(ROOT / "skills").glob("*/references/*.md"),
        *(ROOT / "commands").glob("*.md"),
    ]
)

NUMBER = r"(\d[\d,]*)(?![.\d])"  # 8000 or 8,000, not the 0 of 0.5
GAP = r"[^\d\n;.]{0,12}"  # a few words, no other number, in the same clause


def option(name: str) -> str:
    """A plugin option's default in a table row (`| `hard_cap` | 200 |`) or in words
    (`hard_cap` (200))."""
    return rf"`{name}`[ |(]{{1,4}}{NUMBER}"


class Figure(NamedTuple):
    name: str
    value: int
    patterns: tuple[str, ...]


FIGURES = [
    Figure(
        "the file size past which the loader skips the file (pm_render.SKIP_TOKENS)",
        pm_render.SKIP_TOKENS,
        (
            rf"{NUMBER}[- ]tokens?,? (?:the loader|it) (?:skips|stops|will not|no longer)",
            rf"{NUMBER}[- ]token (?:skip|threshold|ceiling|file threshold)",
            r"(?:skips?|skipped|not loaded|not summari[sz]ed|stops summari[sz]ing)"
            rf"[^\d\n;.]{{0,30}}"
            rf"(?:over|past|beyond|above) (?:the )?{NUMBER}[- ]tokens?",
            rf"(?:loader reads|loader summari[sz]es)[^\d\n]{{0,4}}{NUMBER}[- ]tokens?",
            rf"`--max-tokens` \(default {NUMBER}\)",
            rf"tokens \(max {NUMBER}\)",
        ),
    ),
    Figure(
        "the block's target (pm_limits.TOKEN_TARGET)",
        pm_limits.TOKEN_TARGET,
        (rf"\btarget(?: of)?[ (:]{{1,3}}{NUMBER}", option("token_target")),
    ),
    Figure(
        "the block's hard cap (pm_limits.HARD_CAP)",
        pm_limits.HARD_CAP,
        (rf"\bhard cap{GAP}{NUMBER}", option("hard_cap")),
    ),
    Figure(
        "an Epic line's tokens (pm_limits.EPIC_LINE_TOKENS)",
        pm_limits.EPIC_LINE_TOKENS,
        (rf"Epic lines? within {NUMBER}\b", rf"{NUMBER} tokens (?:per|an|each) Epic line"),
    ),
    Figure(
        "days after which an epic is stale (pm_limits.STALE_DAYS)",
        pm_limits.STALE_DAYS,
        (
            rf"stale after {NUMBER} days",
            rf"\(>{NUMBER}d may be outdated\)",
            option("stale_days"),
        ),
    ),
    Figure(
        "recall's tokens a prompt (pm_recall.PROMPT_BUDGET)",
        pm_recall.PROMPT_BUDGET,
        (
            rf"within {NUMBER} tokens a prompt",
            rf"{NUMBER} tokens (?:a|per|each|of one) prompt",
            rf"\({NUMBER} tokens each, \d[\d,]* a session\)",
            option("recall_prompt_tokens"),
        ),
    ),
    Figure(
        "recall's tokens a session (pm_recall.SESSION_BUDGET)",
        pm_recall.SESSION_BUDGET,
        (
            rf"\btokens a prompt and {NUMBER} a session",
            rf"tokens each, {NUMBER} a session",
            option("recall_session_tokens"),
        ),
    ),
    Figure(
        "recall at the file's tokens a call (pm_path_index.FILE_BUDGET)",
        pm_path_index.FILE_BUDGET,
        (rf"{NUMBER} tokens (?:a|per|each) (?:call|file)\b", option("recall_file_tokens")),
    ),
    Figure(
        "the token limit of an epic (pm_epic_input.MAX_EPIC_TOKENS)",
        pm_epic_input.MAX_EPIC_TOKENS,
        (
            rf"{NUMBER}-token limit of an epic",
            rf"at most {NUMBER} tokens per epic",
            rf"an epic over {NUMBER} tokens",
            rf"each epic within {NUMBER} tokens",
        ),
    ),
    Figure(
        "where every writer archives the oldest epics (pm_live_cap.LIVE_TOKENS)",
        pm_live_cap.LIVE_TOKENS,
        (rf"would be over {NUMBER} tokens, \d[\d,]* below",),
    ),
    Figure(
        "what show prints at most (pm_show.MAX_SHOW_CHARS)",
        pm_show.MAX_SHOW_CHARS,
        (rf"(?:keeps it|kept) under {NUMBER} characters",),
    ),
    Figure(
        "a block line's characters (pm_render.MAX_LINE_CHARS)",
        pm_render.MAX_LINE_CHARS,
        (rf"cuts \({NUMBER} characters",),
    ),
]


class Quote(NamedTuple):
    page: str
    line: int
    number: int
    text: str


def quotes(figure: Figure, pages: Sequence[Path] = PAGES) -> list[Quote]:
    """Every quote of the figure in the pages, in the words its patterns know."""
    found = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for pattern in figure.patterns:
            for match in re.finditer(pattern, text, re.IGNORECASE):
                digits = next(group for group in match.groups() if group is not None)
                line = text.count("\n", 0, match.start()) + 1
                found.append(
                    Quote(
                        page.relative_to(ROOT).as_posix()
                        if page.is_relative_to(ROOT)
                        else str(page),
                        line,
                        int(digits.replace(",", "")),
                        match[0],
                    )
                )
    return found


@pytest.mark.parametrize("figure", FIGURES, ids=[figure.name for figure in FIGURES])
def test_every_quote_of_a_figure_agrees_with_the_code(figure: Figure) -> None:
    found = quotes(figure)
    assert found, f"no page quotes {figure.name} in any known words: a pattern rotted"
    wrong = [quote for quote in found if quote.number != figure.value]
    assert not wrong, f"{figure.name} is {figure.value} in the code; the pages say:\n" + "\n".join(
        f"  {quote.page}:{quote.line}: {quote.text!r}" for quote in wrong
    )


def test_a_page_that_disagrees_is_caught_in_other_words_too(tmp_path: Path) -> None:
    # The check itself: each phrasing finds its figure, whatever the number says.
    page = tmp_path / "README.md"
    page.write_text(
        "The block aims at a target of 150 tokens, hard cap (250).\n"
        "Past 9,000 tokens the loader skips the file; an epic over 600 tokens is refused.\n"
        "| `recall_session_tokens` | 700 | `--session-tokens` | ... |\n"
    )
    found = {figure.name.split("(")[-1][:-1]: quotes(figure, [page]) for figure in FIGURES}
    numbers = {name: [quote.number for quote in found[name]] for name in found}
    assert numbers["pm_limits.TOKEN_TARGET"] == [150]
    assert numbers["pm_limits.HARD_CAP"] == [250]
    assert numbers["pm_render.SKIP_TOKENS"] == [9000]
    assert numbers["pm_epic_input.MAX_EPIC_TOKENS"] == [600]
    assert numbers["pm_recall.SESSION_BUDGET"] == [700]
    assert found["pm_limits.HARD_CAP"][0].line == 1
