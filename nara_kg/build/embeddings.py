"""text_embeddings: give every chunk whose text or model changed its vector (reused from the
per-file parts where they match, encoded otherwise)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

from neo4j import Driver

from nara_kg.build import sync_state
from nara_kg.build.nodes import NODES_CONCERN
from nara_kg.embedding.encoder import Embedder, release_free_memory
from nara_kg.graph import embeddings as embedding_cypher
from nara_kg.ingest.inputs import file_id_of
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.sqlite_store import open_scratch
from nara_kg.ingest.stages.changes import plan_for, read_changes
from nara_kg.ingest.stages.chunk_embeddings import read_vector_part
from nara_kg.ingest.stages.common import read_json, write_json
from nara_kg.model.progress import Log, quiet


@dataclass
class EmbeddingResult:
    embedded: int = 0
    #: Of `embedded`: vectors taken from the per-file `chunk_embeddings` parts.
    from_parts: int = 0
    #: Of `embedded`: vectors encoded here (chosen stubs, or chunks whose part is missing).
    encoded: int = 0
    already_current: int = 0
    seconds_encoding: float = 0.0
    seconds_total: float = 0.0
    model_key: str = ""
    dimension: int = 0
    #: Records whose chunks were looked at one by one: the change set's, or (compared whole)
    #: the chunks that needed a vector.
    records_touched: int = 0
    #: "changes" (the change set's records only) or "whole" (every chunk's key compared).
    scope: str = "whole"

    @property
    def chunks_per_second(self) -> float:
        return self.encoded / self.seconds_encoding if self.seconds_encoding else 0.0


def _write_page(
    driver: Driver,
    database: str,
    model_key: str,
    page: list[dict[str, Any]],
    vectors: Sequence[Any],
) -> int:
    """One page of pending chunks' vectors onto their nodes, stamped with the model key."""
    embedding_cypher.write_vectors(
        driver,
        database,
        model_key,
        [
            {"id": r["id"], "hash": r["hash"], "vector": v}
            for r, v in zip(page, vectors, strict=True)
        ],
    )
    return len(page)


def _encoded_pages(
    embedder: Embedder, rows: Sequence[dict[str, Any]], page_size: int, result: EmbeddingResult
) -> Iterator[tuple[list[dict[str, Any]], list[Any]]]:
    """`rows` encoded `page_size` per call, longest text first (pages of similar lengths pad
    least), with the time and count added to `result`."""
    ordered = sorted(rows, key=lambda row: -len(row["text"]))
    for offset in range(0, len(ordered), page_size):
        page_rows = ordered[offset : offset + page_size]
        started = time.perf_counter()
        vectors = list(embedder.encode([row["text"] for row in page_rows]))
        result.seconds_encoding += time.perf_counter() - started
        result.encoded += len(page_rows)
        yield page_rows, vectors


def _part_of(file_name: str) -> str:
    # A zip member is named "<archive>!<member>": the part belongs to the archive.
    return file_id_of(file_name.split("!", 1)[0])


_PENDING_SCHEMA = "CREATE TABLE pending (part TEXT NOT NULL, id TEXT NOT NULL, hash TEXT NOT NULL);"


def pending_by_part(
    driver: Driver, database: str, model_key: str, round_size: int, scratch: Path
) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """Every pending chunk as (chunkId, textHash), a part at a time, grouped by the per-file
    part that may hold its vector; chunks of no file (stubs) are left out. The keys wait in a
    scratch SQLite file at `scratch` (deleted after), not in memory: after a full load every
    chunk is pending, about 3 million keys (some 700 MB as Python tuples) at 10^6 records."""
    db = open_scratch(scratch, _PENDING_SCHEMA)
    try:
        after = ""
        db.execute("BEGIN")
        while rows := embedding_cypher.fetch_pending_keys(
            driver, database, model_key, round_size, after
        ):
            after = str(rows[-1]["id"])
            db.executemany(
                "INSERT INTO pending VALUES (?, ?, ?)",
                [
                    (_part_of(str(row["file"])), str(row["id"]), str(row["hash"]))
                    for row in rows
                    if row.get("file")
                ],
            )
        db.execute("COMMIT")
        cursor = db.execute("SELECT part, id, hash FROM pending ORDER BY part, rowid")
        for part, keys in groupby(cursor, key=itemgetter(0)):
            yield part, [(chunk_id, text_hash) for _, chunk_id, text_hash in keys]
    finally:
        db.close()
        scratch.unlink(missing_ok=True)


#: Vectors per write transaction (and per encoding call for what the parts do not hold).
VECTOR_PAGE_SIZE = 512


def embed_pending(
    driver: Driver,
    database: str,
    embedder: Embedder,
    *,
    layout: WorkLayout | None = None,
    page_size: int | None = None,
    round_size: int = 16_384,
    log: Log = quiet,
) -> EmbeddingResult:
    """Give every chunk whose text or model changed its vector.

    Vectors come from the per-file parts that `chunk_embeddings` made (when `layout` is given);
    what no part holds is encoded here, longest first, `page_size` per call. Pending chunks are
    read `round_size` at a time, and each page is written as soon as it is ready, so an
    interrupted run keeps its finished pages.
    """
    page_size = page_size or VECTOR_PAGE_SIZE
    started = time.perf_counter()
    result = EmbeddingResult(model_key=embedder.key)
    total_pending = embedding_cypher.count_pending(driver, database, embedder.key)
    log(f"{total_pending} chunks need an embedding (model {embedder.key})")

    def write(page: list[dict[str, Any]], vectors: Sequence[Any]) -> int:
        return _write_page(driver, database, embedder.key, page, vectors)

    # One page is written while the next is encoded: the model releases the GIL, so packing
    # and sending vectors costs no model time. At most one write is in flight, and a round
    # ends only when its writes have landed, so the next read sees them.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="vector-writer") as writer:
        in_flight: Future[int] | None = None

        def landed() -> None:
            nonlocal in_flight
            if in_flight is not None:
                result.embedded += in_flight.result()
                in_flight = None
                release_free_memory()
                log(f"embedded {result.embedded}/{total_pending} chunks")

        def send(page: list[tuple[dict[str, Any], Any]]) -> None:
            nonlocal in_flight
            landed()
            in_flight = writer.submit(write, [r for r, _ in page], [v for _, v in page])
            result.from_parts += len(page)

        # First the vectors the per-file parts hold: each part is read once, for the pending
        # chunks it may hold (reading the parts per round of pending chunks read every part
        # once per round, which grew with the square of the chunks). Pages fill across parts:
        # after a small change, a page per part was a transaction (and a commit) per file for
        # a vector or two each.
        if layout is not None and total_pending:
            found: list[tuple[dict[str, Any], Any]] = []
            by_part = pending_by_part(
                driver, database, embedder.key, round_size, layout.pending_vectors
            )
            for part, keys in by_part:
                vectors = read_vector_part(layout.vector_part(part), embedder.key)
                found += [
                    ({"id": chunk_id, "hash": text_hash}, vectors[(chunk_id, text_hash)])
                    for chunk_id, text_hash in keys
                    if (chunk_id, text_hash) in vectors
                ]
                del vectors
                while len(found) >= page_size:
                    send(found[:page_size])
                    del found[:page_size]
            if found:
                send(found)
            landed()

        # Then what no part held (chosen stubs, chunks whose part is missing) is encoded.
        # Rounds walk the chunkIds upwards from `after`; when they reach the end, one more
        # pass from the start confirms nothing is left (a vector that did not land is found
        # again, and the convergence check below still stops a run whose writes never land).
        after = ""
        while True:
            pending = embedding_cypher.fetch_pending(
                driver, database, embedder.key, round_size, after
            )
            if not pending:
                if not after:
                    break
                after = ""
                continue
            after = str(pending[-1]["id"])
            for page_rows, encoded in _encoded_pages(embedder, pending, page_size, result):
                landed()
                in_flight = writer.submit(write, page_rows, encoded)
            landed()
            if result.embedded > total_pending * 2 + round_size:
                raise RuntimeError("embedding loop is not converging: vectors are not being stored")
    if result.encoded or result.from_parts:
        result.dimension = embedder.dimension
    result.seconds_total = time.perf_counter() - started
    return result


#: The vector writer's concern; the model its last complete write used is kept beside it
#: (:data:`_MODEL_STATE`): another model's state is never taken.
EMBEDDINGS_CONCERN = "text-embeddings"
_MODEL_STATE = "text-embeddings-model"
#: The vector writer's state has no count to check (the node writer's run vouches for it).
_NO_COUNT = "RETURN 0 AS n"


def sync_embeddings(
    driver: Driver,
    database: str,
    embedder: Embedder,
    layout: WorkLayout,
    *,
    full: bool = False,
    log: Log = quiet,
) -> EmbeddingResult:
    """Vectors for the chunks that need one. After a change set applied by the node writer on
    a graph whose vectors were all current at the change set's base, only the change set's
    records can lack one: only their chunks are read. Otherwise every chunk's key is compared
    (:func:`embed_pending`)."""
    synced = sync_state.SyncedSet(driver, database, layout, EMBEDDINGS_CONCERN, _NO_COUNT)
    changes = read_changes(layout)
    same_model = (read_json(layout.sync_revision(_MODEL_STATE)) or {}).get("model") == embedder.key
    at = None if full or changes is None or not same_model else synced.generation(None)
    plan = plan_for(changes, at, full=full)
    if plan.mode == "done":
        return EmbeddingResult(model_key=embedder.key, scope="changes")
    scoped = (
        plan.mode == "changes"
        and plan.changes is not None
        and sync_state.applied_changes(layout, NODES_CONCERN, plan.changes.generation)
    )
    synced.begin()
    write_json(layout.sync_revision(_MODEL_STATE), {"model": embedder.key})
    if scoped and plan.changes is not None:
        result = embed_records(driver, database, embedder, list(plan.changes.na_ids), layout=layout)
        synced.commit_changes(plan.changes.generation)
        return result
    result = embed_pending(driver, database, embedder, layout=layout, log=log)
    result.records_touched = result.embedded
    synced.commit_changes(plan.generation)
    return result


def embed_records(
    driver: Driver,
    database: str,
    embedder: Embedder,
    na_ids: Sequence[int],
    *,
    layout: WorkLayout,
    page_size: int | None = None,
    round_size: int = 16_384,
) -> EmbeddingResult:
    """Vectors for the chunks of `na_ids` that need one: from the per-file parts where they
    match, encoded otherwise."""
    page_size = page_size or VECTOR_PAGE_SIZE
    started = time.perf_counter()
    result = EmbeddingResult(model_key=embedder.key, records_touched=len(na_ids), scope="changes")
    rows: list[dict[str, Any]] = []
    after = ""
    while na_ids:
        page = embedding_cypher.fetch_pending_of_records(
            driver, database, embedder.key, na_ids, round_size, after
        )
        if not page:
            break
        rows.extend(page)
        after = str(page[-1]["id"])
    by_part: dict[str, list[dict[str, Any]]] = {}
    missing: list[dict[str, Any]] = []
    for row in rows:
        if row.get("file"):
            by_part.setdefault(_part_of(str(row["file"])), []).append(row)
        else:
            missing.append(row)
    found: list[tuple[dict[str, Any], Any]] = []
    for part, part_rows in sorted(by_part.items()):
        vectors = read_vector_part(layout.vector_part(part), embedder.key)
        for row in part_rows:
            vector = vectors.get((row["id"], row["hash"]))
            if vector is None:
                missing.append(row)
            else:
                found.append((row, vector))

    def write(page: list[dict[str, Any]], vectors: Sequence[Any]) -> None:
        result.embedded += _write_page(driver, database, embedder.key, page, vectors)

    for offset in range(0, len(found), page_size):
        page_found = found[offset : offset + page_size]
        write([r for r, _ in page_found], [v for _, v in page_found])
        result.from_parts += len(page_found)
    for page_rows, encoded in _encoded_pages(embedder, missing, page_size, result):
        write(page_rows, encoded)
    if result.embedded:
        result.dimension = embedder.dimension
    result.seconds_total = time.perf_counter() - started
    return result
