"""`file_stages` encodes several files' texts together (a window), writes each file's own vector
part, and when a window's encode fails only that window's files fail: the files of other
windows stay materialized."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from benchmarks.data import generate_dataset
from graph_assets.file_stages import CHUNK_EMBEDDINGS, file_stages
from nara_kg.ingest.stages import chunk_embeddings
from resources import EmbeddingModel, PipelinePaths

# The package exports the asset under the module's name.
file_stages_module = importlib.import_module("graph_assets.file_stages")


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("export")
    generate_dataset(data, 300)
    return data


def _run(export: Path, work: Path) -> dg.ExecuteInProcessResult:
    # A closed test instance, not a bare ephemeral one: Dagster keeps the last instance's state
    # storage process-wide, and a garbage-collected one broke the next test that loads defs.
    with dg.instance_for_test() as instance:
        return dg.materialize(
            [file_stages],
            resources={
                "paths": PipelinePaths(data_dir=str(export), work_dir=str(work)),
                "embedding_model": EmbeddingModel(backend="standin"),
            },
            instance=instance,
            raise_on_error=False,
        )


def _encoded_files(result: dg.ExecuteInProcessResult) -> set[str]:
    return {
        str(event.partition)
        for event in result.get_asset_materialization_events()
        if event.asset_key == CHUNK_EMBEDDINGS and event.partition
    }


def test_one_window_covers_the_files_and_writes_each_part(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    windows: list[list[str]] = []
    encode = chunk_embeddings.encode_pending

    def recording(files: Any, *args: Any, **kwargs: Any) -> int:
        windows.append([pending.rel_path for pending in files])
        return encode(files, *args, **kwargs)

    monkeypatch.setattr(chunk_embeddings, "encode_pending", recording)
    result = _run(export, tmp_path / "work")
    assert result.success
    files = _encoded_files(result)
    assert len(windows) == 1 and len(windows[0]) > 1
    assert set(windows[0]) == files
    assert len(list((tmp_path / "work" / "embeddings").glob("*.parquet"))) == len(files)
    summary = next(
        event.step_materialization_data.materialization.metadata
        for event in result.get_asset_materialization_events()
        if event.asset_key == CHUNK_EMBEDDINGS and not event.partition
    )
    assert 0 < summary["distinct_texts_encoded"].value <= summary["encoded"].value


def test_a_failed_window_fails_only_its_files(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_stages_module, "EMBED_WINDOW_TEXTS", 1)  # one file per window
    encode = chunk_embeddings.encode_pending
    doomed: list[str] = []
    seen: set[str] = set()

    def failing_once(files: Any, *args: Any, **kwargs: Any) -> int:
        seen.update(pending.rel_path for pending in files)
        if not doomed and any(pending.todo for pending in files):
            doomed.extend(pending.rel_path for pending in files)
            raise RuntimeError("the model fell over")
        return encode(files, *args, **kwargs)

    monkeypatch.setattr(chunk_embeddings, "encode_pending", failing_once)
    result = _run(export, tmp_path / "work")
    assert not result.success
    failure = next(event for event in result.all_events if event.is_step_failure)
    assert f"1 of {len(seen)} files failed" in str(failure.step_failure_data.error)
    assert len(doomed) == 1 and len(seen) > 2
    assert _encoded_files(result) == seen - set(doomed)


def test_the_run_lets_go_of_token_ids_no_window_encoded(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nara_kg.embedding.standin import StandinEmbedder

    forgotten: list[int] = []

    def forget(self: StandinEmbedder) -> None:
        forgotten.append(1)

    def failing(files: Any, *args: Any, **kwargs: Any) -> int:
        raise RuntimeError("the model fell over")

    monkeypatch.setattr(StandinEmbedder, "forget_token_ids", forget)
    monkeypatch.setattr(chunk_embeddings, "encode_pending", failing)
    result = _run(export, tmp_path / "work")
    assert not result.success
    assert forgotten == [1]  # once, at the end of the op, though every window failed


def test_files_are_prepared_two_at_a_time_and_a_bad_one_fails_alone(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from nara_kg.ingest.stages import chunks

    chunk_file = chunks.chunk_file
    threads: set[str] = set()
    seen: list[str] = []

    def flaky(file: Any, *args: Any, **kwargs: Any) -> Any:
        threads.add(threading.current_thread().name)
        seen.append(file.rel_path)
        if len(seen) == 2:
            raise ValueError("a broken part")
        return chunk_file(file, *args, **kwargs)

    monkeypatch.setattr(chunks, "chunk_file", flaky)
    result = _run(export, tmp_path / "work")
    assert not result.success
    failure = next(event for event in result.all_events if event.is_step_failure)
    assert f"1 of {len(seen)} files failed" in str(failure.step_failure_data.error)
    assert _encoded_files(result) == set(seen) - {seen[1]}
    assert len(threads) == file_stages_module.PREPARE_THREADS > 1
    assert all(name.startswith("file-stages") for name in threads)


def test_two_threads_report_what_one_thread_reports(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def summaries(result: dg.ExecuteInProcessResult) -> dict[str, dict[str, Any]]:
        assert result.success
        return {
            event.asset_key.to_user_string(): {
                name: value.value
                for name, value in event.step_materialization_data.materialization.metadata.items()
                if name not in ("seconds", "encoding_seconds", "chunks_per_second", "per_file")
                and "dir" not in name
            }
            for event in result.get_asset_materialization_events()
            if not event.partition
        }

    two = summaries(_run(export, tmp_path / "two"))
    monkeypatch.setattr(file_stages_module, "PREPARE_THREADS", 1)
    one = summaries(_run(export, tmp_path / "one"))
    assert two == one
    preview = two["chunks"]["preview"]
    assert len(preview.records) == file_stages_module.CHUNK_PREVIEW_ROWS


def test_no_file_is_prepared_while_a_window_encodes(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from nara_kg.ingest.stages import chunks

    monkeypatch.setattr(file_stages_module, "EMBED_WINDOW_TEXTS", 1)  # one file per window
    lock = threading.Lock()
    active = [0]
    during_encodes: list[int] = []
    chunk_file, encode = chunks.chunk_file, chunk_embeddings.encode_pending

    def counted(*args: Any, **kwargs: Any) -> Any:
        with lock:
            active[0] += 1
        try:
            return chunk_file(*args, **kwargs)
        finally:
            with lock:
                active[0] -= 1

    def encoding(files: Any, *args: Any, **kwargs: Any) -> int:
        during_encodes.append(active[0])
        return encode(files, *args, **kwargs)

    monkeypatch.setattr(chunks, "chunk_file", counted)
    monkeypatch.setattr(chunk_embeddings, "encode_pending", encoding)
    assert _run(export, tmp_path / "work").success
    assert len(during_encodes) > 2 and set(during_encodes) == {0}
