"""Rows between the graph and report generation: a community's rows from
:mod:`nara_kg.graph.reports` into a :class:`~nara_kg.generation.report_context.ReportContext`,
and a :class:`~nara_kg.generation.community_report.CommunityReport` into the row that
:func:`nara_kg.graph.reports.write_reports` stores on the Community node."""

from __future__ import annotations

import hashlib
import heapq
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from nara_kg.generation.community_report import CommunityReport
from nara_kg.generation.report_context import (
    MemberInfo,
    MentionedInfo,
    RelationshipInfo,
    ReportContext,
    SubReport,
    build_context,
)
from nara_kg.generation.report_context_data import MentionTotals
from nara_kg.generation.report_scope import ReportScope
from nara_kg.graph.reports import Outgoing
from nara_kg.ingest.chunking import TokenCounter, TokensCounter
from nara_kg.model.source_digest import source_digest


def _header_field(text: str | None, name: str) -> str | None:
    """A line of a chunk's search header ("Dates: 1942" -> "1942")."""
    if not text:
        return None
    prefix = f"{name}: "
    for line in text.split("\n\n", 1)[0].splitlines():
        if line.startswith(prefix):
            return line[len(prefix) :].strip() or None
    return None


def _excerpt(text: str | None, limit: int = 300) -> str | None:
    """The body of a chunk without its search header (the header only repeats the title)."""
    if not text:
        return None
    body = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    body = " ".join(body.split())
    return body[:limit] or None


#: Authorities listed in a report context's Mentioned table.
MENTIONED_LIMIT = 10


def mention_totals(
    mentions: Mapping[int, Sequence[Mapping[str, Any]]], na_ids: Iterable[int]
) -> MentionTotals:
    """What these records' text names (`mentions`: record naId -> rows of
    :func:`nara_kg.graph.reports.mentions_of_records`), summed per authority."""
    totals: MentionTotals = {}
    for na_id in sorted(set(na_ids)):
        for row in mentions.get(na_id, ()):
            authority = int(row["authority"])
            entry = totals.setdefault(authority, [row["heading"], row["type"] or "", 0, 0])
            entry[2] += int(row["count"] or 0)
            entry[3] += 1
    return totals


def merge_mention_totals(parts: Iterable[MentionTotals]) -> MentionTotals:
    """The totals of records split between `parts` (each record in one part only): a
    community's, from its sub-communities' and its other members' totals."""
    merged: MentionTotals = {}
    for part in parts:
        for authority, (heading, kind, count, records) in part.items():
            entry = merged.setdefault(authority, [heading, kind, 0, 0])
            entry[2] += count
            entry[3] += records
    return merged


def rank_mentioned(totals: MentionTotals, limit: int = MENTIONED_LIMIT) -> list[MentionedInfo]:
    """The `limit` authorities named most: most mentions first, then most records, then naId.
    An authority that is itself a member still counts."""
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1][2], -kv[1][3], kv[0]))
    return [
        MentionedInfo(authority, heading, kind, count, records)
        for authority, (heading, kind, count, records) in ranked[:limit]
    ]


def top_mentioned(
    mentions: Mapping[int, Sequence[Mapping[str, Any]]],
    na_ids: Iterable[int],
    limit: int = MENTIONED_LIMIT,
) -> list[MentionedInfo]:
    """The `limit` authorities most named in these records' text (see :func:`mention_totals`
    and :func:`rank_mentioned`)."""
    return rank_mentioned(mention_totals(mentions, na_ids), limit)


def member_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """What a report uses of a member's row (:data:`nara_kg.graph.reports.MEMBER_ROWS`): its
    text only as an excerpt and the search header's dates and parent, so that the row is
    small enough to remember (:class:`MemberFieldStore`) and its input-key line is short."""
    text = row["text"]
    return {
        "naId": int(row["naId"]),
        "title": row["title"],
        "nodeType": row["nodeType"],
        "source": row["source"],
        "degree": int(row["degree"]),
        "excerpt": _excerpt(text),
        "dates": _header_field(text, "Dates"),
        "partOf": _header_field(text, "Part of"),
    }


class MemberFieldStore:
    """:class:`nara_kg.graph.reports.MemberFields` for a run: rows made by
    :func:`member_fields`, remembered in the report scope's store (when there is one) by the
    node's row hash, so that the next run reads the text of the records whose rows changed;
    and the records' relationships (:class:`nara_kg.graph.reports.OutgoingRelationships`).

    `pending`: in a run scoped to what changed, the records pending in the scope (those whose
    rows or edges may have changed since the store's values of them were made); every other
    record is settled, and its row and relationships are taken from the store, not read. None
    (a run over every community): nothing is settled."""

    def __init__(self, scope: ReportScope | None, pending: frozenset[int] | None = None) -> None:
        self._scope = scope
        self._pending = pending

    def settled(self, na_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The remembered rows of those of these records that are settled."""
        if self._scope is None:
            return {}
        return self._scope.settled_member_fields(self._settled(na_ids))

    def settled_outgoing(self, na_ids: Sequence[int]) -> dict[int, Outgoing]:
        """The remembered relationships of those of these records that are settled."""
        if self._scope is None:
            return {}
        return self._scope.outgoing(self._settled(na_ids))

    def _settled(self, na_ids: Sequence[int]) -> list[int]:
        if self._pending is None:
            return []
        return [n for n in na_ids if n not in self._pending]

    def remember_outgoing(self, rows: Mapping[int, Outgoing]) -> None:
        if self._scope is not None and rows:
            self._scope.remember_outgoing(rows)

    def derive(self, row: Mapping[str, Any]) -> dict[str, Any]:
        return member_fields(row)

    def known(self, keys: Sequence[tuple[int, str]]) -> dict[int, dict[str, Any]]:
        return {} if self._scope is None else self._scope.member_fields(keys)

    def remember(self, rows: Sequence[tuple[int, str, dict[str, Any]]]) -> None:
        if self._scope is not None:
            self._scope.remember_member_fields(rows)


def _member_info(row: Mapping[str, Any]) -> MemberInfo:
    """`row`: a :func:`member_fields` row."""
    return MemberInfo(
        na_id=int(row["naId"]),
        title=row["title"],
        node_type=row["nodeType"] or "record",
        degree=int(row["degree"]),
        excerpt=row["excerpt"],
        source=row["source"],
        dates=row["dates"],
        part_of=row["partOf"],
    )


def _relationship_info(row: Mapping[str, Any]) -> RelationshipInfo:
    return RelationshipInfo(
        source_na_id=int(row["source"]),
        target_na_id=int(row["target"]),
        rel_type=row["type"],
        source_title=row["sourceTitle"],
        target_title=row["targetTitle"],
        degree=int(row["degree"]),
    )


def context_from_rows(
    community: Mapping[str, Any],
    members: Sequence[Mapping[str, Any]],
    relationships: Sequence[Mapping[str, Any]],
    done: Mapping[str, tuple[CommunityReport, frozenset[int]]],
    *,
    token_budget: int,
    count_tokens: TokenCounter,
    row_costs: dict[str, int],
    count_tokens_many: TokensCounter | None = None,
    mentioned: Sequence[MentionedInfo] = (),
    run_rows: RunRows | None = None,
) -> ReportContext:
    """:func:`build_context` of one community from the rows of :mod:`nara_kg.graph.reports`
    (`done`: community id -> its report and its members' naIds, for the sub-communities;
    `mentioned`: :func:`top_mentioned` of its members; `run_rows`: the rows converted earlier
    in the run)."""
    run_rows = RunRows() if run_rows is None else run_rows
    return build_context(
        community["id"],
        int(community["level"]),
        run_rows.members(members),
        run_rows.relationships(relationships),
        [
            SubReport(child, len(done[child][1]), done[child][0], done[child][1])
            for child in community["children"]
            if child in done
        ],
        token_budget=token_budget,
        count_tokens=count_tokens,
        row_costs=row_costs,
        count_tokens_many=count_tokens_many,
        mentioned=mentioned,
    )


def report_context_key(generator: str, context_text: str) -> str:
    """What a report was made from: the generator and its exact context."""
    return hashlib.sha256(f"{generator}\n{context_text}".encode()).hexdigest()[:16]


#: Members kept on a Community node with its report (global answers show the first few).
TOP_MEMBERS_KEPT = 10
#: The fields of a member kept in :data:`TOP_MEMBERS_KEPT` (those of
#: :data:`nara_kg.graph.reports.TOP_MEMBERS_OF_MANY`).
_TOP_MEMBER_FIELDS = ("naId", "title", "nodeType", "source", "degree")


def top_members(
    members: Iterable[Mapping[str, Any]], limit: int = TOP_MEMBERS_KEPT
) -> list[dict[str, Any]]:
    """The `limit` members of highest degree (ties by naId), each once, without their text."""
    distinct = {int(m["naId"]): m for m in members}
    # The few highest of a coarse community's thousands, without sorting them all.
    ranked = heapq.nsmallest(
        limit, distinct.values(), key=lambda m: (-int(m["degree"] or 0), int(m["naId"]))
    )
    return [{name: member.get(name) for name in _TOP_MEMBER_FIELDS} for member in ranked]


#: The modules whose code turns a community's rows into its context and its report: a change
#: to any of them changes every report's input key.
_REPORT_CODE = (
    "community_profile.py",
    "community_report.py",
    "extractive.py",
    "generate.py",
    "report_context.py",
    "report_context_data.py",
    "report_context_render.py",
    "report_loop.py",
    "report_parse.py",
    "report_prompts.py",
    "report_rows.py",
    "single_report.py",
)


@cache
def report_code_digest() -> str:
    """A digest of the modules that make a report from its rows (:data:`_REPORT_CODE`)."""
    return source_digest(Path(__file__).parent / name for name in _REPORT_CODE)


#: One encoder for every row (json.dumps with options builds one per call).
_ROW_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)


def _row_digest(row: Mapping[str, Any]) -> bytes:
    """A row's digest for :func:`report_input_key`: a coarse community's key takes every
    member's and relationship's, and a run keeps them (:class:`RunRows`), so they are short."""
    return hashlib.blake2b(_ROW_ENCODER.encode(row).encode("utf-8"), digest_size=16).digest()


def _member_key(row: Mapping[str, Any]) -> int:
    return int(row["naId"])


def _relationship_key(row: Mapping[str, Any]) -> tuple[int, int, str]:
    return (int(row["source"]), int(row["target"]), str(row["type"]))


class RunRows:
    """What one run derives from each member and relationship row, derived once: a member's
    digest for :func:`report_input_key`, and the :class:`MemberInfo` or
    :class:`RelationshipInfo` of either for the context. A record is a member at every level
    and a relationship inside a community at every level above the one that first holds both
    ends; encoding and converting the same rows again at each level was most of keying the
    coarse communities and a sixth of building their contexts. Rows are told apart by naId
    (relationships by both ends and type), so one instance serves one run, within which a row
    does not change."""

    def __init__(self) -> None:
        self._member_digests: dict[int, bytes] = {}
        self._members: dict[int, MemberInfo] = {}
        self._relationships: dict[tuple[int, int, str], RelationshipInfo] = {}

    def member_digests(self, rows: Iterable[Mapping[str, Any]]) -> list[bytes]:
        return _made_once(self._member_digests, rows, _member_key, _row_digest)

    def members(self, rows: Iterable[Mapping[str, Any]]) -> list[MemberInfo]:
        return _made_once(self._members, rows, _member_key, _member_info)

    def relationships(self, rows: Iterable[Mapping[str, Any]]) -> list[RelationshipInfo]:
        return _made_once(self._relationships, rows, _relationship_key, _relationship_info)


_Key = TypeVar("_Key")
_Made = TypeVar("_Made")


def _made_once(
    kept: dict[_Key, _Made],
    rows: Iterable[Mapping[str, Any]],
    key_of: Callable[[Mapping[str, Any]], _Key],
    make: Callable[[Mapping[str, Any]], _Made],
) -> list[_Made]:
    """`make` of each row, taken from `kept` when a row of the same key was made before."""
    made = []
    for row in rows:
        key = key_of(row)
        value = kept.get(key)
        if value is None:
            value = kept[key] = make(row)
        made.append(value)
    return made


def report_input_key(
    *,
    generator: str,
    counter_key: str,
    token_budget: int,
    community: Mapping[str, Any],
    members: Sequence[Mapping[str, Any]],
    relationships: Sequence[Mapping[str, Any]],
    totals: MentionTotals,
    sub_report_keys: Mapping[str, str | None],
    run_rows: RunRows | None = None,
) -> str:
    """A hash of everything :func:`context_from_rows` and the report are made from: when a
    community's key is what its node holds, the report on the node is the one a new run would
    make (sub-reports enter by their context keys; the code by a digest of its modules). Rows
    enter in a canonical order: the graph returns them in its store's order, which differs
    between a graph built from scratch and the same graph updated, and the context does not
    depend on it. Each part is hashed as one JSON line (JSON escapes every newline), and each
    member row by a digest of its JSON line (16 bytes; a canonical order of digests is an order
    of rows as good as any): the rows' text is serialized once, not again inside one document,
    and what a run keeps of a row for the next level is short. A relationship enters by its
    ends and type: its titles and degree are its ends' member rows'. `run_rows` keeps the
    member rows' digests between the calls of one run."""
    digest = hashlib.sha256()

    def part(value: Any) -> None:
        digest.update(_ROW_ENCODER.encode(value).encode("utf-8"))
        digest.update(b"\n")

    part([report_code_digest(), generator, counter_key, token_budget])
    part([community["id"], community["level"], community["size"], sorted(community["children"])])
    if run_rows is None:
        member_digests = sorted(map(_row_digest, members))
    else:
        member_digests = sorted(run_rows.member_digests(members))
    part(len(members))
    digest.update(b"".join(member_digests))
    # A relationship row's titles and degree are its ends' (OutgoingRelationships.within), and
    # both ends are members, whose rows are in the key: a relationship enters by its ends and
    # type alone.
    part(sorted(map(_relationship_key, relationships)))
    part(sorted(totals.items()))
    part(sorted(sub_report_keys.items()))
    return digest.hexdigest()


def summary_embedding_text(report: CommunityReport) -> str:
    """The text of a community's summary embedding, as
    :data:`nara_kg.graph.reports.PENDING_SUMMARY_EMBEDDINGS` reads it from the node."""
    return f"{report.title}. {report.summary}"


def summary_embedding_key(model_key: str, context_key: str) -> str:
    """What a community's summaryEmbeddingKey is once its summary is embedded."""
    return f"{model_key}|{context_key}"


def report_row(
    community_id: str,
    report: CommunityReport,
    context_key: str,
    members: Sequence[Mapping[str, Any]] = (),
    *,
    input_key: str | None = None,
    used_sub_reports: bool = False,
    truncated: bool = False,
) -> dict[str, Any]:
    """The Community node's report properties; `members` are :func:`top_members`."""
    return {
        "id": community_id,
        "title": report.title,
        "summary": report.summary,
        "rating": float(report.rating),
        "rating_explanation": report.rating_explanation,
        "findings": json.dumps(
            [{"summary": f.summary, "explanation": f.explanation} for f in report.findings],
            ensure_ascii=False,
        ),
        "report": report.to_json(),
        "generatedBy": report.generated_by,
        "contextKey": context_key,
        "topMembers": json.dumps(list(members), ensure_ascii=False),
        "inputKey": input_key,
        "usedSubReports": used_sub_reports,
        "truncated": truncated,
    }
