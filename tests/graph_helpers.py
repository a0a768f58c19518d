"""Helpers shared by the tests that build graphs in Neo4j."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg

from graph_assets import ALL_ASSETS
from graph_assets.common import materialization_metadata
from nara_kg.settings import Neo4jSettings
from resources import EmbeddingModel, LLMResource, Neo4jResource, PipelinePaths


def wipe(driver: Any) -> None:
    # CALL ... IN TRANSACTIONS needs an auto-commit transaction, hence session.run.
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()


def resources_for(
    settings: Neo4jSettings, data_dir: Path, work_dir: Path, questions: Path | None = None
) -> dict[str, Any]:
    """The resources of the Definitions, pointed at a test's own data and work directories."""
    return {
        "neo4j": Neo4jResource(
            uri="" if settings.managed else settings.uri,
            username=settings.username,
            password=settings.password,
            database=settings.database,
        ),
        "embedding_model": EmbeddingModel(),
        "llm": LLMResource(),
        "paths": PipelinePaths(
            data_dir=str(data_dir),
            work_dir=str(work_dir),
            questions_file=str(questions) if questions else "",
        ),
    }


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


def metadata_of(result: dg.ExecuteInProcessResult, asset: str) -> dict[str, Any]:
    found = materialization_metadata(result)
    assert asset in found, f"{asset} was not materialized"
    return found[asset]


def scalar(driver: Any, query: str, **params: Any) -> Any:
    records, _, _ = driver.execute_query(query, params)
    return records[0][0]
