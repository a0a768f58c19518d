"""The first load of an export through Neo4j's own bulk path, `neo4j-admin database import`.

Into an empty database the by-difference writers write every node and relationship through
Cypher, a transaction per batch. The import tool writes the store files directly, much faster;
but it needs the server stopped and the database replaced, which only the project's own local
server allows (`nara-kg neo4j start|stop`). With a remote or managed Neo4j (NEO4J_URI), or a
database that holds any node, nothing is done here and the writers load as usual.

It runs after the per-file stages and `record_selection` (the chunk rows it reads) and before
`graph_nodes`: the imported graph is the chunk nodes and the relationships the writers would
write (:mod:`nara_kg.build.import_files`), with the chunk-node schema; the steps that follow
run as usual, and the writers among them find the graph already as they would make it.
Vectors are not imported: `text_embeddings` copies them from the per-file parts as on any
first load.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from nara_kg.build import relationships as build_relationships
from nara_kg.build.import_files import (
    ARRAY_DELIMITER,
    ImportFiles,
    ImportUnsupported,
    write_node_file,
    write_relationship_file,
)
from nara_kg.build.projection_changes import mark_every_record
from nara_kg.devserver import process as neo4j_server
from nara_kg.devserver.admin_import import import_database
from nara_kg.graph.connection import open_driver
from nara_kg.graph.emptiness import node_count
from nara_kg.graph.nodes import ensure_node_schema
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.changes import read_changes
from nara_kg.ingest.stages.chunks import record_links
from nara_kg.ingest.stages.record_index import RecordIndex
from nara_kg.model.edges import Edge
from nara_kg.model.progress import Log, quiet
from nara_kg.model.schema import AUTHORITY_RELATIONSHIPS, Rel
from nara_kg.settings import Neo4jSettings


@dataclass
class BulkLoadResult:
    loaded: bool
    #: Why the writers load instead (when `loaded` is False), or what was done.
    reason: str
    nodes: int = 0
    relationships: int = 0
    seconds_files: float = 0.0
    seconds_import: float = 0.0
    #: Stopping the server, and starting it again with the schema online.
    seconds_restart: float = 0.0
    seconds_total: float = 0.0


def import_dir(layout: WorkLayout) -> Path:
    """Where the import files are written (removed once imported)."""
    return layout.root / "bulk-import"


def desired_relationships(layout: WorkLayout) -> Iterator[tuple[str, set[Edge]]]:
    """Every relationship type's desired set, as the relationship writers compute it: a naId
    range of records at a time when the record index holds the selection (the change set
    confirms it), else each type's whole set from every record's links."""
    if read_changes(layout) is not None:
        with RecordIndex(layout.record_index) as index:
            yield from build_relationships.desired_by_ranges(index)
        return
    links = record_links(layout)
    yield Rel.NEXT, build_relationships.desired_next(links)
    yield Rel.INCLUDES, build_relationships.desired_includes(links)[0]
    authorities = build_relationships.desired_authorities(links, layout)
    for rel in AUTHORITY_RELATIONSHIPS:
        yield rel, authorities[rel]


def write_import_files(layout: WorkLayout, directory: Path) -> ImportFiles:
    directory.mkdir(parents=True, exist_ok=True)
    files = ImportFiles(
        nodes_header=directory / "nodes-header.csv",
        nodes=directory / "nodes.csv",
        relationships_header=directory / "relationships-header.csv",
        relationships=directory / "relationships.csv",
    )
    files.node_count = write_node_file(layout, files.nodes_header, files.nodes)
    files.relationship_count = write_relationship_file(
        desired_relationships(layout), files.relationships_header, files.relationships
    )
    return files


def refusal(settings: Neo4jSettings) -> str | None:
    """Why this server cannot be bulk-loaded now, or None when it can."""
    if not settings.managed:
        return (
            f"NEO4J_URI is set ({settings.uri}): a server this project does not run cannot be "
            "stopped and imported into; the writers load it"
        )
    with open_driver(settings) as driver:
        nodes = node_count(driver, settings.database)
    if nodes:
        return f"the database holds {nodes} nodes: the writers update it by difference"
    return None


def first_load(
    settings: Neo4jSettings, home: Path, layout: WorkLayout, *, log: Log = quiet
) -> BulkLoadResult:
    """Bulk-import the chosen chunks and their relationships into the empty database of the
    local server at `home` (stopped for the import and started again); a result that says why
    not when the server is not local, the database not empty, or a value not importable."""
    started = time.perf_counter()
    reason = refusal(settings)
    if reason is not None:
        log(f"bulk first load skipped: {reason}")
        return BulkLoadResult(loaded=False, reason=reason)
    directory = import_dir(layout)
    shutil.rmtree(directory, ignore_errors=True)
    try:
        try:
            files = write_import_files(layout, directory)
        except ImportUnsupported as exc:
            reason = f"the export holds a value the import cannot carry ({exc}); the writers load"
            log(f"bulk first load skipped: {reason}")
            return BulkLoadResult(loaded=False, reason=reason)
        written = time.perf_counter()
        log(
            f"bulk first load: {files.node_count} nodes, {files.relationship_count} "
            f"relationships written for neo4j-admin ({written - started:.1f}s)"
        )
        # The import writes no change log: graph_communities reads the whole graph after it.
        mark_every_record(layout)
        neo4j_server.stop(home, log=log)
        stopped = time.perf_counter()
        try:
            import_database(
                home,
                settings.database,
                files.arguments(),
                array_delimiter=ARRAY_DELIMITER,
                report=directory / "import.report",
            )
        finally:
            imported = time.perf_counter()
            neo4j_server.start(settings, home, log=log)
        with open_driver(settings) as driver:
            ensure_node_schema(driver, settings.database)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    ended = time.perf_counter()
    log(f"bulk first load: imported in {imported - stopped:.1f}s")
    return BulkLoadResult(
        loaded=True,
        reason="the database was empty and the server is the project's own",
        nodes=files.node_count,
        relationships=files.relationship_count,
        seconds_files=round(written - started, 3),
        seconds_import=round(imported - stopped, 3),
        seconds_restart=round((stopped - written) + (ended - imported), 3),
        seconds_total=round(ended - started, 3),
    )
