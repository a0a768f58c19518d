"""What every measurement shares: the log callback, rounding, peak RSS, a wiped database."""

from __future__ import annotations

import math
import resource
import sys
from typing import Any

from nara_kg.model.progress import Log as Log
from nara_kg.model.progress import quiet as quiet
from nara_kg.settings import Neo4jSettings


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def rounded(value: float | None, digits: int = 3) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), digits)


def wipe_database(driver: Any, database: str) -> None:
    """Everything out of the benchmark's database: nodes, constraints, indexes (but the
    built-in token lookup indexes), and any GDS projection of the pipeline."""
    with driver.session(database=database) as session:
        # Relationships first: a coarse community's node holds most records' IN_COMMUNITY, and
        # detaching it inside one batch of nodes exceeded the transaction memory pool at 10^5.
        session.run(
            "MATCH ()-[r]->() CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS"
        ).consume()
        session.run(
            "MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS"
        ).consume()
        for record in list(session.run("SHOW CONSTRAINTS YIELD name RETURN name")):
            session.run(f"DROP CONSTRAINT `{record['name']}` IF EXISTS").consume()
        indexes = session.run("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name")
        for record in list(indexes):
            session.run(f"DROP INDEX `{record['name']}` IF EXISTS").consume()


def open_driver(settings: Neo4jSettings) -> Any:
    from nara_kg.graph.connection import open_driver as _open

    driver = _open(settings)
    driver.verify_connectivity()
    return driver
