"""NARA_KG_EXECUTOR=k8s: every job runs each step in its own Kubernetes Job, and the embedding
step asks for a GPU (no cluster needed: this inspects the definitions only)."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from graph_assets.common import EMBEDDING_MODEL_POOL
from jobs import EXECUTOR_ENV, KG_EVALUATION, KG_FULL_REBUILD, KG_INCREMENTAL
from nara_kg.settings import PROJECT_ROOT

JOBS = (KG_FULL_REBUILD, KG_INCREMENTAL, KG_EVALUATION)


def _definitions() -> dg.Definitions:
    from nara_kg.app.definitions import defs

    return defs()


def test_default_executor_is_not_k8s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(EXECUTOR_ENV, raising=False)
    jobs = {job.name: job for job in _definitions().resolve_all_job_defs()}
    assert set(JOBS) <= set(jobs)
    assert all(job.executor_def.name != "k8s" for job in jobs.values())


def test_k8s_executor_selected_by_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EXECUTOR_ENV, "k8s")
    jobs = {job.name: job for job in _definitions().resolve_all_job_defs()}
    assert set(JOBS) <= set(jobs)
    executors = {name: job.executor_def.name for name, job in jobs.items()}
    assert set(executors.values()) == {"k8s"}, executors


def test_embedding_step_requests_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The asset(s) in the `embedding_model` pool carry the GPU limit in `dagster-k8s/config`."""
    from dagster_k8s.job import USER_DEFINED_K8S_CONFIG_KEY, get_user_defined_k8s_config

    monkeypatch.setenv(EXECUTOR_ENV, "k8s")
    graph = _definitions().resolve_asset_graph()
    embedding = [
        assets_def
        for assets_def in graph.assets_defs
        if assets_def.is_executable and assets_def.op.pool == EMBEDDING_MODEL_POOL
    ]
    assert embedding, f"no asset in the {EMBEDDING_MODEL_POOL!r} pool"
    for assets_def in embedding:
        tags = assets_def.op.tags
        assert USER_DEFINED_K8S_CONFIG_KEY in tags, (assets_def.key, tags)
        # Parsed and validated the way the k8s executor reads a step's tags.
        as_strings = {
            key: value if isinstance(value, str) else json.dumps(value)
            for key, value in tags.items()
        }
        config = get_user_defined_k8s_config(as_strings)
        limits = config.container_config.get("resources", {}).get("limits", {})
        assert str(limits.get("nvidia.com/gpu")) == "1", (assets_def.key, config.container_config)


def test_k8s_instance_config_is_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    """deploy/k8s/dagster.yaml passes Dagster's instance schema and the K8sRunLauncher's."""
    from dagster._config import validate_config
    from dagster._core.instance.config import dagster_instance_config
    from dagster_k8s import K8sRunLauncher

    for key in ("HOST", "PORT", "USER", "PASSWORD", "DB"):
        monkeypatch.setenv(f"DAGSTER_PG_{key}", "5432" if key == "PORT" else "x")
    config, _ = dagster_instance_config(str(PROJECT_ROOT / "deploy" / "k8s"))
    launcher = config["run_launcher"]
    assert (launcher["module"], launcher["class"]) == ("dagster_k8s", "K8sRunLauncher")
    result = validate_config(K8sRunLauncher.config_type(), launcher["config"])
    assert result.success, result.errors
    assert "postgres" in config["storage"]
