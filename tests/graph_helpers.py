"""Helpers shared by the tests that build graphs in Neo4j."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg

from graph_assets import ALL_ASSETS
from graph_assets.common import plain_metadata
from nara_kg.settings import Neo4jSettings
from resources import build_resources

#: Set to 1 to let the tests wipe the database that NEO4J_URI names (a test server of yours).
ALLOW_WIPE_ENV = "NARA_KG_TESTS_MAY_WIPE"


def may_wipe(settings: Neo4jSettings, env: Mapping[str, str] | None = None) -> bool:
    """Only the project's own local server, or a server the user lends to the tests."""
    source = os.environ if env is None else env
    return settings.managed or source.get(ALLOW_WIPE_ENV) == "1"


def wipe(driver: Any) -> None:
    """Delete every node. Refuses any database but the project's own local server (or one
    lent with NARA_KG_TESTS_MAY_WIPE=1), so a test run can never empty someone's graph."""
    settings = Neo4jSettings.from_env()
    if not may_wipe(settings):
        raise RuntimeError(
            f"the tests would delete every node of {settings.uri} ({settings.database}); they "
            f"only wipe the project's local server. Set {ALLOW_WIPE_ENV}=1 to lend them this one."
        )
    # CALL ... IN TRANSACTIONS needs an auto-commit transaction, hence session.run.
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()


def resources_for(
    settings: Neo4jSettings, data_dir: Path, work_dir: Path, questions: Path | None = None
) -> dict[str, Any]:
    """The resources of the Definitions, pointed at a test's own data and work directories."""
    return build_resources(
        neo4j={
            "uri": "" if settings.managed else settings.uri,
            "username": settings.username,
            "password": settings.password,
            "database": settings.database,
        },
        paths={
            "data_dir": str(data_dir),
            "work_dir": str(work_dir),
            "questions_file": str(questions) if questions else "",
        },
    )


def materialize(
    settings: Neo4jSettings, data_dir: Path, work_dir: Path, questions: Path | None = None
) -> dg.ExecuteInProcessResult:
    """Every asset, in process, with the Definitions' own assets and the given paths."""
    result = dg.materialize(
        ALL_ASSETS,
        resources=resources_for(settings, data_dir, work_dir, questions),
        raise_on_error=False,
    )
    failures = [event.message for event in result.all_events if event.is_failure]
    assert result.success, failures
    return result


def materialization_metadata(result: dg.ExecuteInProcessResult) -> dict[str, dict[str, Any]]:
    """asset key -> the metadata of its run-level materialization (plain values)."""
    found: dict[str, dict[str, Any]] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        metadata = plain_metadata(materialization.metadata)
        if "seconds" in metadata:  # not a per-file record of a run without partitions
            found[materialization.asset_key.to_user_string()] = metadata
    return found


def readable(metadata: Any) -> dict[str, Any]:
    """Metadata values as plain values, tables as the JSON text of their rows (so a test can
    look for a value in them)."""
    return {
        key: json.dumps(value, default=str) if isinstance(value, list) else value
        for key, value in plain_metadata(metadata).items()
    }


def metadata_of(result: dg.ExecuteInProcessResult, asset: str) -> dict[str, Any]:
    found = materialization_metadata(result)
    assert asset in found, f"{asset} was not materialized"
    return found[asset]


def scalar(driver: Any, query: str, **params: Any) -> Any:
    records, _, _ = driver.execute_query(query, params)
    return records[0][0]
