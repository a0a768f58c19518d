"""The composition root: one Definitions merged from each package's own.

`@dg.definitions` makes Dagster build it when the code location loads, not when this module is
imported, so the schedule's environment settings are read at load time.
"""

import dagster as dg

import graph_assets
import jobs
import quality
import resources
import schedules


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions.merge(
        graph_assets.defs,
        resources.defs,
        jobs.defs,
        schedules.build_defs(),
        quality.defs,
    )
