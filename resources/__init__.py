"""Dagster resources: Neo4j, the embedding model and the pipeline's paths, bound to EnvVar."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dagster as dg
from neo4j import Driver
from pydantic import PrivateAttr

from nara_kg.embedding import DEFAULT_MODEL, Embedder
from nara_kg.graph.connection import open_driver
from nara_kg.layout import WorkLayout
from nara_kg.settings import LOCAL_DEFAULT_PASSWORD, Neo4jSettings


class Neo4jResource(dg.ConfigurableResource):
    """A Bolt connection. An empty `uri` means the project's managed local server."""

    uri: str = ""
    username: str = "neo4j"
    password: str = LOCAL_DEFAULT_PASSWORD
    database: str = "neo4j"

    _driver: Driver | None = PrivateAttr(default=None)

    @property
    def settings(self) -> Neo4jSettings:
        return Neo4jSettings.from_env(
            {
                # The local port of the managed server (NARA_KG_BOLT_PORT) still comes from
                # the run's environment; the connection fields come from this resource.
                **os.environ,
                "NEO4J_URI": self.uri,
                "NEO4J_USERNAME": self.username,
                "NEO4J_PASSWORD": self.password,
                "NEO4J_DATABASE": self.database,
            }
        )

    def get_driver(self) -> Driver:
        """The driver, created on first use and verified, with a hint when nothing answers."""
        if self._driver is None:
            settings = self.settings
            driver = open_driver(settings)
            try:
                driver.verify_connectivity()
            except Exception as error:
                driver.close()
                hint = (
                    "start the local server with `nara-kg neo4j start`"
                    if settings.managed
                    else "check NEO4J_URI, NEO4J_USERNAME and NEO4J_PASSWORD"
                )
                raise dg.Failure(
                    description=f"cannot reach Neo4j at {settings.uri}: {error}; {hint}"
                ) from error
            self._driver = driver
        return self._driver

    def get_gds(self) -> Any:
        """The `graphdatascience` client over the same driver. Open GDS has no Arrow server,
        so Arrow is off rather than probed (`gds.debug.arrow` does not exist there)."""
        from graphdatascience import GraphDataScience

        return GraphDataScience(self.get_driver(), database=self.database, arrow=False)

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None


class EmbeddingModel(dg.ConfigurableResource):
    """The sentence-transformers model: bundled all-MiniLM-L6-v2 or a local model directory."""

    model: str = DEFAULT_MODEL
    backend: str = "torch"
    device: str = "cpu"
    batch_size: int = 64

    _embedder: Embedder | None = PrivateAttr(default=None)

    def get_embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = Embedder(
                model=self.model,
                device=self.device,
                backend=self.backend,
                batch_size=self.batch_size,
            )
        return self._embedder


LLM_BACKENDS = ("extractive", "openai", "transformers")


class LLMResource(dg.ConfigurableResource):
    """Text generation for community reports, answers and global search."""

    backend: str = "extractive"
    model: str = ""
    base_url: str = ""
    api_key: str = ""
    timeout_s: float = 60.0
    max_retries: int = 4
    max_concurrency: int = 4
    temperature: float = 0.0

    def get_llm(self) -> Any:
        from nara_kg import llm

        if self.backend == "extractive":
            return llm.ExtractiveLLM()
        if self.backend == "openai":
            if not self.base_url or not self.model:
                raise dg.Failure(
                    "the openai backend needs NARA_KG_LLM_BASE_URL and NARA_KG_LLM_MODEL"
                )
            return llm.OpenAICompatibleLLM(
                self.base_url,
                self.model,
                self.api_key or None,
                timeout_s=self.timeout_s,
                max_retries=self.max_retries,
                max_concurrency=self.max_concurrency,
                temperature=self.temperature,
            )
        if self.backend == "transformers":
            if not self.model:
                raise dg.Failure("the transformers backend needs NARA_KG_LLM_MODEL (a local path)")
            return llm.TransformersLLM(self.model, temperature=self.temperature)
        raise dg.Failure(f"unknown LLM backend {self.backend!r}; use one of {LLM_BACKENDS}")


class PipelinePaths(dg.ConfigurableResource):
    """Where the input export is read from and where the stages keep their Parquet."""

    data_dir: str
    work_dir: str
    questions_file: str = ""

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir).expanduser().resolve()

    @property
    def layout(self) -> WorkLayout:
        return WorkLayout(Path(self.work_dir).expanduser().resolve())

    @property
    def llm_cache_path(self) -> Path:
        """Generations are cached beside the work data, so a rebuild reuses them."""
        return self.layout.root / "llm_cache.sqlite"

    @property
    def questions_path(self) -> Path:
        if self.questions_file:
            return Path(self.questions_file).expanduser().resolve()
        return self.data_path / "questions.jsonl"


def resource_defs() -> dict[str, Any]:
    return {
        "neo4j": Neo4jResource(
            uri=dg.EnvVar("NEO4J_URI"),
            username=dg.EnvVar("NEO4J_USERNAME"),
            password=dg.EnvVar("NEO4J_PASSWORD"),
            database=dg.EnvVar("NEO4J_DATABASE"),
        ),
        "embedding_model": EmbeddingModel(
            model=dg.EnvVar("NARA_KG_EMBEDDING_MODEL"),
            backend=dg.EnvVar("NARA_KG_EMBEDDING_BACKEND"),
        ),
        "llm": LLMResource(
            backend=dg.EnvVar("NARA_KG_LLM_BACKEND"),
            model=dg.EnvVar("NARA_KG_LLM_MODEL"),
            base_url=dg.EnvVar("NARA_KG_LLM_BASE_URL"),
            api_key=dg.EnvVar("NARA_KG_LLM_API_KEY"),
        ),
        "paths": PipelinePaths(
            data_dir=dg.EnvVar("NARA_DATA_DIR"),
            work_dir=dg.EnvVar("NARA_KG_WORK_DIR"),
            questions_file=dg.EnvVar("NARA_KG_QUESTIONS"),
        ),
    }


defs = dg.Definitions(resources=resource_defs())
