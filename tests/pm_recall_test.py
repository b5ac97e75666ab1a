"""pm_recall and pm_recall_index: terms (identifiers split, the stemmer, stop words), the index,
the scores' order, the threshold, the budgets and what a session never gets twice."""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from project_memory_loader.core import pm_parse, pm_render, pm_tokens
from project_memory_loader.recall import pm_recall, pm_recall_index
from support import token_count


@functools.lru_cache(maxsize=1)
def exact() -> Callable[[str], int]:
    count, _engine, _source = pm_tokens.load_exact_counter(bundled_first=True)
    return count


def index_of(
    text: str, block: str = "", archives: tuple[tuple[str, str], ...] = ()
) -> pm_recall.Index:
    epics = pm_parse.parse_permanent(text)
    lines = pm_parse.normalise_text(text).split("\n")
    files = [(name, body.encode()) for name, body in archives]
    return pm_recall_index.index_files(epics, lines, files, block, exact())


MEMORY = """\
## Epic: FEAT-005 — Stripe webhook ingestion
**Completed:** 2025-07-08T11:05:00Z

### Gotchas discovered
- Stripe sends duplicate events
- retries go on for 3 days, so dedupe on the event id, not on the delivery

### Patterns that worked
- store the raw event first, process it from an outbox table
- check the signature before parsing JSON

## Epic: FEAT-009 — Multi-currency invoices
**Completed:** 2025-11-20T09:40:00Z

### Architectural decisions
- money as integer minor units (DEC-015)
  Rationale: floats lost cents on JPY to EUR conversions. (Confidence: 0.97)
- exchange rate fixed when the invoice is finalised, not when it is paid (DEC-016)

## Epic: UI-003 — Components
**Completed:** 2025-12-01T00:00:00Z

### Anti-patterns to avoid
- typing components as React.FC; write plain functions with typed props
"""

ARCHIVE = """\
# Permanent memory archive

## Epic: OLD-001 — Date handling
**Completed:** 2024-01-01T00:00:00Z

### Architectural decisions
- luxon is the one date library; no moment, no dayjs
"""


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("parseHTTPHeader", ["parse", "http", "header"]),
        ("React.FC", ["react", "fc"]),
        ("snake_case_name", ["snake", "case", "name"]),
        ("kebab-case-name", ["kebab", "case", "name"]),
        ("src/billing/invoice_pdf.py", ["src", "billing", "invoice", "pdf", "py"]),
        ("getEntityByRef", ["get", "entity", "by", "ref"]),
        ("XMLHttpRequest", ["xml", "http", "request"]),
        ("ISO 4217, utf8", ["iso", "4217", "utf8"]),
        ("Übergröße straße", ["übergröße", "straße"]),
        ("", []),
        ("--- ... ///", []),
    ],
)
def test_split_words(text: str, words: list[str]) -> None:
    assert pm_recall.split_words(text) == words


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        *(("cache", "cach"), ("caches", "cach"), ("cached", "cach"), ("caching", "cach")),
        *(("retry", "retry"), ("retries", "retry"), ("retried", "retry")),
        *(("migrate", "migrat"), ("migration", "migrat"), ("migrations", "migrat")),
        *(("running", "run"), ("logged", "log"), ("indexes", "index"), ("classes", "class")),
        *(("status", "status"), ("analysis", "analysis"), ("discoverable", "discover")),
        *(("api", "api"), ("fc", "fc"), ("4217", "4217"), ("utf8", "utf8")),
    ],
)
def test_stem(word: str, stem: str) -> None:
    assert pm_recall.stem(word) == stem


def test_terms_leave_out_stop_words_short_numbers_and_one_letter_words() -> None:
    prompt = "Please add support for the x-axis: fix it in 2 or 3 places, see ISO 4217"
    assert pm_recall.terms(prompt) == ["axis", "plac", "see", "iso", "4217"]


def test_named_epics_match_whole_ids_in_any_case() -> None:
    index = index_of(MEMORY)
    assert sorted(index["ids"]) == ["feat-005", "feat-009", "ui-003"]
    assert pm_recall.named_epics(index, "what did feat-009 decide?") == ["feat-009"]
    assert pm_recall.named_epics(index, "XFEAT-009 and FEAT-0091") == []


def test_scores_put_the_entry_that_says_it_first() -> None:
    index = index_of(MEMORY)
    scores, matched, asked = pm_recall.score(index, "Stripe webhook events arrive twice: dedupe?")
    order = [index["entries"][n][3] for n in pm_recall.ranked(scores)]
    assert order[0] == (
        "FEAT-005 gotchas: retries go on for 3 days, so dedupe on the event id, not on the delivery"
    )
    assert {line.split(" ")[0] for line in order} == {"FEAT-005"}  # no other epic matches
    assert asked[:4] == ["strip", "webhook", "event", "arriv"]
    best = pm_recall.ranked(scores)[0]
    assert matched[best][:3] == ["strip", "webhook", "event"]


def test_identifiers_in_a_prompt_find_their_words() -> None:
    index = index_of(MEMORY)
    scores, _, _ = pm_recall.score(index, "Get rid of every React.FC in MyButton")
    best = index["entries"][pm_recall.ranked(scores)[0]]
    assert best[1:3] == ("UI-003", "anti-patterns")


def test_a_continuation_line_belongs_to_its_item() -> None:
    index = index_of(MEMORY)
    texts = [entry[7] for entry in index["entries"]]
    assert (
        "money as integer minor units (DEC-015) Rationale: floats lost cents on JPY to EUR "
        "conversions." in texts
    )
    assert not any(text.startswith("Rationale") for text in texts)


def test_newest_first_the_memory_file_then_the_archive() -> None:
    index = index_of(MEMORY, archives=(("archive/2024-01-01.md", ARCHIVE),))
    order = list(dict.fromkeys(entry[1] for entry in index["entries"]))
    assert order == ["UI-003", "FEAT-009", "FEAT-005", "OLD-001"]
    assert {entry[6] for entry in index["entries"] if entry[1] == "OLD-001"} == {
        "archive/2024-01-01.md"
    }
    block, keys, tokens = pm_recall.recall(
        index, "replace moment with luxon in the date picker", set(), 80, 600
    )
    assert block == (
        "[permanent-memory | trust:file]\n"
        "Relevant to this prompt (from 1 epic):\n"
        "OLD-001 decisions: luxon is the one date library; no moment, no dayjs\n"
    )
    assert len(keys) == 1 and tokens == token_count(block)[0]


@pytest.mark.parametrize(
    ("prompt", "report"),
    [
        ("The invoice PDF fails to render", True),
        ("Checkout crashes with a traceback", True),
        ("the webhook doesn't retry", True),
        ("Refunds no longer show up", True),
        ("Login is not working behind the proxy", True),
        ("parseEntityRef throws for a bare name", True),
        ("Replace moment with luxon in the billing plugin", False),
        ("Store invoice dates in UTC", False),
        ("Don Smith asked for a new export", False),  # `don` alone is a name, not don't
        ("Can the scheduler take a cron string?", False),
        ("", False),
        ("x" * 2000 + " error", False),  # past the scored prefix
    ],
)
def test_reads_as_report(prompt: str, report: bool) -> None:
    assert pm_recall.reads_as_report(prompt) is report
    needed = pm_recall.THRESHOLD * (pm_recall.REPORT_FACTOR if report else 1)
    assert pm_recall.threshold(prompt) == needed


def test_a_report_of_a_failure_needs_more_than_a_request() -> None:
    # The same words: asked for, the best entry (3.67) clears THRESHOLD (3.5); reported broken,
    # it does not clear REPORT_FACTOR x THRESHOLD (6.125), and nothing is added.
    index = index_of(MEMORY)
    request, report = "dedupe webhook events", "dedupe of webhook events is broken"
    for prompt in (request, report):
        assert pm_recall.THRESHOLD <= max(pm_recall.score(index, prompt)[0].values()) < 6.125
    block, keys, _ = pm_recall.recall(index, request, set(), 80, 600)
    assert "FEAT-005 gotchas: retries go on for 3 days" in block and keys
    assert pm_recall.recall(index, report, set(), 80, 600) == ("", [], 0)
    # A match strong enough for a report is still added.
    strong = "Stripe sends duplicate events and the webhook handler fails"
    assert (
        "FEAT-005 gotchas: Stripe sends duplicate events"
        in pm_recall.recall(index, strong, set(), 80, 600)[0]
    )


def test_silence_when_nothing_clears_the_threshold() -> None:
    index = index_of(MEMORY)
    for prompt in ("carry on", "", "the", "invoice", "x" * 50_000):
        assert pm_recall.recall(index, prompt, set(), 80, 600) == ("", [], 0)


def test_entries_the_session_start_block_showed_count_as_received() -> None:
    block = pm_render.render_block(
        pm_parse.parse_permanent(MEMORY), pm_render.Budget(), exact(), pm_render_now()
    ).text
    index = index_of(MEMORY, block)
    shown = {entry[3] for entry in index["entries"] if entry[5]}
    assert "FEAT-005 gotchas: Stripe sends duplicate events" in shown
    received = {entry[0] for entry in index["entries"] if entry[5]}
    text, _, _ = pm_recall.recall(index, "Stripe sends duplicate events again", received, 80, 600)
    assert "Stripe sends duplicate events\n" not in text


def pm_render_now() -> object:
    from datetime import datetime, timezone

    return datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_an_epic_id_in_the_prompt_selects_its_entries_within_the_budget() -> None:
    index = index_of(MEMORY)
    block, keys, tokens = pm_recall.recall(index, "what did FEAT-009 settle?", set(), 80, 600)
    assert block.split("\n")[1] == "Relevant to this prompt (from 1 epic):"
    assert all(line.startswith("FEAT-009 ") for line in block.rstrip("\n").split("\n")[2:])
    assert tokens <= 80 and len(keys) == block.count("\nFEAT-009 ")


def test_choose_says_why_each_candidate_was_left_out() -> None:
    index = index_of(MEMORY)
    scores, _, _ = pm_recall.score(index, "Stripe webhook events arrive twice: dedupe?")
    order = pm_recall.ranked(scores)
    received = {index["entries"][order[0]][0]}
    chosen, why = pm_recall.choose(index, scores, received, 80, 600)
    assert why[order[0]] == "already in this session's context"
    assert order[1] in chosen
    tight, why_tight = pm_recall.choose(index, scores, set(), 20, 600)
    assert tight == []
    assert why_tight[order[0]].startswith("over the prompt budget (")
    _, why_session = pm_recall.choose(index, scores, set(), 80, 20)
    assert why_session[order[0]].startswith("over the session budget (")
    assert all(
        reason.startswith("below the threshold")
        for n, reason in why.items()
        if n not in (order[0],) and n not in chosen
    )


def test_the_same_text_in_two_epics_is_sent_once() -> None:
    twice = MEMORY + MEMORY.replace("FEAT-005", "FEAT-105", 1)
    index = index_of(twice)
    block, keys, _ = pm_recall.recall(index, "Stripe duplicate events dedupe", set(), 200, 600)
    lines = block.rstrip("\n").split("\n")[2:]
    texts = [line.split(": ", 1)[1] for line in lines]
    assert len(texts) == len(set(texts)) == len(keys) == len(set(keys))


# --- properties: the budgets hold and no entry is sent twice in a session

PROMPT_WORDS = st.lists(
    st.sampled_from(
        "stripe duplicate events dedupe retries signature outbox money minor units exchange "
        "rate invoice finalised paid react fc components typed props luxon moment date "
        "FEAT-005 FEAT-009 UI-003 OLD-001 carry on please fix the".split()
    ),
    max_size=12,
).map(" ".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    prompts=st.lists(PROMPT_WORDS, min_size=1, max_size=12),
    prompt_budget=st.integers(0, 120),
    session_budget=st.integers(0, 400),
)
def test_budgets_hold_and_nothing_is_sent_twice(
    prompts: list[str], prompt_budget: int, session_budget: int
) -> None:
    index = recall_index()
    received = {entry[0] for entry in index["entries"] if entry[5]}
    spent = 0
    sent: list[str] = []
    for prompt in prompts:
        block, keys, tokens = pm_recall.recall(
            index, prompt, received, prompt_budget, session_budget - spent
        )
        assert not set(keys) & received
        assert len(keys) == len(set(keys))
        if block:
            assert tokens == token_count(block)[0] or token_count(block)[1] != "cl100k_base"
            assert tokens <= prompt_budget and spent + tokens <= session_budget
            assert block.startswith(pm_recall.STAMP + "\n")
            assert all(len(line) <= pm_render.MAX_LINE_CHARS for line in block.split("\n"))
        else:
            assert keys == [] and tokens == 0
        received.update(keys)
        sent += keys
        spent += tokens
    assert len(sent) == len(set(sent))
    assert spent <= session_budget


@functools.lru_cache(maxsize=1)
def recall_index() -> pm_recall.Index:
    return index_of(MEMORY, archives=(("archive/2024-01-01.md", ARCHIVE),))


def test_stamp_is_the_blocks() -> None:
    assert pm_recall.STAMP == pm_render.STAMP


def posting_weights(index: pm_recall.Index, term: str) -> list[float]:
    _numbers, weights = index["postings"][term]
    return list(weights)


def test_a_word_weighs_by_the_entries_that_hold_it_not_the_epics() -> None:
    # "queue" and "retry" each appear in two entries of the same length; "queue" in one epic,
    # "retry" in two: the same weight (a rarity among epics did not hold on projects it was not
    # written on, references/recall.md).
    text = (
        "## Epic: A-001 — Jobs\n\n### Gotchas discovered\n- the queue drops jobs\n"
        "- the queue stalls daily\n\n## Epic: B-002 — Mail\n\n### Gotchas discovered\n"
        "- the retry sends twice\n\n## Epic: C-003 — Hooks\n\n### Gotchas discovered\n"
        "- the retry loops forever\n"
    )
    index = index_of(text)
    queue, retry = posting_weights(index, "queu"), posting_weights(index, "retry")
    assert len(queue) == len(retry) == 2
    assert queue == pytest.approx(retry)


def test_every_entry_matching_the_prompt_gets_support_from_its_epic() -> None:
    # "webhook" is in FEAT-005's heading, so every entry of the epic matches it; only one entry
    # also says "signature", and it supports the others.
    index = index_of(MEMORY)
    scores, matched, _ = pm_recall.score(index, "webhook signature")
    by_line = {index["entries"][n][3]: (scores[n], matched[n]) for n in scores}
    two = by_line["FEAT-005 patterns: check the signature before parsing JSON"]
    assert two[1][:2] == ["webhook", "signatur"] and two[1][2].endswith(" from the epic")
    alone = [found for line, found in by_line.items() if "signature" not in line]
    assert len(alone) == 3
    for score, terms in alone:
        assert terms[0] == "webhook" and terms[1].endswith(" from the epic")
        assert score > two[0] / 2


KEYWORDS = """\
## Epic: OLD-001 — Date handling
**Completed:** 2024-01-01T00:00:00Z
**Keywords:** luxon, dayjs, date library, Moment.js, moment

### Architectural decisions
- luxon is the one date library in the app
- a zone is passed to every formatter

## Epic: PAY-002 — Card payments
**Completed:** 2024-02-01T00:00:00Z
**Keywords:** stripe, checkout session

### Gotchas discovered
- webhooks can arrive twice
"""


def test_a_keyword_the_prompt_names_adds_its_worth_to_every_entry_of_its_epic() -> None:
    index = index_of(KEYWORDS)
    scores, matched, _ = pm_recall.score(index, "swap dayjs in for the formatter")
    by_line = {index["entries"][n][3]: (round(scores[n], 3), matched[n]) for n in scores}
    worth = pm_recall_index.KEYWORD_WEIGHT  # dayjs: a word of one epic, in no entry's text
    entry = next(n for n in scores if "formatter" in index["entries"][n][3])
    formatter = scores[entry] - worth
    support = pm_recall.EPIC_SHARE * formatter
    assert by_line == {
        "OLD-001 decisions: luxon is the one date library in the app": (
            round(worth + support, 3),
            ["kw:dayj", f"+{support:.2f} from the epic"],
        ),
        "OLD-001 decisions: a zone is passed to every formatter": (
            round(formatter + worth, 3),
            ["formatter", "kw:dayj"],
        ),
    }
    # The keyword's worth takes no part in the support: the formatter entry, the epic's only
    # entry with a word of the prompt, gets none, and gives the other its own score's share.
    assert formatter > 0


def test_a_keyword_matches_whole_and_each_word_counts_once_per_epic() -> None:
    index = index_of(KEYWORDS)
    # "checkout" alone is not the keyword "checkout session": nothing of PAY-002 matches.
    assert pm_recall.score(index, "the checkout page is slow")[0] == {}
    whole, matched, _ = pm_recall.score(index, "a new checkout session flow")
    assert {index["entries"][n][1] for n in whole} == {"PAY-002"}
    assert matched[min(whole)][0] == "kw:checkout session"
    # "moment" is in two keywords (Moment.js, moment): named by both, it counts once.
    once, matched, _ = pm_recall.score(index, "drop moment.js")
    assert matched[1][:2] == ["kw:moment js", "kw:moment"]  # in the line's order
    js = pm_recall.score(index, "drop js")[0]  # no keyword: js alone is not Moment.js
    assert js == {}
    rare = pm_recall_index.KEYWORD_WEIGHT
    assert [round(v, 3) for v in once.values()] == [round(2 * rare, 3)] * 2


def test_keywords_are_cleaned_and_their_words_count_as_epic_text() -> None:
    # A keyword is epic-level text, like the intent: it makes its words more common once per
    # epic, however many entries the epic has; a redacted keyword matches nothing.
    secret = "AKIAIOSFODNN7EXAMPLE"
    index = index_of(KEYWORDS.replace("stripe,", f"stripe, {secret},"))
    assert index["keywords"] == [
        "strip", "redact", "checkout session",  # the newest epic first
        "luxon", "dayj", "dat library", "moment js", "moment",
    ]  # fmt: skip
    assert pm_recall.score(index, secret)[0] == {}
    # luxon: in one entry's text and in the keywords, one epic: as common as two holders.
    value = pm_recall_index.KEYWORD_WEIGHT * pm_recall_index.idf(5, 2) / pm_recall_index.idf(5, 1)
    assert index["keyword_worth"]["luxon"] == pytest.approx(value)


def test_no_keywords_no_keyword_tables() -> None:
    index = index_of(MEMORY)
    assert (index["keywords"], index["keyword_words"], index["keyword_worth"]) == ([], {}, {})
