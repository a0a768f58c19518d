"""Per-file partitions against the real Neo4j: a failed file leaves the others materialized,
re-running only it completes the graph (equal, by fingerprint, to a one-shot build), and a
file deleted from the input takes its partition and its records with it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from graph_assets import FILE_SPECS
from graph_assets.partitions import INPUT_FILES_PARTITIONS, sync_file_partitions
from jobs import KG_FILE_STAGES, KG_GRAPH
from nara_kg.app.definitions import defs
from nara_kg.demo import generate_demo_data
from nara_kg.graph.fingerprint import graph_fingerprint
from nara_kg.ingest.inputs import file_id_of
from nara_kg.ingest.layout import WorkLayout
from resources import resource_run_config
from schedules import RANGE_END, RANGE_START
from tests.graph_helpers import scalar, wipe

pytestmark = pytest.mark.integration

FILE_KEYS = [spec.key for spec in FILE_SPECS]


def run_job(
    instance: dg.DagsterInstance,
    name: str,
    data: Path,
    work: Path,
    *,
    partitions: tuple[str, str] | None = None,
) -> dg.ExecuteInProcessResult:
    """One run of a job of the Definitions, in the given instance, on a test's own folders."""
    tags = {RANGE_START: partitions[0], RANGE_END: partitions[1]} if partitions else {}
    return (
        defs()
        .resolve_job_def(name)
        .execute_in_process(
            instance=instance,
            tags=tags,
            run_config=resource_run_config("paths", data_dir=str(data), work_dir=str(work)),
            raise_on_error=False,
        )
    )


def materialized(instance: dg.DagsterInstance) -> dict[str, set[str]]:
    return {
        key.to_user_string(): set(instance.get_materialized_partitions(key)) for key in FILE_KEYS
    }


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("partitions") / "data"
    generate_demo_data(data, records=120, seed=11, shard_lines=12)
    return data


def test_failed_file_resumes_to_the_one_shot_graph_and_deleted_file_leaves(
    export: Path, tmp_path: Path, neo4j_driver: Any, graph_builder: Any
) -> None:
    data = tmp_path / "data"
    shutil.copytree(export, data)
    work = tmp_path / "work"
    wipe(neo4j_driver)
    with dg.instance_for_test() as instance:
        keys = sync_file_partitions(instance, data).added
        assert len(keys) >= 10
        # One file disappears while its partition exists: it is skipped with a warning (the
        # run succeeds), the others are done.
        victim = keys[len(keys) // 2]
        hidden = tmp_path / "hidden.jsonl"
        (data / victim).rename(hidden)
        first = run_job(instance, KG_FILE_STAGES, data, work, partitions=(keys[0], keys[-1]))
        assert first.success
        parsed = {rel for rel in keys if WorkLayout(work).parse_stats(file_id_of(rel)).exists()}
        assert parsed == set(keys) - {victim}
        # Back in place: re-running only that partition completes the per-file stages.
        hidden.rename(data / victim)
        retry = run_job(instance, KG_FILE_STAGES, data, work, partitions=(victim, victim))
        assert retry.success
        assert all(done == set(keys) for done in materialized(instance).values())
        assert run_job(instance, KG_GRAPH, data, work).success
        resumed = graph_fingerprint(neo4j_driver, "neo4j")

        # One-shot: every asset in one run without partitions, from scratch.
        graph_builder(data, tmp_path / "work-one-shot", wipe_first=True)
        assert graph_fingerprint(neo4j_driver, "neo4j") == resumed

        # A deleted file: its partition goes, and so do its records and its parts.
        wipe(neo4j_driver)
        assert run_job(instance, KG_GRAPH, data, work).success
        assert graph_fingerprint(neo4j_driver, "neo4j") == resumed
        gone = next(k for k in keys if k.startswith("descriptions/"))
        na_ids = [
            json.loads(line)["record"]["naId"] for line in (data / gone).read_text().splitlines()
        ]
        assert scalar(
            neo4j_driver, "MATCH (c:Chunk) WHERE c.naId IN $ids RETURN count(c)", ids=na_ids
        )
        (data / gone).unlink()
        sync = sync_file_partitions(instance, data)
        assert sync.removed == [gone]
        assert gone not in instance.get_dynamic_partitions(INPUT_FILES_PARTITIONS)
        assert run_job(instance, KG_GRAPH, data, work).success
        left = scalar(
            neo4j_driver,
            "MATCH (c:Chunk) WHERE c.naId IN $ids AND NOT c.isStub RETURN count(c)",
            ids=na_ids,
        )
        assert left == 0
        layout = WorkLayout(work)
        assert not any(path.exists() for path in layout.per_file_paths(file_id_of(gone)))
