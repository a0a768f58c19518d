"""Runs launched one after another by one process see that process's current environment in
their step processes, although the multiprocess executor forks them from a long-lived server."""

import os
from pathlib import Path

import dagster as dg
import pytest

from nara_kg.app.launch import stop_step_forkserver

PROBE_ENV = "NARA_KG_TEST_FORKSERVER_PROBE"


@dg.op
def write_probe(context: dg.OpExecutionContext) -> None:
    out = Path(context.run.tags["out"])
    out.write_text(os.environ.get(PROBE_ENV, ""), encoding="utf-8")


@dg.job(executor_def=dg.multiprocess_executor.configured({"start_method": {"forkserver": {}}}))
def probe_job() -> None:
    write_probe()


def _seen_by_step(instance: dg.DagsterInstance, out: Path) -> str:
    job = dg.reconstructable(probe_job)
    with dg.execute_job(job, instance=instance, tags={"out": str(out)}) as result:
        assert result.success
    return out.read_text(encoding="utf-8")


def test_a_stopped_forkserver_gives_the_next_run_the_current_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop_step_forkserver()
    with dg.instance_for_test() as instance:
        monkeypatch.setenv(PROBE_ENV, "first")
        assert _seen_by_step(instance, tmp_path / "1") == "first"
        monkeypatch.setenv(PROBE_ENV, "second")
        # The server forked the first run's step and still has the first environment.
        assert _seen_by_step(instance, tmp_path / "2") == "first"
        stop_step_forkserver()
        assert _seen_by_step(instance, tmp_path / "3") == "second"
    stop_step_forkserver()


def test_each_run_that_nara_kg_launches_stops_the_forkserver_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nara_kg.app import launch

    stopped: list[bool] = []

    def failing_run(*_: object, **__: object) -> None:
        raise RuntimeError("the run broke")

    monkeypatch.setattr(launch.dg, "execute_job", failing_run)
    monkeypatch.setattr(launch, "stop_step_forkserver", lambda: stopped.append(True))
    with pytest.raises(RuntimeError, match="the run broke"):
        launch._execute(launch.KG_INCREMENTAL, None, {}, {})  # type: ignore[arg-type]
    assert stopped == [True]
