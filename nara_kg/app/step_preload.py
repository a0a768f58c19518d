"""What the multiprocess executor's forkserver does once, so that each step process it forks
starts with it done (`jobs.multiprocess_config` names this module in `preload_modules`).

Forked after importing only the code location, a step process still took 0.8-1.0 s before its
step began (a no-change build of the demo data): the first Dagster instance a process opens
imports and sets up its storage (0.5 s, against 0.12 s for the next one). Opened here once, the
step processes inherit that set-up: 0.15 s each, and the no-change build went from 42-48 s to
33-35 s. Great Expectations (3.5 s to import) is not preloaded: most runs (a file's stages, a
backfill's) run no suite, and the suites share one step (`quality.checks`).

Nothing is kept open: the instance is closed before any step is forked, so no SQLite or
PostgreSQL connection is shared between processes.
"""

from __future__ import annotations

import dagster as dg

from nara_kg.app import definitions  # noqa: F401 - the code location, as the executor needs it
from nara_kg.settings import configured_dagster_home


def _warm_instance() -> None:
    """Open and close the instance the steps will open (the one at DAGSTER_HOME)."""
    if configured_dagster_home() is None:
        return
    try:
        with dg.DagsterInstance.get():
            pass
    except Exception:  # only a head start: each step opens it itself and reports the error
        return


_warm_instance()
