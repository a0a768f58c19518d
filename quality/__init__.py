"""Data-quality checks (Great Expectations suites and graph checks) as Dagster asset checks."""

import dagster as dg

defs = dg.Definitions()
