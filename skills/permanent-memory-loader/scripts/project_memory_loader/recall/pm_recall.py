# Prompt-time recall, the part every prompt runs: the words of a text as index terms
# (identifiers split, a light stemmer, stop words), a prompt scored against the index that
# pm_recall_index built when the block was rendered, and the entries chosen within the
# per-prompt and per-session budgets. Pure: the index, the prompt, what the session already
# received and the budgets come in; the block's text and what it sent go out. Import-light: the
# prompt hook's steady state runs it (no typing).
# references/recall.md explains the scoring and the threshold.
from __future__ import annotations

import re

STAMP = "[permanent-memory | trust:file]"  # pm_render.STAMP (a test keeps them equal)
INDEX_FORMAT = 5
# At most this much of a prompt is scored: a pasted log must not make the hook slow.
PROMPT_PREFIX_CHARS = 2000
PROMPT_BUDGET = 80  # tokens of one recall block, stamp included
SESSION_BUDGET = 600  # tokens of all recall blocks of one session
MIN_BUDGET = 0  # 0 turns recall off
MAX_PROMPT_BUDGET, MAX_SESSION_BUDGET = 2000, 20000  # the plugin options' ranges
# The score an entry needs, in units of one rare word (a word of one entry) matched once in an
# entry's text of average length: a count of matched words weighted by their rarity in this
# file, so that it means the same in a small file and a large one (references/recall.md).
THRESHOLD = 3.25
# A prompt that reads as a report of a failure (an error, a crash, something that no longer
# works) names the part of the project where it fails, in that part's own words, without asking
# how anything is to be built; its words are weaker evidence that a recorded decision is at
# stake, so it needs REPORT_FACTOR times the threshold. Known by a word or a pair of adjacent
# words of the prompt (before stop words are dropped; `doesn't` splits into doesn and t).
REPORT_FACTOR = 1.75
REPORT_WORDS = frozenset(
    """
error errors fail fails failed failing failure broken break breaks crash crashes exception
throw throws wrong incorrect missing bug regression undefined null panic traceback cannot
unable vanish vanishes flaky hang hangs timeout nothing stopped
""".split()
)
REPORT_PAIRS = frozenset(
    [("doesn", "t"), ("don", "t"), ("isn", "t"), ("aren", "t"), ("won", "t"), ("can", "t"),
     ("does", "not"), ("not", "working"), ("no", "longer")]
)  # fmt: skip
# Evidence from the rest of the epic: an entry gets this share of the scores of the epic's
# EPIC_SUPPORT best other entries (an epic that matches the prompt in several entries is
# about what the prompt is about; one entry matching a word or two by chance is not).
EPIC_SHARE = 0.5
EPIC_SUPPORT = 2
# An epic ID named in the prompt adds this much to each of its entries: above any threshold.
ID_BONUS = 100.0
MAX_TERM_CHARS = 40

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypedDict

    # key, epic ID, label, the line as shown, its tokens (newline included), whether the
    # session-start block shows it, where it is kept (the memory file or archive/NAME), its text
    Entry = tuple[str, str, str, str, int, bool, str, str]

    class Index(TypedDict):
        format: int
        entries: list[Entry]
        postings: dict[str, tuple[tuple[int, ...], tuple[float, ...]]]  # term: entries, weights
        ids: dict[str, tuple[int, ...]]  # an epic ID, case-folded: its entries
        unit: float  # the weight of one rare word matched once in a short entry's text
        stamp_tokens: int  # the stamp line's
        header_tokens: tuple[int, ...]  # the header line's, for 1, 2, … epics
        # Each epic's keywords: their words (joined by spaces); for each, the first entry of its
        # epic and one past its last (unsigned 16-bit pairs); a keyword's first word: the
        # keywords it begins; each keyword word: its worth, in units of one rare word.
        keywords: list[str]
        keyword_spans: tuple[int, ...]  # each keyword's epic: its first and past-last entry
        keyword_words: dict[str, tuple[int, ...]]
        keyword_worth: dict[str, float]


# English function words and the words of requests ("please add support for …"): they say
# nothing about which part of a project a prompt is about.
STOP_WORDS = frozenset(
    """
a about above after again against all almost also am an and any anything are aren around as
at be because been before being below between both but by can cannot could did didn do does
doesn doing don done down during each either else etc even ever every few for from further
get gets getting got had has hasn have haven having he her here hers him his how however i
if in into is isn it its itself just let lets like ll made make makes making may me might
more most much must my need needs no nor not now of off on once one only or other our ours
out over own per please re really same shall she should shouldn so some something still such
than that the their theirs them then there these they thing things this those though through
to too under until up upon us ve very via was wasn we were weren what when where whether
which while who whom whose why will with within without won would yet you your yours
add adds added adding allow allows support supports supported fix fixes fixed fixing
issue issues bug bugs feature request use uses used using want wants new work works working
way ways able instead also try trying sure ok okay thanks thank hi hello yes
change changes changed changing create creates created creating make made remove removes
removed removing replace replaces replaced replacing rename renamed convert converted move
moved moving update updates updated updating start starts started starting stop stops stopped
show shows showing shown return returns returned returning write writes written writing give
gives given take takes taken keep keeps kept run runs running ran find found look looks set
sets put puts come comes came go goes going went back still again even though around first
last next same other another each every all some nothing everything anything something
correct wrong right fail fails failed failing value values thing stuff lot bit little
whole part parts case cases time times day days today carry continue proceed ahead
""".split()
)


WORD = re.compile(r"[^\W_]+")  # a run of letters and digits (what str.isalnum() holds)


def split_words(text: str) -> list[str]:
    """The words of text, lower case: runs of letters and digits, split again at camelCase
    humps (`parseHTTPHeader` -> parse, http, header); every other character separates (so
    snake_case, kebab-case, paths and dotted names fall apart: `React.FC` -> react, fc)."""
    return [part for word in WORD.findall(text) for part in split_humps(word)]


def split_humps(word: str) -> list[str]:
    if word.islower() or word.isupper() or word.isdigit():
        return [word.lower()]
    parts = []
    start = 0
    for index in range(1, len(word)):
        before, char = word[index - 1], word[index]
        after = word[index + 1] if index + 1 < len(word) else ""
        if char.isupper() and (before.islower() or (before.isupper() and after.islower())):
            parts.append(word[start:index].lower())
            start = index
    parts.append(word[start:].lower())
    return parts


def stem(word: str) -> str:
    """A light suffix stripper: plurals, -ing, -ed, a doubled final consonant and a final e,
    so cache, caches, cached and caching meet, as do retry, retries and retried."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ied") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ation") and len(word) > 7:
        return word[:-3]  # migration and migrate meet at migrat
    elif word.endswith("able") and len(word) > 7:
        word = word[:-4]
    elif word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    else:
        return word[:-1] if word.endswith("e") and len(word) > 3 else word
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def terms(text: str) -> list[str]:
    """Index terms of text in order: words stemmed, stop words, one-letter words, short
    numbers and overlong runs left out."""
    found = []
    for word in split_words(text):
        if word in STOP_WORDS or len(word) < 2 or len(word) > MAX_TERM_CHARS:
            continue
        if word.isdigit() and len(word) < 3:
            continue
        found.append(stem(word))
    return found


def reads_as_report(prompt: str) -> bool:
    """Whether the prompt's scored prefix reads as a report of a failure (REPORT_WORDS)."""
    words = split_words(prompt[:PROMPT_PREFIX_CHARS])
    if not REPORT_WORDS.isdisjoint(words):
        return True
    return any(pair in REPORT_PAIRS for pair in zip(words, words[1:]))


def threshold(prompt: str) -> float:
    """The score an entry needs for this prompt: THRESHOLD, or REPORT_FACTOR times it for a
    prompt that reads as a report of a failure."""
    return THRESHOLD * REPORT_FACTOR if reads_as_report(prompt) else THRESHOLD


def named_epics(index: Index, prompt: str) -> list[str]:
    """The epic IDs the prompt names (any case, not inside a longer word)."""
    folded = prompt.casefold()
    named = []
    for epic_id in index["ids"]:
        at = folded.find(epic_id)
        while at >= 0:
            end = at + len(epic_id)
            if (at == 0 or not folded[at - 1].isalnum()) and (
                end == len(folded) or not folded[end].isalnum()
            ):
                named.append(epic_id)
                break
            at = folded.find(epic_id, at + 1)
    return named


def score(
    index: Index, prompt: str, explain: bool = True
) -> tuple[dict[int, float], dict[int, list[str]], list[str]]:
    """Each entry's score for the prompt's bounded prefix (entries with none left out), the
    terms each matched (with explain; the hook does without), and the prompt's distinct terms
    as scored."""
    text = prompt[:PROMPT_PREFIX_CHARS]
    found = terms(text)
    asked = list(dict.fromkeys(found))
    postings = index["postings"]
    unit = index["unit"]
    scores: dict[int, float] = {}
    matched: dict[int, list[str]] = {}
    for term in asked:
        posting = postings.get(term)
        if posting is None:
            continue
        numbers, weights = posting
        for entry, weight in zip(numbers, weights):
            scores[entry] = scores.get(entry, 0.0) + weight / unit
            if explain:
                matched.setdefault(entry, []).append(term)
    named = named_keywords(index, found)
    scores = with_epic_support(index, scores, named, matched if explain else None)
    for epic_id in named_epics(index, text):
        for entry in index["ids"][epic_id]:
            scores[entry] = scores.get(entry, 0.0) + ID_BONUS
            if explain:
                matched.setdefault(entry, []).append(f"#{epic_id}")
    return scores, matched, asked


def named_keywords(index: Index, found: list[str]) -> list[int]:
    """The keywords whose every word is among the prompt's terms."""
    if not index["keywords"]:
        return []
    asked = set(found)
    by_word = index["keyword_words"]
    keywords = index["keywords"]
    named = []
    for term in asked:
        for number in by_word.get(term, ()):
            if all(word in asked for word in keywords[number].split(" ")):
                named.append(number)
    return named


def keyword_worth(
    index: Index, named: list[int], matched: dict[int, list[str]] | None
) -> dict[int, float]:
    """For each entry of an epic whose keywords the prompt names, what they are worth: the
    worth of each word they hold, once however many of the epic's keywords hold it."""
    spans = index["keyword_spans"]
    each = index["keyword_worth"]
    words: dict[int, set[str]] = {}  # an epic's first entry: the keyword words named
    ends: dict[int, int] = {}
    for number in sorted(named):
        keyword = index["keywords"][number]
        start, end = spans[2 * number], spans[2 * number + 1]
        words.setdefault(start, set()).update(keyword.split(" "))
        ends[start] = end
        if matched is not None:
            for entry in range(start, end):
                matched.setdefault(entry, []).append("kw:" + keyword)
    worth = {}
    for start, found in words.items():
        total = sum(each[word] for word in sorted(found))
        for entry in range(start, ends[start]):
            worth[entry] = total
    return worth


def with_epic_support(
    index: Index,
    scores: dict[int, float],
    named: list[int],
    matched: dict[int, list[str]] | None,
) -> dict[int, float]:
    """Each entry's score plus EPIC_SHARE of the scores of its epic's two (EPIC_SUPPORT) best
    other entries, and the worth of the words of its epic's keywords the prompt names; with
    `matched`, each entry's list says how much."""
    entries = index["entries"]
    extra = keyword_worth(index, named, matched)
    by_epic: dict[str, list[float]] = {}
    for entry, value in scores.items():
        by_epic.setdefault(entries[entry][1], []).append(value)
    # Each epic's three best scores: an entry among the two best is supported by the other
    # two of the three, any other entry by the two best.
    best = {}
    for epic, values in by_epic.items():
        top = [*sorted(values, reverse=True)[:3], 0.0, 0.0]
        best[epic] = (top[0], top[1], top[2])
    supported = {}
    for entry in [*scores, *(e for e in extra if e not in scores)]:
        value = scores.get(entry, 0.0)
        bonus = extra.get(entry, 0.0)
        first, second, third = best.get(entries[entry][1], (0.0, 0.0, 0.0))
        others = first + second + third - value if value >= second else first + second
        support = EPIC_SHARE * others
        if support and matched is not None:
            matched[entry].append(f"+{support:.2f} from the epic")
        supported[entry] = value + support + bonus
    return supported


def ranked(scores: dict[int, float]) -> list[int]:
    """Entries by score, best first; ties in index order (the memory file, newest first)."""
    return sorted(scores, key=lambda entry: (-scores[entry], entry))


def header(epics: int) -> str:
    return f"Relevant to this prompt (from {epics} epic{'' if epics == 1 else 's'}):"


def block_tokens(index: Index, lines: int, epics: int) -> int:
    """Tokens of a recall block of `lines` entry lines from `epics` epics, without them."""
    heads = index["header_tokens"]
    return index["stamp_tokens"] + heads[min(epics, len(heads)) - 1] if lines else 0


def choose(
    index: Index,
    scores: dict[int, float],
    received: set[str],
    prompt_budget: int,
    session_left: int,
    explain: bool = True,
    needed: float = THRESHOLD,
) -> tuple[list[int], dict[int, str]]:
    """The entries to add, in order, and why each other candidate was not added (without
    explain, only the candidates that clear the threshold, `needed`, are looked at)."""
    entries = index["entries"]
    limit = min(prompt_budget, session_left)
    if not explain:
        scores = {entry: value for entry, value in scores.items() if value >= needed}
    order = ranked(scores)
    chosen: list[int] = []
    why: dict[int, str] = {}
    epics: list[str] = []
    used = 0
    keys: set[str] = set()
    for entry in order:
        key, epic_id, _label, _line, tokens = entries[entry][:5]
        value = scores[entry]
        if value < needed:
            why[entry] = f"below the threshold ({value:.2f} < {needed:g})"
        elif key in received:
            why[entry] = "already in this session's context"
        elif key in keys:
            why[entry] = "the same text as an entry added above"
        else:
            more = epics if epic_id in epics else [*epics, epic_id]
            total = block_tokens(index, len(chosen) + 1, len(more)) + used + tokens
            if total > limit:
                budget = "session" if session_left < prompt_budget else "prompt"
                why[entry] = f"over the {budget} budget ({total} > {limit} tokens)"
                continue
            chosen.append(entry)
            keys.add(key)
            epics = more
            used += tokens
    return chosen, why


def render(index: Index, chosen: list[int]) -> str:
    """The recall block: stamp, header, one line per chosen entry; "" for none."""
    if not chosen:
        return ""
    entries = index["entries"]
    epics = len({entries[entry][1] for entry in chosen})
    lines = [STAMP, header(epics)] + [entries[entry][3] for entry in chosen]
    return "\n".join(lines) + "\n"


def recall(
    index: Index, prompt: str, received: set[str], prompt_budget: int, session_left: int
) -> tuple[str, list[str], int]:
    """The recall block for prompt ("" for none), the keys of the entries it sends, and its
    tokens."""
    if prompt_budget <= 0 or session_left <= 0 or not index["entries"]:
        return "", [], 0
    scores, _matched, _asked = score(index, prompt, explain=False)
    needed = threshold(prompt)
    chosen, _why = choose(index, scores, received, prompt_budget, session_left, False, needed)
    if not chosen:
        return "", [], 0
    entries = index["entries"]
    epics = len({entries[entry][1] for entry in chosen})
    tokens = block_tokens(index, len(chosen), epics) + sum(entries[e][4] for e in chosen)
    return render(index, chosen), [entries[e][0] for e in chosen], tokens
