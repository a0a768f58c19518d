"""graph_nodes writes one batch on a thread of its own while the next is read, and a failed
write fails the sync before anything is deleted or recorded."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from nara_kg.build import nodes
from nara_kg.ingest.layout import WorkLayout
from nara_kg.model.schema import Prop
from nara_kg.model.tables import Col


class _Snapshot:
    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []

    def add(self, *values: Any) -> None:
        self.rows.append(values)

    def __enter__(self) -> _Snapshot:
        return self

    def __exit__(self, *_: Any) -> None:
        pass


class _Synced:
    committed: list[Any] = []

    def __init__(self, *_: Any) -> None:
        pass

    def trusted(self) -> None:
        return None

    def begin(self) -> None:
        pass

    def generation(self, _now: Any) -> None:
        return None

    def snapshot_writer(self, _schema: Any) -> _Snapshot:
        return _Snapshot()

    def commit_snapshot(
        self, snapshot: _Snapshot, _generation: Any = None, tallies: Any = None
    ) -> None:
        _Synced.committed.append(snapshot)


def _rows(count: int) -> list[dict[str, Any]]:
    return [
        {
            Col.CHUNK_ID: f"{i}-0",
            Col.NODE_TYPE: "item",
            Col.EMBED: True,
            Col.PROPS: json.dumps({Prop.CHUNK_SEQ_ID: 0, Prop.NA_ID: i}),
            Col.ROW_HASH: f"h{i}",
        }
        for i in range(count)
    ]


@pytest.fixture
def graph(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {"threads": set(), "written": [], "deleted": []}
    monkeypatch.setattr(nodes.node_cypher, "ensure_node_schema", lambda *_: None)
    monkeypatch.setattr(
        nodes.node_cypher, "existing_row_hashes", lambda *_: iter([("9999-0", "x"), ("7-0", "h7")])
    )
    monkeypatch.setattr(
        nodes.node_cypher,
        "delete_chunks",
        lambda _d, _db, ids: seen["deleted"].extend(ids) or len(ids),
    )
    monkeypatch.setattr(nodes.sync_state, "SyncedSet", _Synced)
    monkeypatch.setattr(nodes.sync_state, "record_node_deletions", lambda *_: None)
    monkeypatch.setattr(nodes.node_cypher, "relationship_counts", lambda *_: {})
    monkeypatch.setattr(nodes.node_cypher, "neighbour_records", lambda *_: set())
    monkeypatch.setattr(nodes.node_cypher, "node_counts", lambda *_: {})
    monkeypatch.setattr(nodes, "read_changes", lambda _layout: None)
    monkeypatch.setattr(nodes, "iter_chunks", lambda *_: iter(_rows(4_500)))
    _Synced.committed = []
    return seen


def test_batches_are_written_off_the_reading_thread(
    graph: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def upsert(_d: Any, _db: str, node_type: str, rows: list[dict[str, Any]]) -> int:
        graph["threads"].add(threading.current_thread().name)
        graph["written"].extend(row["props"][Prop.NA_ID] for row in rows)
        return len(rows)

    monkeypatch.setattr(nodes.node_cypher, "upsert_nodes", upsert)
    layout = WorkLayout(tmp_path)
    result = nodes.sync_nodes(None, "neo4j", layout, rewrite_all=True)  # type: ignore[arg-type]
    assert sorted(graph["written"]) == list(range(4_500))
    assert result.written == 4_500 and result.records_written == 4_500
    assert graph["threads"] and threading.current_thread().name not in graph["threads"]
    assert graph["deleted"] == ["9999-0"] and len(_Synced.committed) == 1
    assert len(_Synced.committed[0].rows) == 4_500


def test_a_failed_write_fails_the_sync_before_deleting(
    graph: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def upsert(*_: Any) -> int:
        raise RuntimeError("Neo4j went away")

    monkeypatch.setattr(nodes.node_cypher, "upsert_nodes", upsert)
    with pytest.raises(RuntimeError, match="went away"):
        nodes.sync_nodes(None, "neo4j", WorkLayout(tmp_path), rewrite_all=True)  # type: ignore[arg-type]
    assert graph["deleted"] == [] and _Synced.committed == []
