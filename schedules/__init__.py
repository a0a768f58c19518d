"""The nightly rebuild."""

import dagster as dg

from jobs import kg_full_rebuild

NIGHTLY_REBUILD = "nightly_kg_rebuild"

nightly_rebuild = dg.ScheduleDefinition(
    name=NIGHTLY_REBUILD,
    job=kg_full_rebuild,
    cron_schedule="0 2 * * *",
    execution_timezone="UTC",
    description="Rebuild the knowledge graph every night; unchanged work is skipped.",
    default_status=dg.DefaultScheduleStatus.STOPPED,
)

defs = dg.Definitions(schedules=[nightly_rebuild])
