"""Jobs, and the executor they run on.

* ``kg_file_stages``: the per-file stages of the partitions it is given (one, a range, or a
  backfill's); what the input sensor requests for each new or changed file.
* ``kg_graph``: the graph-wide stages, once, over every parsed file.
* ``kg_incremental``: everything, skipping what did not change (content hashes, differences
  with Neo4j, the generation cache); the nightly schedule's job.
* ``kg_full_rebuild``: everything, with the per-file stages recomputing every file (re-parse,
  re-chunk, re-embed) and the graph rewritten from them.
* ``kg_evaluation``: the retrieval evaluation over the current graph.

A job launched without a partition (e.g. ``dagster job execute -j kg_full_rebuild``) runs the
per-file stages over every file of the export; with a partition or range, over those files.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import dagster as dg

from graph_assets import ALL_ASSETS, FILE_ASSETS, GRAPH_WIDE_ASSETS, retrieval_evaluation
from graph_assets.partitions import FULL, REBUILD_TAG

KG_FILE_STAGES = "kg_file_stages"
KG_GRAPH = "kg_graph"
KG_FULL_REBUILD = "kg_full_rebuild"
KG_INCREMENTAL = "kg_incremental"
KG_EVALUATION = "kg_evaluation"

#: NARA_KG_EXECUTOR: "multiprocess" (default: steps in parallel processes), "in_process", or
#: "k8s" (each step a Kubernetes job; needs dagster-k8s's run launcher, see deploy/).
EXECUTOR_ENV = "NARA_KG_EXECUTOR"
#: NARA_KG_MAX_CONCURRENT_STEPS: steps of one run in flight at once (multiprocess, k8s).
MAX_CONCURRENT_ENV = "NARA_KG_MAX_CONCURRENT_STEPS"
DEFAULT_MAX_CONCURRENT = 2
#: The code location's module (workspace.yaml, `dagster job execute -m`).
CODE_LOCATION_MODULE = "nara_kg.app.definitions"
#: What the multiprocess executor's forkserver imports before forking step processes: the code
#: location and the set-up every step repeats (see that module).
STEP_PRELOAD_MODULE = "nara_kg.app.step_preload"


def multiprocess_config(max_concurrent: int) -> dict[str, object]:
    """Step processes forked from a server that has imported the code location and opened the
    instance once. Spawned (Dagster's default), each step imports it again: 3.7 s here, so a
    no-change incremental build of the demo data took 111 s, against 33-35 s forked (60 s
    before the instance was opened in the server) and 13.5 s in one process.

    The server keeps the environment it started with: a process that launches several runs
    with different settings stops it between them (`nara_kg.app.launch.stop_step_forkserver`,
    which the CLI's and the benchmark's runs call)."""
    return {
        "max_concurrent": max_concurrent,
        "start_method": {"forkserver": {"preload_modules": [STEP_PRELOAD_MODULE]}},
    }


#: The executor's own setting: a run may ask for its steps in one process (run config
#: `execution: {config: {in_process: true}}`), which `nara-kg build` does for a small change.
IN_PROCESS = "in_process"


def steps_executor(max_concurrent: int) -> dg.ExecutorDefinition:
    """Forked step processes (:func:`multiprocess_config`), or, when the run asks, every step
    in the run's own process: a step after a small change takes less time than forking,
    opening the instance and the resources for it (the 0.1%-change build of the benchmark)."""

    @dg.configured(
        dg.multi_or_in_process_executor,
        config_schema={
            IN_PROCESS: dg.Field(
                bool,
                default_value=False,
                description="Run every step in the run's process, one after another.",
            )
        },
    )
    def multiprocess_or_one_process(config: dict[str, bool]) -> dict[str, object]:
        if config[IN_PROCESS]:
            return {"in_process": {}}
        return {"multiprocess": multiprocess_config(max_concurrent)}

    return multiprocess_or_one_process


def _executor_kind(source: Mapping[str, str]) -> str:
    return (source.get(EXECUTOR_ENV) or "multiprocess").strip().lower()


def one_process_run_config(env: Mapping[str, str] | None = None) -> dict[str, object]:
    """Run config asking :func:`steps_executor` for one process; empty with another executor
    (NARA_KG_EXECUTOR), whose runs keep their own placement."""
    if _executor_kind(os.environ if env is None else env) != "multiprocess":
        return {}
    return {"execution": {"config": {IN_PROCESS: True}}}


def executor(env: Mapping[str, str] | None = None) -> dg.ExecutorDefinition:
    source = os.environ if env is None else env
    kind = _executor_kind(source)
    concurrent = int(source.get(MAX_CONCURRENT_ENV) or DEFAULT_MAX_CONCURRENT)
    if kind == "multiprocess":
        return steps_executor(concurrent)
    if kind == "in_process":
        return dg.in_process_executor
    if kind == "k8s":
        from dagster_k8s import k8s_job_executor

        return k8s_job_executor.configured({"max_concurrent": concurrent})
    raise ValueError(f"{EXECUTOR_ENV}={kind!r}: use multiprocess, in_process or k8s")


ALL = dg.AssetSelection.assets(*ALL_ASSETS)
kg_file_stages = dg.define_asset_job(
    KG_FILE_STAGES,
    selection=dg.AssetSelection.assets(*FILE_ASSETS),
    description="Parse, chunk and embed the given files (partitions); unchanged files skip.",
)
kg_graph = dg.define_asset_job(
    KG_GRAPH,
    selection=dg.AssetSelection.assets(*GRAPH_WIDE_ASSETS),
    description=(
        "The graph-wide stages over every parsed file: one row per naId, nodes, vectors, "
        "indexes, relationships, communities and reports, written by difference."
    ),
)
kg_incremental = dg.define_asset_job(
    KG_INCREMENTAL,
    selection=ALL,
    description=(
        "Every asset, skipping what did not change: files by content hash, chunks and vectors "
        "by text and model, nodes and relationships by difference with Neo4j, reports by the "
        "generation cache. Records of files gone from the input leave the graph."
    ),
    tags={REBUILD_TAG: "incremental"},
)
kg_full_rebuild = dg.define_asset_job(
    KG_FULL_REBUILD,
    selection=ALL,
    description=(
        "Every asset, recomputing every file: re-scan, re-parse, re-chunk and re-embed all of "
        f"them (the run tag {REBUILD_TAG}={FULL}), then the graph-wide stages and the evaluation."
    ),
    tags={REBUILD_TAG: FULL},
)
kg_evaluation = dg.define_asset_job(
    KG_EVALUATION,
    selection=dg.AssetSelection.assets(retrieval_evaluation),
    description="Re-run the retrieval evaluation over the current graph.",
)
JOBS = [kg_file_stages, kg_graph, kg_incremental, kg_full_rebuild, kg_evaluation]


def build_defs(env: Mapping[str, str] | None = None) -> dg.Definitions:
    return dg.Definitions(jobs=JOBS, executor=executor(env))
