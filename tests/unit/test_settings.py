"""Settings: each default written once, each variable read when it is asked for."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nara_kg import settings
from nara_kg.devserver.config import render_conf


def test_defaults_when_unset() -> None:
    assert settings.neo4j_heap_size({}) == settings.DEFAULT_NEO4J_HEAP
    assert settings.neo4j_pagecache_size({}) == settings.DEFAULT_NEO4J_PAGECACHE
    assert settings.neo4j_home({}) == settings.DEFAULT_NEO4J_HOME.resolve()
    assert settings.model_cache_dir({}) == settings.DEFAULT_MODEL_CACHE
    assert settings.java_home({}) is None


def test_the_pipeline_folders_default_to_the_settings() -> None:
    from resources import PipelinePaths, build_resources

    paths = build_resources({})["paths"]
    assert isinstance(paths, PipelinePaths)
    assert paths.data_path == settings.DEFAULT_DATA_DIR.resolve()
    assert paths.layout.root == settings.DEFAULT_WORK_DIR.resolve()


def test_leiden_seeding_is_a_field_of_the_paths_resource_off_by_default() -> None:
    from resources import PipelinePaths, build_resources

    variable = settings.RESOURCE_VARIABLES["paths"]["leiden_seeded"]
    assert build_resources({})["paths"].leiden_seeded is False
    seeded = build_resources({variable: "1"})["paths"]
    assert isinstance(seeded, PipelinePaths) and seeded.leiden_seeded is True
    assert build_resources({variable: "0"})["paths"].leiden_seeded is False


def test_blank_values_mean_the_default() -> None:
    blank = {"NARA_KG_NEO4J_HEAP": " ", "NARA_KG_MODEL_CACHE": "", "JAVA_HOME": ""}
    assert settings.neo4j_heap_size(blank) == settings.DEFAULT_NEO4J_HEAP
    assert settings.model_cache_dir(blank) == settings.DEFAULT_MODEL_CACHE
    assert settings.java_home(blank) is None


def test_read_at_call_time(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NARA_KG_NEO4J_HEAP", "3g")
    monkeypatch.setenv("NARA_KG_NEO4J_PAGECACHE", "512m")
    monkeypatch.setenv("NARA_KG_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    assert settings.neo4j_heap_size() == "3g"
    assert settings.neo4j_pagecache_size() == "512m"
    assert settings.model_cache_dir() == tmp_path / "models"
    assert settings.java_home() == tmp_path / "jdk"
    conf = render_conf(settings.Neo4jSettings.from_env({}), tmp_path)
    assert "server.memory.heap.max_size=3g" in conf
    assert "server.memory.pagecache.size=512m" in conf


def test_dagster_home_exports_its_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    assert settings.dagster_home() == settings.DEFAULT_DAGSTER_HOME
    assert os.environ["DAGSTER_HOME"] == str(settings.DEFAULT_DAGSTER_HOME)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    assert settings.dagster_home() == tmp_path
