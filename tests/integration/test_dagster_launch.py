"""The code location runs under Dagster's own launcher with its documented defaults: no project
environment variable but the data folder (and, for the local server, the password)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from graph_assets import FILE_SPECS
from graph_assets.partitions import FULL, INPUT_FILES_PARTITIONS, REBUILD_TAG
from jobs import KG_FULL_REBUILD
from nara_kg.demo import generate_demo_data
from nara_kg.settings import PROJECT_ROOT
from tests.graph_helpers import scalar, wipe

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

#: Where the test's Neo4j is, when it is not the documented default (CI may move the port).
SERVER_LOCATION = ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_DATABASE", "NARA_KG_BOLT_PORT")


def test_dagster_job_execute_kg_full_rebuild_with_documented_defaults(
    tmp_path: Path, neo4j_driver: Any, neo4j_settings: Any
) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=60, seed=4)
    home = tmp_path / "dagster_home"
    home.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "DAGSTER_HOME": str(home),
        "NARA_DATA_DIR": str(data),
        "NEO4J_PASSWORD": neo4j_settings.password,
        **{key: os.environ[key] for key in SERVER_LOCATION if os.environ.get(key)},
    }
    wipe(neo4j_driver)
    command = [
        sys.executable,
        "-m",
        "dagster",
        "job",
        "execute",
        "-m",
        "nara_kg.app.definitions",
        "-j",
        KG_FULL_REBUILD,
    ]
    done = subprocess.run(
        command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "RUN_SUCCESS" in done.stdout + done.stderr
    with dg.DagsterInstance.from_config(str(home)) as instance:
        [run] = instance.get_runs()
        assert run.status == dg.DagsterRunStatus.SUCCESS
        assert run.tags[REBUILD_TAG] == FULL
        files = set(instance.get_dynamic_partitions(INPUT_FILES_PARTITIONS))
        assert len(files) >= 5
        for spec in FILE_SPECS:  # every file shows as a materialized partition
            assert set(instance.get_materialized_partitions(spec.key)) == files
    assert (
        scalar(neo4j_driver, "MATCH (c:Chunk {chunkSeqId: 0}) WHERE NOT c.isStub RETURN count(c)")
        == 60
    )
    assert scalar(neo4j_driver, "MATCH (c:Community) RETURN count(c)") > 0
