"""`nara-kg build --bulk-first-load`: the per-file stages and record_selection, then the bulk
load, then the rest of the graph-wide stages (graph_nodes first among them)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from graph_assets import graph_nodes, record_selection
from nara_kg.app import launch


def _launch(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *, selection_ok: bool = True
) -> list[Any]:
    calls: list[Any] = []
    monkeypatch.setattr(launch, "fail_orphaned_runs", lambda instance: [])
    monkeypatch.setattr(launch, "sync_partitions", lambda *a, **k: SimpleNamespace(invalid=[]))
    keys = ["a.jsonl", "b.jsonl"]
    monkeypatch.setattr(launch, "input_files", SimpleNamespace(get_partition_keys=lambda **_: keys))
    monkeypatch.setattr(launch, "run_config", lambda data_dir: {})
    monkeypatch.setattr(launch, "_outcome", lambda *a: "outcome")

    def files(ranges: Any, *_: Any) -> bool:
        calls.append(("files", ranges))
        return True

    def execute(job: str, instance: Any, config: Any, tags: Any, asset_selection: Any) -> bool:
        calls.append(("run", list(asset_selection)))
        return selection_ok or asset_selection != [record_selection.key]

    monkeypatch.setattr(launch, "_parallel_file_runs", files)
    monkeypatch.setattr(launch, "_execute", execute)
    instance: Any = None  # the stand-ins above never touch it
    outcome = launch.build(tmp_path, instance, before_graph_nodes=lambda: calls.append("bulk"))
    assert outcome == "outcome"
    return calls


def test_the_bulk_load_runs_after_record_selection_and_before_graph_nodes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls = _launch(monkeypatch, tmp_path)
    assert calls[0] == ("files", [("a.jsonl", "b.jsonl")])
    assert calls[1] == ("run", [record_selection.key])
    assert calls[2] == "bulk"
    rest = calls[3][1]
    assert graph_nodes.key in rest and record_selection.key not in rest
    assert len(calls) == 4


def test_no_bulk_load_when_record_selection_failed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls = _launch(monkeypatch, tmp_path, selection_ok=False)
    assert "bulk" not in calls and len(calls) == 2
