"""One way to open a driver, so every caller gets the same settings."""

from __future__ import annotations

from neo4j import Driver, GraphDatabase

from nara_kg.settings import Neo4jSettings

#: Seconds to open a TCP connection, and to get a usable connection at all (the Bolt handshake
#: included, which only the second bounds). The driver's defaults, 30 s and 60 s, are what a
#: request waited for a server that does not answer before it could be told so; a Neo4j that
#: is up hands out a connection in milliseconds, even when busy.
CONNECTION_TIMEOUT_S = 3.0
CONNECTION_ACQUISITION_TIMEOUT_S = 4.0


def open_driver(settings: Neo4jSettings) -> Driver:
    # Schema notifications (e.g. "relationship type does not exist yet" for an authority type
    # the data does not use) are expected here and would flood the run logs.
    return GraphDatabase.driver(
        settings.uri,
        auth=(settings.username, settings.password),
        notifications_min_severity="OFF",
        connection_timeout=CONNECTION_TIMEOUT_S,
        connection_acquisition_timeout=CONNECTION_ACQUISITION_TIMEOUT_S,
    )
