"""Community reports list the authorities their members' text names most (MENTIONED_IN)."""

from __future__ import annotations

import json

from nara_kg.generation.community_report import CommunityReport
from nara_kg.generation.extractive import extractive_report
from nara_kg.generation.report_context import MemberInfo, MentionedInfo, build_context
from nara_kg.generation.report_rows import top_mentioned


def count_words(text: str) -> int:
    return len(text.split()) + 2  # two special tokens, as word-piece tokenizers add


MEMBERS = [
    MemberInfo(1, "Letters", "item", 3, None, None),
    MemberInfo(2, "Maps", "item", 1, None, None),
]


def row(authority: int, count: int, heading: str = "H", kind: str = "person") -> dict[str, object]:
    return {"authority": authority, "heading": heading, "type": kind, "count": count}


def test_top_mentioned_sums_members_only_and_ranks_deterministically() -> None:
    mentions = {
        1: [row(10, 2, "Kimball, Floyd"), row(11, 1)],
        2: [row(10, 1, "Kimball, Floyd"), row(12, 3)],
        3: [row(13, 99)],  # not a member
    }
    top = top_mentioned(mentions, [2, 1, 1])
    assert [(m.na_id, m.count, m.records) for m in top] == [(10, 3, 2), (12, 3, 1), (11, 1, 1)]
    assert top_mentioned(mentions, [1, 2], limit=1)[0].heading == "Kimball, Floyd"
    assert top_mentioned({}, [1]) == []


def test_mentioned_table_follows_relationships_and_is_absent_without_mentions() -> None:
    plain = build_context("0-1", 0, MEMBERS, [], [], token_budget=1000, count_tokens=count_words)
    assert "Mentioned" not in plain.text and plain.mentioned == ()
    mentioned = [MentionedInfo(10, "Kimball, Floyd", "person", 3, 2)]
    context = build_context(
        "0-1",
        0,
        MEMBERS,
        [],
        [],
        token_budget=1000,
        count_tokens=count_words,
        mentioned=mentioned,
    )
    assert context.text.startswith(plain.text)
    assert context.text.endswith(
        "-----Mentioned-----\n```csv\nid,authority,type,mentions,records\n"
        '10,"Kimball, Floyd",person,3,2\n```\n'
    )
    report = extractive_report(context)
    assert "The person or organization its records name most is Floyd Kimball." in (report.summary)
    assert extractive_report(context) == report


def test_mentioned_table_left_out_when_the_budget_cannot_hold_it() -> None:
    mentioned = [MentionedInfo(n, "Name " * 20, "person", 1, 1) for n in range(10)]
    empty = count_words(
        "-----Records-----\n```csv\nid,title,type,degree,excerpt\n```\n"
        "-----Relationships-----\n```csv\nid,source,target,type,degree\n```\n"
    )
    context = build_context(
        "0-1", 0, [], [], [], token_budget=empty, count_tokens=count_words, mentioned=mentioned
    )
    assert "Mentioned" not in context.text and context.mentioned == ()


def test_the_members_kept_with_a_report_are_the_most_connected_each_once_without_text() -> None:
    from nara_kg.generation.report_rows import report_row, top_members

    members = [
        {"naId": 5, "title": "e", "nodeType": "item", "source": "s", "degree": 1, "text": "x"},
        {"naId": 3, "title": "c", "nodeType": "item", "source": "s", "degree": 4, "text": "x"},
        {"naId": 2, "title": "b", "nodeType": "series", "source": "s", "degree": 4, "text": "x"},
        {"naId": 3, "title": "c", "nodeType": "item", "source": "s", "degree": 4, "text": "x"},
        {"naId": 9, "title": "i", "nodeType": "item", "source": "s", "degree": None, "text": "x"},
    ]
    top = top_members(members, limit=3)
    assert [m["naId"] for m in top] == [2, 3, 5]
    assert all("text" not in m for m in top)
    assert len(top_members(members)) == 4
    report = CommunityReport("0-1", 0, "t", "s", 1.0, "r", (), "extractive")
    assert json.loads(report_row("0-1", report, "k", top)["topMembers"]) == top
