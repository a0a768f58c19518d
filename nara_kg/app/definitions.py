"""The composition root: one Definitions merged from each package's own.

`@dg.definitions` makes Dagster build it when the code location loads, not when this module is
imported, so the environment (resource bindings, executor, schedule) is read at load time.
"""

import os
import warnings

import dagster as dg

import graph_assets
import jobs
import quality
import resources
import schedules

# Backfill policies and code references are marked beta; the warning would repeat for every
# asset in every step process.
warnings.filterwarnings("ignore", category=dg.BetaWarning)


@dg.definitions
def defs() -> dg.Definitions:
    env = dict(os.environ)
    return dg.Definitions.merge(
        graph_assets.build_defs(schedules.rebuild_cron(env), schedules.rebuild_timezone(env)),
        resources.build_defs(env),
        jobs.build_defs(env),
        schedules.build_defs(env),
        quality.defs,
    )


def _job(name: str) -> dg.JobDefinition:
    return defs().resolve_job_def(name)


# Module-level job factories, so `dg.reconstructable` can rebuild a job in each step process
# of the multiprocess executor (the CLI and the benchmark launch the real jobs through them).
def kg_full_rebuild_job() -> dg.JobDefinition:
    return _job(jobs.KG_FULL_REBUILD)


def kg_incremental_job() -> dg.JobDefinition:
    return _job(jobs.KG_INCREMENTAL)


def kg_file_stages_job() -> dg.JobDefinition:
    return _job(jobs.KG_FILE_STAGES)
