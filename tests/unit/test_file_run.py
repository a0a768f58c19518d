"""`run_file_stages` encodes several files' texts together (a window), writes each file's own
vector part, prepares files two at a time in file order, and isolates failures: a file that
fails, or a window whose encode fails, fails alone and the others finish."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from benchmarks.data import generate_dataset
from benchmarks.incremental import edit_lines, export_files
from nara_kg.embedding.standin import StandinEmbedder
from nara_kg.ingest.inputs import list_input_paths
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.records import DEFAULT_MAX_BODY_CHARS
from nara_kg.ingest.stages import chunk_embeddings, chunks, file_run
from nara_kg.ingest.stages.common import read_json, write_json
from nara_kg.ingest.stages.file_run import (
    CHUNK_EMBEDDINGS,
    FileStagesOutcome,
    ProgressLine,
    run_file_stages,
)


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("export")
    generate_dataset(data, 300)
    return data


def _run(export: Path, work: Path, files: list[str] | None = None) -> FileStagesOutcome:
    return run_file_stages(
        list_input_paths(export) if files is None else files,
        data_dir=export,
        layout=WorkLayout(work),
        embedder=StandinEmbedder(),
        max_body_chars=DEFAULT_MAX_BODY_CHARS,
    )


def _encoded_files(outcome: FileStagesOutcome) -> set[str]:
    return {work.rel_path for work in outcome.done if CHUNK_EMBEDDINGS in work.reported}


def test_one_window_covers_the_files_and_writes_each_part(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    windows: list[list[str]] = []
    encode = chunk_embeddings.encode_pending

    def recording(files: Any, *args: Any, **kwargs: Any) -> int:
        windows.append([pending.rel_path for pending in files])
        return encode(files, *args, **kwargs)

    monkeypatch.setattr(chunk_embeddings, "encode_pending", recording)
    outcome = _run(export, tmp_path / "work")
    assert outcome.failed == {}
    files = _encoded_files(outcome)
    assert files == set(outcome.files) and len(files) > 1
    assert len(windows) == 1 and set(windows[0]) == files
    assert len(list(WorkLayout(tmp_path / "work").vectors_dir.glob("*.parquet"))) == len(files)
    encoded = sum(row["encoded"] for row in outcome.rows[CHUNK_EMBEDDINGS])
    assert 0 < outcome.texts_encoded <= encoded


def test_a_failed_window_fails_only_its_files(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_run, "EMBED_WINDOW_TEXTS", 1)  # one file per window
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
    outcome = _run(export, tmp_path / "work")
    assert len(doomed) == 1 and len(seen) > 2
    assert outcome.failed == {doomed[0]: "RuntimeError: the model fell over"}
    assert _encoded_files(outcome) == seen - set(doomed)


def test_a_run_of_one_file_raises_its_own_error(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(files: Any, *args: Any, **kwargs: Any) -> int:
        raise RuntimeError("the model fell over")

    monkeypatch.setattr(chunk_embeddings, "encode_pending", failing)
    with pytest.raises(RuntimeError, match="the model fell over"):
        _run(export, tmp_path / "work", list_input_paths(export)[:1])


def test_the_run_lets_go_of_token_ids_no_window_encoded(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forgotten: list[int] = []

    def forget(self: StandinEmbedder) -> None:
        forgotten.append(1)

    def failing(files: Any, *args: Any, **kwargs: Any) -> int:
        raise RuntimeError("the model fell over")

    monkeypatch.setattr(StandinEmbedder, "forget_token_ids", forget)
    monkeypatch.setattr(chunk_embeddings, "encode_pending", failing)
    outcome = _run(export, tmp_path / "work")
    assert set(outcome.failed) == set(outcome.files) and not outcome.done
    assert forgotten == [1]  # once, at the end of the run, though every window failed


def test_files_are_prepared_two_at_a_time_and_a_bad_one_fails_alone(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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
    outcome = _run(export, tmp_path / "work")
    assert outcome.failed == {seen[1]: "ValueError: a broken part"}
    assert _encoded_files(outcome) == set(seen) - {seen[1]}
    assert len(threads) == file_run.PREPARE_THREADS > 1
    assert all(name.startswith("file-stages") for name in threads)


def _totals(outcome: FileStagesOutcome) -> dict[str, Any]:
    """The outcome's figures, timings left out."""
    timings = {"seconds", "encoding_seconds", "chunks_per_second"}
    return {
        "done": [work.rel_path for work in outcome.done],
        "rows": {
            stage: [{k: v for k, v in row.items() if k not in timings} for row in rows]
            for stage, rows in outcome.rows.items()
        },
        "by_type": outcome.by_type,
        "reasons": outcome.reasons,
        "cut": outcome.cut,
        "chunks": outcome.chunk_total,
        "texts_encoded": outcome.texts_encoded,
    }


def test_two_threads_report_what_one_thread_reports(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    two = _run(export, tmp_path / "two")
    monkeypatch.setattr(file_run, "PREPARE_THREADS", 1)
    one = _run(export, tmp_path / "one")
    assert _totals(two) == _totals(one)
    assert len(two.chunk_total.preview) == file_run.CHUNK_PREVIEW_ROWS


def test_no_file_is_prepared_while_a_window_encodes(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_run, "EMBED_WINDOW_TEXTS", 1)  # one file per window
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
    assert _run(export, tmp_path / "work").failed == {}
    assert len(during_encodes) > 2 and set(during_encodes) == {0}


def test_only_the_stages_asked_for_are_reported(export: Path, tmp_path: Path) -> None:
    """The stages before a reported one run (their parts are written), but are not reported;
    nothing is encoded when chunk_embeddings is not asked for."""
    layout = WorkLayout(tmp_path / "work")
    outcome = run_file_stages(
        list_input_paths(export),
        data_dir=export,
        layout=layout,
        embedder=StandinEmbedder(),
        max_body_chars=DEFAULT_MAX_BODY_CHARS,
        stages=[file_run.CHUNKS],
    )
    assert outcome.stages == (file_run.CHUNKS,) and set(outcome.rows) == {file_run.CHUNKS}
    assert all(set(work.reported) == {file_run.CHUNKS} for work in outcome.done)
    assert len(list(layout.parsed_dir.glob("*.records.parquet"))) == len(outcome.files)
    assert len(list(layout.chunks_dir.glob("*.chunks.parquet"))) == len(outcome.files)
    assert not list(layout.vectors_dir.glob("*.parquet"))


def test_a_finished_file_keeps_its_figures_but_not_its_texts_or_vectors(
    export: Path, tmp_path: Path
) -> None:
    outcome = _run(export, tmp_path / "work")
    assert outcome.failed == {} and len(outcome.done) > 1
    assert all(work.pending is None for work in outcome.done)
    assert all(CHUNK_EMBEDDINGS in work.reported for work in outcome.done)


def test_stats_written_before_stubs_were_counted_apart_are_recounted_not_rechunked(
    export: Path, tmp_path: Path
) -> None:
    """A work folder from before `stubs`: its chunk stats counted stubs among the records. An
    unchanged file keeps its part (nothing chunked again) and reports the recounted figures."""
    work = tmp_path / "work"
    first = _run(export, work)
    layout = WorkLayout(work)
    rows = {row["file"]: row for row in first.rows[file_run.CHUNKS]}
    assert sum(row["stubs"] for row in rows.values()) > 0
    for path in layout.chunks_dir.glob("*.chunks.parquet"):
        stats_path = layout.chunk_stats(path.name.removesuffix(".chunks.parquet"))
        known = read_json(stats_path)
        assert known is not None
        stats = dict(known["stats"])
        old_by_type = dict(stats["by_type"], stub=stats.pop("stubs"))
        stats["records"] += old_by_type["stub"]
        write_json(stats_path, {**known, "stats": {**stats, "by_type": old_by_type}})
    parts = {p: p.stat().st_mtime_ns for p in layout.chunks_dir.glob("*.parquet")}
    again = _run(export, work)
    assert {p: p.stat().st_mtime_ns for p in parts} == parts
    for row in again.rows[file_run.CHUNKS]:
        assert not row["chunked"]
        assert (row["records"], row["stubs"]) == (
            rows[row["file"]]["records"],
            rows[row["file"]]["stubs"],
        )
    assert again.chunk_total.by_type == first.chunk_total.by_type


def test_a_window_holds_only_files_with_texts_to_encode(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose vectors are all kept is written (or found current) as soon as it is read:
    an unchanged run encodes no window, and a run with one changed file encodes a window of
    that file alone. (A run over 4,839 unchanged files held all their vectors: 8.4 GB.)"""
    data, work = tmp_path / "export", tmp_path / "work"
    shutil.copytree(export, data)
    first = _run(data, work)
    windows: list[list[str]] = []
    embed = file_run._Run.embed

    def recording(self: Any, window: list[chunk_embeddings.PendingVectors]) -> None:
        windows.append([pending.rel_path for pending in window])
        embed(self, window)

    monkeypatch.setattr(file_run._Run, "embed", recording)
    again = _run(data, work)
    assert windows == []
    assert {row["file"]: row["reused"] for row in again.rows[CHUNK_EMBEDDINGS]} == {
        row["file"]: row["chunks"] for row in first.rows[CHUNK_EMBEDDINGS]
    }
    edited = export_files(data)[-1]
    lines, _ = edit_lines(edited.read_text(encoding="utf-8").splitlines(), 1)
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    changed = _run(data, work)
    assert windows == [[str(edited.relative_to(data))]]
    assert not changed.failed
    assert len(changed.rows[CHUNK_EMBEDDINGS]) == len(first.rows[CHUNK_EMBEDDINGS])


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, msg: str) -> None:
        self.lines.append(msg)

    debug = warning = error = info


def test_the_progress_line_comes_every_so_many_files_even_when_a_window_settles_several() -> None:
    log = _Lines()
    progress = ProgressLine(log, 12)
    for count in (1, 2, 3):  # kept files
        progress.settled(count, every=4)
    progress.settled(6, every=1)  # a window of three files
    for count in range(7, 13):
        progress.settled(count, every=4)
    # A line on a multiple of 4 would give 8 and 12, two files after the window's line.
    assert log.lines == [
        "file stages: 6/12 files done",
        "file stages: 10/12 files done",
    ]
