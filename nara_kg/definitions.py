"""The composition root: one Definitions merged from each package's own."""

import dagster as dg

import graph_assets
import jobs
import quality
import resources
import schedules

defs = dg.Definitions.merge(
    graph_assets.defs,
    resources.defs,
    jobs.defs,
    schedules.defs,
    quality.defs,
)
