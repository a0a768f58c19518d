"""One way to open a driver, so every caller gets the same settings."""

from __future__ import annotations

from neo4j import Driver, GraphDatabase

from nara_kg.settings import Neo4jSettings


def open_driver(settings: Neo4jSettings) -> Driver:
    # Schema notifications (e.g. "relationship type does not exist yet" for an authority type
    # the data does not use) are expected here and would flood the run logs.
    return GraphDatabase.driver(
        settings.uri,
        auth=(settings.username, settings.password),
        notifications_min_severity="OFF",
    )
