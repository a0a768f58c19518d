"""text_embeddings: give every chunk whose text or model changed its vector (reused from the
per-file parts where they match, encoded otherwise)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from neo4j import Driver

from nara_kg.build.progress import Log, quiet
from nara_kg.embedding.encoder import Embedder, release_free_memory
from nara_kg.graph import embeddings as embedding_cypher
from nara_kg.ingest.inputs import file_id_of
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunk_embeddings import read_vector_part


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

    @property
    def chunks_per_second(self) -> float:
        return self.encoded / self.seconds_encoding if self.seconds_encoding else 0.0


class _PartVectors:
    """Vectors of the per-file parts, looked up by the chunk's file (one part per file)."""

    def __init__(self, layout: WorkLayout | None, model_key: str) -> None:
        self._layout = layout
        self._model_key = model_key
        self._parts: dict[str, dict[tuple[str, str], Any]] = {}

    def find(self, row: dict[str, Any]) -> Any:
        if self._layout is None or not row.get("file"):
            return None
        # A zip member is named "<archive>!<member>": the part belongs to the archive.
        file_id = file_id_of(str(row["file"]).split("!", 1)[0])
        if file_id not in self._parts:
            self._parts[file_id] = read_vector_part(
                self._layout.vector_part(file_id), self._model_key
            )
        return self._parts[file_id].get((row["id"], row["hash"]))

    def forget(self) -> None:
        self._parts.clear()


def embed_pending(
    driver: Driver,
    database: str,
    embedder: Embedder,
    *,
    layout: WorkLayout | None = None,
    page_size: int = 512,
    round_size: int = 16_384,
    log: Log = quiet,
) -> EmbeddingResult:
    """Give every chunk whose text or model changed its vector.

    Vectors come from the per-file parts that `chunk_embeddings` made (when `layout` is given);
    what no part holds is encoded here, longest first, `page_size` per call. Pending chunks are
    read `round_size` at a time, and each page is written as soon as it is ready, so an
    interrupted run keeps its finished pages.
    """
    started = time.perf_counter()
    result = EmbeddingResult(model_key=embedder.key)
    total_pending = embedding_cypher.count_pending(driver, database, embedder.key)
    log(f"{total_pending} chunks need an embedding (model {embedder.key})")
    parts = _PartVectors(layout, embedder.key)

    def write(page: list[dict[str, Any]], vectors: Sequence[Any]) -> int:
        embedding_cypher.write_vectors(
            driver,
            database,
            embedder.key,
            [
                {"id": r["id"], "hash": r["hash"], "vector": v}
                for r, v in zip(page, vectors, strict=True)
            ],
        )
        return len(page)

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
            found: list[tuple[dict[str, Any], Any]] = []
            missing: list[dict[str, Any]] = []
            for row in pending:
                vector = parts.find(row)
                if vector is None:
                    missing.append(row)
                else:
                    found.append((row, vector))
            parts.forget()
            for offset in range(0, len(found), page_size):
                page = found[offset : offset + page_size]
                landed()
                in_flight = writer.submit(write, [r for r, _ in page], [v for _, v in page])
                result.from_parts += len(page)
            missing.sort(key=lambda row: -len(row["text"]))
            for offset in range(0, len(missing), page_size):
                page_rows = missing[offset : offset + page_size]
                encode_started = time.perf_counter()
                vectors = embedder.encode([row["text"] for row in page_rows])
                result.seconds_encoding += time.perf_counter() - encode_started
                result.encoded += len(page_rows)
                landed()
                in_flight = writer.submit(write, page_rows, list(vectors))
            landed()
            if result.embedded > total_pending * 2 + round_size:
                raise RuntimeError("embedding loop is not converging: vectors are not being stored")
    if result.encoded or result.from_parts:
        result.dimension = embedder.dimension
    result.seconds_total = time.perf_counter() - started
    return result
