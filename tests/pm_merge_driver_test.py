"""pm_merge_driver: `permanent_memory.py merge` as git's merge driver, with real git: merge,
rebase and cherry-pick of branches that add and edit epics, one side archiving, and what `check`
finds where no driver ran."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from pm_merge_test import HEAD, epic, join
from project_memory_loader.core.pm_parse import parse_permanent
from support import LOADER, MEMORY, Repo, make_repo

BASE = join(HEAD, epic("FEAT-1", 1), epic("FEAT-2", 5))


def ids(text: str) -> list[str]:
    return [e.epic_id for e in parse_permanent(text)]


def branches(repo: Repo, ours: str, theirs: str, setup: bool = True) -> None:
    """main: BASE, then `ours`; branch `topic` from BASE: `theirs`."""
    repo.write(MEMORY, BASE)
    if setup:
        repo.loader("git-setup")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "topic")
    repo.write(MEMORY, theirs)
    repo.commit("theirs")
    repo.git("checkout", "-q", "main")
    repo.write(MEMORY, ours)
    repo.commit("ours")


def assert_checks_clean(repo: Repo) -> None:
    result = repo.loader("check", "--tokenizer", "estimate")
    assert result.out.endswith(": 0 errors, 0 warnings\n"), result.out


def test_merge_two_branches_that_each_added_epics(repo: Repo) -> None:
    branches(
        repo, join(BASE, epic("FEAT-4", 20)), join(BASE, epic("FEAT-3", 10), epic("FEAT-5", 30))
    )
    result = repo.git("merge", "--no-edit", "topic")
    assert "CONFLICT" not in result.out
    text = repo.read(MEMORY)
    assert text == join(BASE, epic("FEAT-3", 10), epic("FEAT-4", 20), epic("FEAT-5", 30))
    assert_checks_clean(repo)


def test_rebase_onto_a_branch_that_added_epics(repo: Repo) -> None:
    branches(repo, join(BASE, epic("FEAT-4", 20)), join(BASE, epic("FEAT-3", 10)))
    repo.git("checkout", "-q", "topic")
    repo.git("rebase", "-q", "main")
    assert ids(repo.read(MEMORY)) == ["FEAT-1", "FEAT-2", "FEAT-3", "FEAT-4"]
    assert repo.git("log", "--format=%s").out == "theirs\nours\nbase\n"
    assert_checks_clean(repo)


def test_cherry_pick_an_epic_added_on_another_branch(repo: Repo) -> None:
    branches(repo, join(BASE, epic("FEAT-4", 20)), join(BASE, epic("FEAT-3", 10)))
    repo.git("cherry-pick", "topic")
    assert ids(repo.read(MEMORY)) == ["FEAT-1", "FEAT-2", "FEAT-3", "FEAT-4"]
    assert_checks_clean(repo)


def test_both_sides_edit_the_same_epic_in_different_places(repo: Repo) -> None:
    ours = BASE.replace("- d\n", "- d from main\n", 1)
    theirs = join(HEAD, epic("FEAT-1", 1, gotchas=("g", "from topic")), epic("FEAT-2", 5))
    branches(repo, ours, theirs)
    repo.git("merge", "--no-edit", "topic")
    assert repo.read(MEMORY) == join(
        HEAD, epic("FEAT-1", 1, ("g", "from topic"), "d from main"), epic("FEAT-2", 5)
    )
    assert_checks_clean(repo)


def test_both_sides_change_the_same_entry_conflict_stays_inside_the_epic(repo: Repo) -> None:
    ours = join(BASE.replace("- d\n", "- d from main\n", 1), epic("FEAT-4", 20))
    theirs = join(BASE.replace("- d\n", "- d from topic\n", 1), epic("FEAT-3", 10))
    branches(repo, ours, theirs)
    result = repo.git("merge", "--no-edit", "topic", check=False)
    assert result.code == 1
    assert "CONFLICT (content): Merge conflict in .claude/memory/permanent_memory.md" in result.out
    assert "FEAT-1: changed on both sides; 1 conflict(s) left" in result.err
    text = repo.read(MEMORY)
    assert ids(text) == ["FEAT-1", "FEAT-2", "FEAT-3", "FEAT-4"]
    block = "<<<<<<< ours\n- d from main\n=======\n- d from topic\n>>>>>>> theirs\n"
    assert text.count("<<<<<<<") == 1 and block in text
    [feat1] = [e for e in parse_permanent(text) if e.epic_id == "FEAT-1"]
    marker_line = text.split("\n").index("<<<<<<< ours")
    assert feat1.start_line < marker_line < feat1.end_line
    check = repo.loader("check", "--tokenizer", "estimate", check=False)
    assert check.code == 1
    lines = [line for line in check.out.splitlines() if "unresolved merge conflict" in line]
    assert [re.match(r".*?:(\d+): error", line).group(1) for line in lines] == [  # type: ignore[union-attr]
        str(marker_line + 1),
        str(marker_line + 3),
        str(marker_line + 5),
    ]
    # Resolved by hand, the merge completes.
    repo.write(MEMORY, text.replace(block, "- d from main and topic\n"))
    assert_checks_clean(repo)
    repo.commit("merged")


def test_one_side_archives_the_other_changes_the_archived_epic(repo: Repo) -> None:
    repo.write(MEMORY, BASE)
    repo.loader("git-setup")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "topic")
    repo.write(MEMORY, BASE.replace("- d\n", "- d, revised on topic\n", 1))
    repo.commit("revise FEAT-1")
    repo.git("checkout", "-q", "main")
    archived = repo.loader(
        "archive", "--max-tokens", "60", "--tokenizer", "estimate", "--now", "2026-11-29"
    )
    assert "moved FEAT-1 (completed 2026-01-01T00:00:00Z)" in archived.out
    repo.commit("archive")
    result = repo.git("merge", "--no-edit", "topic")
    assert (
        "FEAT-1: removed on ours (archived or deleted) but changed on theirs; kept the changed epic"
        in result.err
    )
    text = repo.read(MEMORY)
    assert ids(text) == ["FEAT-1", "FEAT-2"]
    assert "- d, revised on topic" in text
    assert "- d\n" in repo.read(".claude/memory/archive/2026-11-29.md")  # the old version stays
    assert_checks_clean(repo)


def test_one_side_archives_the_other_adds_an_epic(repo: Repo) -> None:
    repo.write(MEMORY, BASE)
    repo.loader("git-setup")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "topic")
    repo.write(MEMORY, join(BASE, epic("FEAT-3", 10)))
    repo.commit("add FEAT-3")
    repo.git("checkout", "-q", "main")
    repo.loader("archive", "--max-tokens", "60", "--tokenizer", "estimate", "--now", "2026-11-29")
    repo.commit("archive")
    result = repo.git("merge", "--no-edit", "topic")
    assert result.err == ""
    assert ids(repo.read(MEMORY)) == ["FEAT-2", "FEAT-3"]  # FEAT-1 stays archived


def test_both_branches_archive_on_the_same_day(repo: Repo) -> None:
    big = join(HEAD, *(epic(f"FEAT-{n}", n) for n in range(1, 7)))
    repo.write(MEMORY, big)
    repo.loader("git-setup")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "topic")
    repo.write(MEMORY, join(big, epic("FEAT-8", 20)))
    archive_path = ".claude/memory/archive/2026-11-29.md"
    repo.loader("archive", "--max-tokens", "150", "--tokenizer", "estimate", "--now", "2026-11-29")
    topic_archived = ids(repo.read(archive_path))
    repo.commit("topic archives")
    repo.git("checkout", "-q", "main")
    repo.write(MEMORY, join(big, epic("FEAT-7", 19)))
    repo.loader("archive", "--max-tokens", "110", "--tokenizer", "estimate", "--now", "2026-11-29")
    main_archived = ids(repo.read(archive_path))
    repo.commit("main archives")
    assert 0 < len(topic_archived) < len(main_archived)  # both created the file: add/add
    result = repo.git("merge", "--no-edit", "topic")
    assert "CONFLICT" not in result.out
    archive = repo.read(archive_path)
    assert archive.startswith("# Permanent memory archive\n")
    kept = ids(repo.read(MEMORY))
    everything = ids(archive) + kept
    assert sorted(set(everything)) == sorted(f"FEAT-{n}" for n in range(1, 9))
    assert len(ids(archive)) == len(set(ids(archive)))  # each archived epic once


# --- Keywords lines appended on both branches ----------------------------------------------------

KW_BASE = join(HEAD, epic("FEAT-1", 1, keywords="luxon, time zones"), epic("FEAT-2", 5))


def append(repo: Repo, tmp_path: Path, lines: str) -> None:
    """`add --append` on the checked-out branch, committed."""
    given = tmp_path / "append.txt"
    given.write_text(lines, encoding="utf-8")
    repo.loader("add", "--append", "--lines", str(given), "--tokenizer", "estimate")
    repo.commit("append")


def keyword_branches(repo: Repo, tmp_path: Path, ours: list[str], theirs: list[str]) -> None:
    """main: KW_BASE, then the `ours` appends; branch `topic` from KW_BASE: the `theirs` ones."""
    repo.write(MEMORY, KW_BASE)
    repo.loader("git-setup")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "topic")
    for lines in theirs:
        append(repo, tmp_path, lines)
    repo.git("checkout", "-q", "main")
    for lines in ours:
        append(repo, tmp_path, lines)


def test_both_branches_append_keywords_one_line_ours_terms_then_theirs(
    repo: Repo, tmp_path: Path
) -> None:
    keyword_branches(
        repo,
        tmp_path,
        ["id: FEAT-1\nkeywords: DST, UTC offset\n", "id: FEAT-2\nkeywords: refunds, invoices\n"],
        [
            "id: FEAT-1\nkeywords: utc  offset, moment, Luxon\n",
            "id: FEAT-2\nkeywords: Invoices, credit notes\n",
        ],
    )
    result = repo.git("merge", "--no-edit", "topic")
    assert "CONFLICT" not in result.out and result.err == ""
    assert repo.read(MEMORY) == join(
        HEAD,
        epic("FEAT-1", 1, keywords="luxon, time zones, DST, UTC offset, moment"),
        epic("FEAT-2", 5, keywords="refunds, invoices, credit notes"),  # both added the line
    )
    assert_checks_clean(repo)  # no second Keywords line


def test_keywords_appended_on_one_branch_beside_an_entry_on_the_other(
    repo: Repo, tmp_path: Path
) -> None:
    keyword_branches(
        repo,
        tmp_path,
        ["id: FEAT-1\ngotchas:\n- from main\n"],
        ["id: FEAT-1\nkeywords: utc offset\n"],
    )
    repo.git("merge", "--no-edit", "topic")
    assert repo.read(MEMORY) == join(
        HEAD,
        epic("FEAT-1", 1, ("g", "from main"), keywords="luxon, time zones, utc offset"),
        epic("FEAT-2", 5),
    )
    assert_checks_clean(repo)


def test_a_clash_elsewhere_stays_as_before_and_the_keywords_still_merge(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write(MEMORY, KW_BASE)
    repo.loader("git-setup")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "topic")
    repo.write(MEMORY, KW_BASE.replace("- d\n", "- d from topic\n", 1))
    append(repo, tmp_path, "id: FEAT-1\nkeywords: utc\n")
    repo.git("checkout", "-q", "main")
    repo.write(MEMORY, KW_BASE.replace("- d\n", "- d from main\n", 1))
    append(repo, tmp_path, "id: FEAT-1\nkeywords: DST\n")
    result = repo.git("merge", "--no-edit", "topic", check=False)
    assert result.code == 1
    assert "CONFLICT (content): Merge conflict in .claude/memory/permanent_memory.md" in result.out
    assert "FEAT-1: changed on both sides; 1 conflict(s) left" in result.err
    block = "<<<<<<< ours\n- d from main\n=======\n- d from topic\n>>>>>>> theirs\n"
    assert repo.read(MEMORY) == KW_BASE.replace("- d\n", block, 1).replace(
        "time zones", "time zones, DST, utc"
    )
    check = repo.loader("check", "--tokenizer", "estimate", check=False)
    assert check.code == 1
    assert check.out.count("unresolved merge conflict") == 3
    assert check.out.endswith(": 3 errors, 0 warnings\n"), check.out


def test_merge_command_keeps_crlf_and_a_bom_around_merged_keywords(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    ours = KW_BASE.replace("time zones", "time zones, DST")
    theirs = KW_BASE.replace("time zones", "time zones, utc")
    (tmp_path / "o").write_bytes(KW_BASE.encode())
    (tmp_path / "a").write_bytes(("\ufeff" + ours.replace("\n", "\r\n")).encode())
    (tmp_path / "b").write_bytes(theirs.encode())
    result = repo.loader("merge", str(tmp_path / "o"), str(tmp_path / "a"), str(tmp_path / "b"))
    assert (result.code, result.out, result.err) == (0, "", "")
    merged = KW_BASE.replace("time zones", "time zones, DST, utc")
    assert (tmp_path / "a").read_bytes() == ("\ufeff" + merged.replace("\n", "\r\n")).encode()


# --- where no driver runs ---------------------------------------------------------------------


def test_a_merge_without_the_set_up_is_caught_by_check(repo: Repo) -> None:
    branches(repo, join(BASE, epic("FEAT-4", 20)), join(BASE, epic("FEAT-3", 10)), setup=False)
    result = repo.git("merge", "--no-edit", "topic", check=False)
    assert result.code == 1 and "CONFLICT" in result.out
    repo.commit("merged, markers and all")  # what a hurried resolution (or a web editor) does
    lines = repo.read(MEMORY).split("\n")
    check = repo.loader("check", "--tokenizer", "estimate", check=False)
    assert check.code == 1
    path = repo.path / MEMORY
    opening = lines.index("<<<<<<< HEAD") + 1
    assert check.out.startswith(
        f"{path}:{opening}: error: unresolved merge conflict: a '<<<<<<<' line; keep the lines "
        "that are right, delete the <<<<<<< ======= >>>>>>> lines, then check again (a "
        "line-based merge can do this; `permanent_memory.py git-setup` makes git merge this "
        "file epic by epic)\n"
    )
    assert check.out.count("unresolved merge conflict") == 3


def test_a_union_merge_tears_an_epic_and_check_says_where(repo: Repo) -> None:
    repo.write(".gitattributes", f"{MEMORY.as_posix()} merge=union\n")
    ours = BASE.replace("2026-01-01T00", "2026-01-02T00")
    theirs = BASE.replace("2026-01-01T00", "2026-01-03T00")
    branches(repo, ours, theirs, setup=False)
    repo.git("merge", "--no-edit", "topic")  # union: no conflict reported
    text = repo.read(MEMORY)
    assert "<<<<<<<" not in text
    check = repo.loader("check", "--tokenizer", "estimate", check=False)
    assert check.code == 1
    second = text.split("\n").index("**Completed:** 2026-01-03T00:00:00Z") + 1
    assert f":{second}: error: FEAT-1: a second Completed line (first at line {second - 1}): " in (
        check.out
    )


def test_a_moved_plugin_falls_back_to_a_text_merge_that_check_catches(
    repo: Repo, tmp_path: Path
) -> None:
    copy = tmp_path / "plugin-copy"
    shutil.copytree(LOADER.parent.parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    repo.write(MEMORY, BASE)
    repo.run(sys.executable, copy / "scripts" / "permanent_memory.py", "git-setup")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "topic")
    repo.write(MEMORY, join(BASE, epic("FEAT-3", 10)))
    repo.commit("theirs")
    repo.git("checkout", "-q", "main")
    repo.write(MEMORY, join(BASE, epic("FEAT-4", 20)))
    repo.commit("ours")
    shutil.rmtree(copy)  # the plugin moved
    result = repo.git("merge", "--no-edit", "topic", check=False)
    assert result.code == 1
    assert "permanent_memory.py not found; run git-setup again. Merged as plain text." in (
        result.err
    )
    text = repo.read(MEMORY)
    assert "<<<<<<< ours" in text and "FEAT-3" in text and "FEAT-4" in text
    assert repo.loader("check", "--tokenizer", "estimate", check=False).code == 1
    # Set up again from where the plugin is now, and redo the file's merge with the driver.
    repo.loader("git-setup")
    repo.git("checkout", "-m", "--", str(MEMORY))
    assert ids(repo.read(MEMORY)) == ["FEAT-1", "FEAT-2", "FEAT-3", "FEAT-4"]
    assert_checks_clean(repo)


def test_merge_command_keeps_line_ends_and_exit_codes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (tmp_path / "o").write_bytes(BASE.encode())
    ours = join(BASE, epic("FEAT-4", 20)).replace("\n", "\r\n")
    (tmp_path / "a").write_bytes(ours.encode())
    (tmp_path / "b").write_bytes(join(BASE, epic("FEAT-3", 10)).encode())
    result = repo.loader("merge", str(tmp_path / "o"), str(tmp_path / "a"), str(tmp_path / "b"))
    assert (result.code, result.out, result.err) == (0, "", "")
    written = (tmp_path / "a").read_bytes().decode()
    assert written == join(BASE, epic("FEAT-3", 10), epic("FEAT-4", 20)).replace("\n", "\r\n")
    (tmp_path / "b").write_bytes(b"\xff\xfe not utf-8")
    bad = repo.loader(
        "merge", str(tmp_path / "o"), str(tmp_path / "a"), str(tmp_path / "b"), "M.md", check=False
    )
    assert bad.code == 2
    assert bad.err.startswith("permanent_memory.py merge: ")
    assert bad.err.endswith("; resolve M.md by hand (git show :2:M.md and :3:M.md are the sides)\n")
    assert (tmp_path / "a").read_bytes().decode() == written  # left as it was
