"""What `nara-kg build` launches after its last successful build: nothing, the changed files,
or everything (nara_kg.app.build_state)."""

from __future__ import annotations

import os
from pathlib import Path

from nara_kg.app.build_state import (
    BuildState,
    beside_files,
    code_digest,
    file_states,
    inputs_digest,
    key_range,
    load,
    plan,
    save,
    settings_of,
)

FILES = {"a.jsonl": "10:1", "b.jsonl": "20:2", "c.jsonl": "30:3"}
SEEN = {"raw_jsonl": 5, "graph_nodes": 9}


def _state(files: dict[str, str] | None = None, **changes: object) -> BuildState:
    fields: dict[str, object] = {
        "inputs_digest": "d1",
        "files": dict(FILES if files is None else files),
        "materializations": dict(SEEN),
        "run_ids": ["r1"],
    }
    fields.update(changes)
    return BuildState(**fields)  # type: ignore[arg-type]


def test_nothing_changed_is_up_to_date() -> None:
    result = plan(_state(), _state(run_ids=[]))
    assert result.up_to_date and result.files == []


def test_one_changed_file_runs_that_file_only() -> None:
    result = plan(_state(), _state({**FILES, "b.jsonl": "21:4"}))
    assert not result.up_to_date and result.files == ["b.jsonl"]


def test_a_new_file_runs_it_and_a_removed_file_runs_the_graph_wide_steps() -> None:
    added = plan(_state(), _state({**FILES, "d.jsonl": "1:1"}))
    assert added.files == ["d.jsonl"]
    removed = plan(_state(), _state({k: v for k, v in FILES.items() if k != "c.jsonl"}))
    assert not removed.up_to_date and removed.files == []


def test_everything_runs_without_a_record_or_when_the_inputs_or_instance_moved() -> None:
    assert plan(None, _state()).files is None
    assert plan(_state(), _state(inputs_digest="d2")).files is None
    # A sensor run, a backfill or a run from the UI materialized something since.
    assert plan(_state(), _state(materializations={**SEEN, "graph_nodes": 12})).files is None
    assert plan(_state(), _state(), runs_in_flight=1).files is None


def test_key_range_spans_the_selected_keys_in_partition_order() -> None:
    keys = ["a", "b", "c", "d"]
    assert key_range(keys, ["c", "b"]) == ("b", "c")
    assert key_range(keys, ["d"]) == ("d", "d")
    assert key_range(keys, []) is None


def test_file_states_see_a_rewrite_and_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("one\n")
    os.utime(path, ns=(1_000, 1_000))
    before = file_states(tmp_path, ["x.jsonl", "gone.jsonl"])
    assert before == {"x.jsonl": "4:1000", "gone.jsonl": "missing"}
    path.write_text("two\n")
    assert file_states(tmp_path, ["x.jsonl"]) != {"x.jsonl": "4:1000"}


def test_digest_follows_code_settings_and_the_files_beside_the_export(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("x = 1\n")
    data = tmp_path / "data"
    data.mkdir()
    code = code_digest(tmp_path, ["pkg"])
    settings = settings_of({"NARA_KG_EMBEDDING_BACKEND": "standin", "HOME": "/root"})
    assert settings == {"NARA_KG_EMBEDDING_BACKEND": "standin"}
    # The local Neo4j's memory changes no output: tuning it re-runs nothing.
    tuned = {"NARA_KG_NEO4J_HEAP": "5g", "NARA_KG_NEO4J_PAGECACHE": "4g"}
    assert settings_of({"NARA_KG_EMBEDDING_BACKEND": "standin", **tuned}) == settings
    first = inputs_digest(code, settings, data, "/home")
    assert first == inputs_digest(code, settings, data, "/home")
    (tmp_path / "pkg" / "m.py").write_text("x = 2\n")
    assert inputs_digest(code_digest(tmp_path, ["pkg"]), settings, data, "/home") != first
    assert inputs_digest(code, {"NARA_KG_EMBEDDING_BACKEND": "onnx"}, data, "/home") != first
    assert inputs_digest(code, settings, data, "/other-instance") != first
    (data / "questions.jsonl").write_text("{}\n")
    assert "questions.jsonl" in beside_files(data)
    assert inputs_digest(code, settings, data, "/home") != first


def test_save_and_load_round_trip_and_a_damaged_record_is_none(tmp_path: Path) -> None:
    path = tmp_path / "work" / "last_build.json"
    save(path, _state())
    assert load(path) == _state()
    path.write_text("{not json")
    assert load(path) is None
    assert load(tmp_path / "absent.json") is None
