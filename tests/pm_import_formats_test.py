"""pm_import_formats and pm_import_plan, pure: what the import reads in messy real records."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from project_memory_loader.writing.pm_import_formats import (
    ACCEPTED,
    PROPOSED,
    REJECTED,
    SUPERSEDED,
    NotARecord,
    clean_title,
    file_parts,
    parse_record,
    status_of,
    valid_date,
)
from project_memory_loader.writing.pm_import_plan import build_tree, epic_id, record_paths

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("text", "status", "successor"),
    [
        ("Accepted", ACCEPTED, ""),
        ("\u2705 Accepted", ACCEPTED, ""),
        ("- **Approved**", ACCEPTED, ""),
        ("Decided", ACCEPTED, ""),
        ("In Review", PROPOSED, ""),
        ("Proposed [Proposed, Accepted, Deprecated, Superseded]", PROPOSED, ""),
        ("On hold", PROPOSED, ""),
        ("Rejected", REJECTED, ""),
        ("Deprecated", SUPERSEDED, ""),
        ("Superceded by [3. Use Adyen](0003-use-adyen.md)", SUPERSEDED, "3. Use Adyen"),
        ("superseded by ADR-0123", SUPERSEDED, "ADR-0123"),
        (
            "Superseded by https://github.com/o/r/blob/main/docs/adr/0009-x.md",
            SUPERSEDED,
            "https://github.com/o/r/blob/main/docs/adr/0009-x.md",
        ),
        ("We no longer follow this; it was superseded by the move to gRPC.", SUPERSEDED,
         "the move to gRPC"),
        ("Something else entirely", ACCEPTED, ""),
    ],
)  # fmt: skip
def test_status_words(text: str, status: str, successor: str) -> None:
    assert status_of(text) == (status, successor)


@pytest.mark.parametrize(
    ("text", "day"),
    [("2024-02-30", None), ("2024-2-3", "2024-02-03"), ("20210826", "2021-08-26"),
     ("May 2025", None), ("1900-01-01", None)],
)  # fmt: skip
def test_dates_that_are_real_or_none(text: str, day: str | None) -> None:
    assert valid_date(text) == day


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("doc/adr/0007-use-kotlin.md", ("", "0007", "use-kotlin")),
        ("docs/architecture/adr-041-in-place-store-migrations.md",
         ("", "041", "in-place-store-migrations")),
        ("docs/decisions/20210826-use-log4brains.md", ("20210826", "", "use-log4brains")),
        ("rfcs/2021-07-20-8288-csv-enrichment.md", ("2021-07-20", "8288", "csv-enrichment")),
        ("keps/sig-cli/4706-remove-kustomize/README.md", ("", "4706", "remove-kustomize")),
        (".github/instructions/python.instructions.md", ("", "", "python")),
    ],
)  # fmt: skip
def test_file_names(path: str, parts: tuple[str, str, str]) -> None:
    assert file_parts(path) == parts


@pytest.mark.parametrize(
    ("title", "clean"),
    [("7. Use Kotlin", "Use Kotlin"), ("ADR 012: Luxon", "Luxon"),
     ("RFC 8288 - 2021-07-20 - CSV Enrichment", "CSV Enrichment"),
     ("Timeout policy compliant with 2.0 model", "Timeout policy compliant with 2.0 model")],
)  # fmt: skip
def test_titles_lose_their_number(title: str, clean: str) -> None:
    assert clean_title(title) == clean


def test_colliding_numbers_make_different_ids() -> None:
    text = "# 18. {}\n\n## Status\n\nAccepted\n\n## Decision\n\nWe do the thing in this way.\n"
    one = parse_record("docs/adr/0018-use-jackson.md", text.format("Use Jackson"))
    two = parse_record("docs/adr/0018-special-fields.md", text.format("Special fields"))
    assert epic_id(one, "docs/adr/0018-use-jackson.md") == "ADR-0018-use-jackson"
    assert epic_id(two, "docs/adr/0018-special-fields.md") == "ADR-0018-special-fields"


def test_log4brains_without_status_is_accepted_and_keeps_its_date() -> None:
    text = (
        "# Use Log4brains to manage the ADRs\n\n## Context and Problem Statement\n\nWe want "
        'to record decisions.\n\n## Decision Outcome\n\nChosen option: "Log4brains", because '
        "it keeps the records beside the code.\n"
    )
    record = parse_record("docs/adr/20210826-use-log4brains.md", text)
    assert (record.kind, record.status, record.date) == ("log4brains", ACCEPTED, "2021-08-26")
    assert epic_id(record, "docs/adr/20210826-use-log4brains.md") == "ADR-use-log4brains"


def test_madr_3_front_matter_status_and_template_leftovers() -> None:
    text = (
        '---\nstatus: "{proposed | rejected | accepted | deprecated | \u2026 | superseded by '
        'ADR-0123}"\ndate: 2024-13-01\n---\n# {short title of solved problem and solution}\n\n'
        "## Context and Problem Statement\n\n{Describe the context}\n\n## Decision Outcome\n\n"
        'Chosen option: "{title of option 1}", because {justification}.\n'
    )
    with pytest.raises(NotARecord, match="no decision sentence"):
        parse_record("docs/decisions/0005-payments.md", text)


def test_a_template_file_is_skipped() -> None:
    with pytest.raises(NotARecord, match="a template"):
        parse_record(
            "docs/adr/0000-template.md", "# T\n\n## Status\n\n## Decision\n\nx y z w v u.\n"
        )


def test_a_readme_is_in_no_known_format() -> None:
    with pytest.raises(NotARecord, match="no Status, Decision"):
        parse_record("docs/adr/README.md", "# Decisions\n\nThe list.\n")


def test_consequences_that_constrain_are_gotchas_or_anti_patterns() -> None:
    text = (
        "# 3. Queue\n\n## Status\n\nAccepted\n\n## Decision\n\nWe use a queue for refunds.\n\n"
        "## Consequences\n\nThe team likes it. Handlers must be idempotent. Never call the "
        "provider from a request handler.\n"
    )
    record = parse_record("docs/adr/0003-queue.md", text)
    assert record.constraints == (
        ("gotchas", "Handlers must be idempotent."),
        ("anti_patterns", "Never call the provider from a request handler."),
    )


def test_paths_named_in_the_record_that_exist() -> None:
    text = (
        "# 4. Client\n\n## Status\n\nAccepted\n\n## Decision\n\nAll calls go through "
        "`src/billing/stripe_client.py` and the `webhooks/` folder; `gone/file.py` is old.\n"
    )
    record = parse_record("docs/adr/0004-client.md", text)
    tree = build_tree(["src/billing/stripe_client.py", "src/billing/webhooks/handler.py"])
    assert record_paths(record, "docs/adr/0004-client.md", tree, ["named"]) == (
        "src/billing/stripe_client.py",
        "src/billing/webhooks/**",
    )


def test_rule_file_globs_and_bullets() -> None:
    text = "---\nglobs: **/*.ts, src/api/**\nalwaysApply: false\n---\n- Never use any.\n"
    text += "- Prefer zod schemas for input.\n"
    record = parse_record(".cursor/rules/ts.mdc", text)
    assert record.globs == ("**/*.ts", "src/api/**")
    assert record.decisions == ("Prefer zod schemas for input.",)
    assert record.constraints == (("anti_patterns", "Never use any."),)
