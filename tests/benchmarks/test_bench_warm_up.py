"""Without the memory build, the suite warms Neo4j with a small untimed build before the timed
one; with the memory build (which warms it), or with 0 records asked for, it does not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks import suite
from benchmarks.options import SuiteOptions
from nara_kg.settings import Neo4jSettings


class _TimedBuildReached(Exception):
    pass


def _builds(monkeypatch: pytest.MonkeyPatch, options: SuiteOptions) -> list[tuple[str, int, str]]:
    """(data folder, records, model backend) of each build before the timed one."""
    generated: dict[str, int] = {}
    builds: list[tuple[str, int, str]] = []

    def generate(out_dir: Path, records: int, seed: int = 7) -> dict[str, Any]:
        generated[out_dir.name] = records
        return {"records": records}

    plain_encodes: list[str] = []

    def plain_encode(_settings: Any, data_dir: Path, _scratch: Path, **_: Any) -> dict[str, Any]:
        plain_encodes.append(data_dir.name)
        return {}

    def build(_settings: Any, data_dir: Path, _work: Path, **kwargs: Any) -> dict[str, Any]:
        if kwargs.get("embedding_check"):
            # The timed build comes right after the plain encode of its texts.
            assert plain_encodes == [data_dir.name]
            raise _TimedBuildReached
        assert kwargs["wipe"]
        builds.append((data_dir.name, generated[data_dir.name], kwargs["opts"].backend))
        return {}

    class _Driver:
        def close(self) -> None:
            pass

    monkeypatch.setattr(suite, "open_driver", lambda _settings: _Driver())
    monkeypatch.setattr(suite, "_environment", lambda *_: {})
    monkeypatch.setattr(suite, "generate_dataset", generate)
    monkeypatch.setattr(suite, "build_in_subprocess", build)
    monkeypatch.setattr(suite, "plain_encode_in_subprocess", plain_encode)
    monkeypatch.setattr(suite, "wipe_database", lambda *_: None)
    settings = Neo4jSettings("bolt://x", "neo4j", "pw", "neo4j", False)
    with pytest.raises(_TimedBuildReached):
        suite.run_suite(options, settings)
    return builds


def test_a_warm_up_build_comes_first_without_the_memory_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = SuiteOptions(records=1_000, scratch=tmp_path, memory=False, warm_up_records=120)
    # The warm-up warms Neo4j, not the model: the stand-in writes the same graph in seconds.
    assert _builds(monkeypatch, options) == [("data-warm-up", 120, "standin")]


@pytest.mark.parametrize(("memory", "warm_up"), [(True, 200), (False, 0)])
def test_no_warm_up_build_when_not_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory: bool, warm_up: int
) -> None:
    options = SuiteOptions(
        records=1_000, scratch=tmp_path, memory=memory, memory_records=250, warm_up_records=warm_up
    )
    expected = [("data-small", 250, options.backend)] if memory else []
    assert _builds(monkeypatch, options) == expected
