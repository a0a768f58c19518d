"""entity_mentions applied as a change set: only the chunks whose mentions may have changed are
linked again, and only their MENTIONED_IN written, by difference against the graph's.

A chunk's mentions follow from its text, its record's context (the authorities the record
cites, those its ancestors cite, its dates: :func:`nara_kg.build.mentions.context_of`) and the
linker. After a change set that this writer's last complete write is the base of
(:mod:`nara_kg.ingest.stages.changes`), the chunks linked again are:

* own: the chunks of the changed records still chosen;
* below: those of every chosen record below a changed one (an ancestor's citations are part of
  its descendants' context; walked down through the record index's parent links), and of the
  records citing an organization-name alias that now stands for another organization (and
  those below them). A record citing a changed one needs nothing: its context holds the cited
  naIds, not their content;
* name_match: the chunks whose text holds a surface form, old or new, of an authority whose
  linking changed (:mod:`nara_kg.build.mention_index` says why no other chunk can link
  differently, and how they are found without reading the others). An authority edit that
  leaves its forms, type, years and aliases as they were finds none.

The first build, a full rebuild, a state the graph no longer holds and a change of the linking
code link every chunk (:func:`nara_kg.build.mentions.link_mentions`, cached chunks reused),
compare the whole set and make the index again. The label score is then recomputed from the
labelled records' MENTIONED_IN in the graph.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neo4j import Driver

from nara_kg.build import sync_state
from nara_kg.build.label_ledger import LabelLedger
from nara_kg.build.mention_comparison import MentionComparison
from nara_kg.build.mention_index import (
    IndexBuilder,
    LinkerChange,
    MentionIndex,
    TokenRow,
    normalized_words,
    relinked_chunks,
)
from nara_kg.build.mention_sync import MentionSync, mention_set, sync_compared, write_difference
from nara_kg.build.mentions import (
    MentionsResult,
    RecordContext,
    build_linker,
    cited_ids,
    context_of,
    count_chunk,
    link_chunk,
    link_mentions,
    normalized_chunk,
    record_context,
)
from nara_kg.graph import mentions as mention_cypher
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.changes import ChangeSet, chunks_of_records, plan_for, read_changes
from nara_kg.ingest.stages.common import read_json, write_json
from nara_kg.ingest.stages.record_index import IndexedRecord, RecordIndex
from nara_kg.linking.labels import LabelScore, iter_labels, load_labels
from nara_kg.linking.linker import EntityLinker
from nara_kg.model.schema import AUTHORITY_TYPES, chunk_id
from nara_kg.model.tables import Col

#: Records walked down from the changed ones before the walk stops (a deeper hierarchy than
#: any archive has; it bounds the walk on damaged input).
MAX_DESCENT = 10_000_000

_RECORD_COLUMNS = [Col.NA_ID, Col.NODE_TYPE, Col.PROPS, Col.REFERENCES, Col.CHUNK_SEQ_ID]
_LINK_COLUMNS = [Col.CHUNK_ID, Col.NA_ID, Col.CHUNK_SEQ_ID, Col.TEXT, Col.ROW_HASH]


def relink_scope(
    index: RecordIndex, changes: ChangeSet, citing_moved: Iterable[int] = ()
) -> dict[int, IndexedRecord]:
    """The chosen records whose every chunk may link differently after `changes`: the changed
    ones still chosen, `citing_moved` (records citing a moved alias) and every chosen record
    below one of them."""
    scope = set(changes.na_ids) | set(citing_moved)
    frontier = set(scope)
    while frontier and len(scope) < MAX_DESCENT:
        frontier = index.children(frontier) - scope
        scope |= frontier
    return index.records(scope)


def _first_rows(layout: WorkLayout, records: Iterable[IndexedRecord]) -> list[dict[str, Any]]:
    return [
        row
        for row in chunks_of_records(layout, records, _RECORD_COLUMNS)
        if row[Col.CHUNK_SEQ_ID] == 0
    ]


def scoped_linker(layout: WorkLayout, index: RecordIndex) -> EntityLinker:
    """The linker over the chosen authority records (their first chunks, found through the
    index), as :func:`nara_kg.build.mentions.build_linker` builds it for the whole run."""
    authorities = index.records_of_types(AUTHORITY_TYPES)
    rows = _first_rows(layout, authorities)
    linker, _ = build_linker(rows, index.aliases(r.na_id for r in authorities))
    return linker


def scoped_contexts(
    layout: WorkLayout, index: RecordIndex, scope: Mapping[int, IndexedRecord]
) -> dict[int, RecordContext]:
    """The linking context of the scope's records and of their chosen ancestors."""
    rows = _first_rows(layout, scope.values())
    bare = [record_context(row, {}) for row in rows]
    ancestors = {a for context in bare for a in context.ancestors} - set(scope)
    rows += _first_rows(layout, index.records(ancestors).values())
    aliases = index.aliases({na_id for row in rows for na_id in cited_ids(row)})
    return {row[Col.NA_ID]: record_context(row, aliases) for row in rows}


def link_scope(
    layout: WorkLayout,
    linker: EntityLinker,
    scope: Mapping[int, IndexedRecord],
    contexts: Mapping[int, RecordContext],
    *,
    only: Mapping[int, frozenset[int]] | None = None,
    words_of: Iterable[int] = (),
    words: list[TokenRow] | None = None,
) -> MentionsResult:
    """The scope's chunks linked (no cache: each is linked once), their desired MENTIONED_IN
    in `desired`; of a record in `only`, only the chunks (seqs) it names. The words of the
    chunks of `words_of` are added to `words` (for :class:`MentionIndex`)."""
    only = only or {}
    indexed = set(words_of)
    result = MentionsResult(
        authorities=len(linker.authorities),
        surface_forms=len(linker.matcher),
        fingerprint=linker.fingerprint(),
        records_touched=len(scope),
        linker=linker,
    )
    started = time.perf_counter()
    by_record: dict[int, frozenset[int]] = {}
    cites = {na_id: context.references for na_id, context in contexts.items()}
    for row in chunks_of_records(layout, scope.values(), _LINK_COLUMNS):
        na_id, seq = row[Col.NA_ID], row[Col.CHUNK_SEQ_ID]
        if na_id in only and seq not in only[na_id]:
            continue
        normalized = normalized_chunk(row[Col.TEXT])
        if words is not None and na_id in indexed:
            words.extend((word, na_id, seq) for word in normalized_words(normalized.text))
        record = contexts.get(na_id)
        ancestor_authorities = by_record.get(na_id)
        if ancestor_authorities is None:
            ancestor_authorities = by_record[na_id] = context_of(record, cites)[0]
        mentions, ambiguous = link_chunk(linker, row, record, ancestor_authorities, normalized)
        result.relinked += 1
        count_chunk(result, row, mentions, ambiguous)
    result.link_seconds = time.perf_counter() - started
    return result


def _sync_scoped(
    driver: Driver,
    database: str,
    synced: sync_state.SyncedSet,
    desired: Mapping[tuple[str, str], tuple[int, str]],
    chunk_ids: list[str],
    generation: str,
) -> MentionSync:
    """Make the linker's MENTIONED_IN into `chunk_ids` equal `desired`; the rest stands."""
    current = mention_cypher.mentions_into(driver, database, chunk_ids) if chunk_ids else {}
    if not desired and not current:
        synced.advance(generation)
        return MentionSync(0, 0, 0, 0, "changes")
    synced.begin()
    to_write = [
        (*edge, *value, edge not in current)
        for edge, value in sorted(desired.items())
        if current.get(edge) != value
    ]
    to_remove = sorted(set(current) - set(desired))
    added, updated, removed = write_difference(
        driver, database, synced.layout, [to_write], [to_remove]
    )
    synced.commit_changes(generation)
    return MentionSync(len(desired), added, updated, removed, "changes")


@dataclass(frozen=True)
class _Scope:
    """What a change set links again (see the module's notes)."""

    linker: EntityLinker
    change: LinkerChange
    #: Records all of whose chunks are linked again.
    records: dict[int, IndexedRecord]
    #: Records only some of whose chunks are (they hold a changed form), and which.
    named: dict[int, IndexedRecord]
    named_chunks: dict[int, frozenset[int]]
    contexts: dict[int, RecordContext]


def _plan_scope(layout: WorkLayout, changes: ChangeSet) -> _Scope | str:
    """The change set's scope, or why it cannot be applied (the caller links every chunk)."""
    with (
        RecordIndex(layout.record_index) as index,
        MentionIndex(layout.mention_index) as state,
    ):
        if not state.equals(changes.base):
            return "no linker state equal to the change set's base (or the linking code changed)"
        linker = scoped_linker(layout, index)
        change = state.linker_change(linker)
        named = state.chunks_naming(change.forms)
        if named is None:
            return "a changed surface form has no indexed word"
        citing_moved = index.citing(changes.aliases) if changes.aliases else set()
        records = relink_scope(index, changes, citing_moved)
        named_chunks = relinked_chunks(named, records)
        named_records = index.records(named_chunks)
        named_chunks = {na_id: named_chunks[na_id] for na_id in named_records}
        contexts = scoped_contexts(layout, index, {**records, **named_records})
    return _Scope(linker, change, records, named_records, named_chunks, contexts)


def _apply_changes(
    driver: Driver,
    database: str,
    layout: WorkLayout,
    synced: sync_state.SyncedSet,
    changes: ChangeSet,
) -> MentionsResult | str:
    """The change set applied to the chunks it reaches, or why it was not."""
    scope = _plan_scope(layout, changes)
    if isinstance(scope, str):
        return scope
    own = {*changes.added, *changes.changed} & set(scope.records)
    words: list[TokenRow] = []
    result = link_scope(
        layout,
        scope.linker,
        {**scope.records, **scope.named},
        scope.contexts,
        only=scope.named_chunks,
        words_of=own,
        words=words,
    )
    own_chunks = sum(r.chunk_count for na_id, r in scope.records.items() if na_id in own)
    named = sum(len(seqs) for seqs in scope.named_chunks.values())
    result.relinked_by = {
        "own": own_chunks,
        "below": result.relinked - own_chunks - named,
        "name_match": named,
    }
    result.authorities_changed = len(scope.change.changed)
    result.relinked_records = frozenset(scope.records) | frozenset(scope.named_chunks)
    chunk_ids = {chunk for _, chunk in result.desired} | _chunk_ids(scope.records)
    chunk_ids |= {chunk_id(na_id, s) for na_id, seqs in scope.named_chunks.items() for s in seqs}
    result.sync = _sync_scoped(
        driver, database, synced, result.desired, sorted(chunk_ids), changes.generation
    )
    with MentionIndex(layout.mention_index) as state:
        state.apply(changes.generation, changes.na_ids, words, scope.linker, scope.change)
    return result


def _chunk_ids(scope: Mapping[int, IndexedRecord]) -> set[str]:
    return {chunk_id(r.na_id, seq) for r in scope.values() for seq in range(r.chunk_count)}


def sync_entity_mentions(
    driver: Driver,
    database: str,
    layout: WorkLayout,
    *,
    labels_path: Path | None = None,
    trust_snapshot: bool = True,
) -> MentionsResult:
    """Make the graph's MENTIONED_IN equal the linker's: nothing read after an empty change
    set, the chunks a change set reaches after one this writer's last complete write is the
    base of, every chunk otherwise (see the module's notes).
    `mode` says which ("done", "changes" or "whole"), `whole_reason` why a change set was not
    applied."""
    synced = mention_set(driver, database, layout)
    changes = read_changes(layout)
    full = not trust_snapshot
    at = None if full or changes is None else synced.generation(changes.generation)
    plan = plan_for(changes, at, full=full)
    kept_score = _stored_score(layout, labels_path)
    has_labels = labels_path is not None and labels_path.exists()
    reason = "no change set this write is the base of"
    unchanged = plan.mode == "done" or (
        plan.mode == "changes" and plan.changes is not None and plan.changes.empty
    )
    if unchanged and (not has_labels or kept_score):
        if plan.mode == "changes" and plan.changes is not None:
            synced.advance(plan.changes.generation)
            with MentionIndex(layout.mention_index) as state:
                state.advance(plan.changes.base, plan.changes.generation)
            with LabelLedger(layout.label_ledger) as ledger:
                ledger.advance(plan.changes.base, plan.changes.generation)
        return MentionsResult(
            sync=MentionSync(0, 0, 0, 0, "changes"), labels=kept_score, mode="done"
        )
    if plan.mode == "changes" and plan.changes is not None and not plan.changes.empty:
        scoped = _apply_changes(driver, database, layout, synced, plan.changes)
        if not isinstance(scoped, str):
            scoped.mode = "changes"
            if labels_path is not None and has_labels:
                scoped.labels, scoped.label_records_read = _scoped_score(
                    driver, database, layout, labels_path, plan.changes, scoped.relinked_records
                )
                _store_score(layout, labels_path, scoped.labels)
            return scoped
        reason = scoped
    elif unchanged:
        reason = "no label score kept"
    return _link_whole(
        driver, database, layout, labels_path, trust_snapshot, plan.generation, reason
    )


def _link_whole(
    driver: Driver,
    database: str,
    layout: WorkLayout,
    labels_path: Path | None,
    trust_snapshot: bool,
    generation: str | None,
    reason: str,
) -> MentionsResult:
    """Every chunk linked, the whole set compared on disk (:mod:`.mention_comparison`), the
    mention index made again, the label score taken from a ledger rebuilt from the labels
    file and the desired pairs."""
    builder = IndexBuilder(layout.mention_index)
    try:
        with MentionComparison(layout.mention_comparison) as comparison:
            result = link_mentions(
                layout,
                on_chunk=lambda row, normalized: builder.add_normalized(
                    row[Col.NA_ID], row[Col.CHUNK_SEQ_ID], normalized.text
                ),
                desired=comparison,
            )
            result.sync = sync_compared(
                driver,
                database,
                comparison,
                layout,
                trust_snapshot=trust_snapshot,
                generation=generation,
            )
            if labels_path is not None and labels_path.exists():
                with LabelLedger(layout.label_ledger) as ledger:
                    ledger.rebuild(
                        _labels_digest(labels_path),
                        iter_labels(labels_path),
                        comparison.record_pairs(),
                        generation,
                    )
                    result.labels = ledger.score()
        _store_score(layout, labels_path, result.labels)
        assert result.linker is not None
        builder.finish(result.linker, generation)
    except BaseException:
        builder.abandon()
        raise
    result.mode, result.whole_reason = "whole", reason
    result.relinked_by = {"all": result.relinked}
    return result


def _scoped_score(
    driver: Driver,
    database: str,
    layout: WorkLayout,
    labels_path: Path,
    changes: ChangeSet,
    relinked: Iterable[int],
) -> tuple[LabelScore, int]:
    """The label score after a change set, and how many labelled records it read: the
    ledger's, with the pairs of the labelled records it relinked read again
    (:mod:`nara_kg.build.label_ledger`); with a ledger of other labels or another write, made
    whole from the graph's MENTIONED_IN into every labelled record."""
    digest = _labels_digest(labels_path)
    with LabelLedger(layout.label_ledger) as ledger:
        if ledger.matches(digest, changes.base):
            records = ledger.labelled(relinked)
            pairs = mention_cypher.mention_pairs_of_records(driver, database, records)
            ledger.replace(records, pairs, changes.generation)
        else:
            labels = load_labels(labels_path)
            records = sorted(labels)
            pairs = mention_cypher.mention_pairs_of_records(driver, database, records)
            ledger.rebuild(digest, labels.items(), pairs, changes.generation)
        return ledger.score(), len(records)


#: The label score of the last linking, kept for the runs that link nothing.
_SCORE_STATE = "linker-mentions-labels"


def _labels_digest(labels_path: Path) -> str:
    return hashlib.sha256(labels_path.read_bytes()).hexdigest()


def _store_score(layout: WorkLayout, labels_path: Path | None, score: LabelScore | None) -> None:
    path = layout.sync_revision(_SCORE_STATE)
    if labels_path is None or score is None:
        path.unlink(missing_ok=True)
        return
    payload = dataclasses.asdict(score)
    write_json(path, {"labels": _labels_digest(labels_path), "score": payload})


def _stored_score(layout: WorkLayout, labels_path: Path | None) -> LabelScore | None:
    """The last linking's score against the same labels file, if kept."""
    if labels_path is None or not labels_path.exists():
        return None
    stored = read_json(layout.sync_revision(_SCORE_STATE))
    if stored is None or stored.get("labels") != _labels_digest(labels_path):
        return None
    score = dict(stored["score"])
    for key in ("false_positive_sample", "false_negative_sample"):
        score[key] = tuple(tuple(pair) for pair in score.get(key, ()))
    try:
        return LabelScore(**score)
    except TypeError:
        return None
