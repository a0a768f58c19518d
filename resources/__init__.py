"""Dagster resources: Neo4j, the embedding model, the LLM and the pipeline's paths.

Each resource makes its client with the core's own constructor (`Neo4jSettings.resolve`,
`make_embedder`, the LLM classes), so its field defaults are the core's constants and the
"empty URI means the local server" rule is the core's. `build_resources` is the one way to make
them (the Definitions, the CLI, the benchmark and the tests): a field whose environment variable
(`nara_kg.settings.RESOURCE_VARIABLES`) is set is bound to it with `EnvVar` (resolved when a run
starts, never at import), and an unset variable leaves the default, so the code location loads
and runs under any launcher. They raise the project's errors (`nara_kg.errors`); an asset
reports those as a Dagster Failure (`graph_assets.common.failure_on_project_error`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
from neo4j import Driver
from pydantic import PrivateAttr

from nara_kg.embedding.encoder import DEFAULT_BACKEND, DEFAULT_BATCH_SIZE, DEFAULT_MODEL, Embedder
from nara_kg.embedding.factory import DEFAULT_DEVICE, DEFAULT_THREADS, make_embedder
from nara_kg.errors import ConfigurationError, Neo4jUnreachable
from nara_kg.generation.llm_base import EXTRACTIVE_BACKEND, LLM
from nara_kg.generation.openai_client import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_S,
)
from nara_kg.graph.connection import open_driver
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.records import DEFAULT_MAX_BODY_CHARS
from nara_kg.linking.labels import LABELS_FILE
from nara_kg.settings import (
    DEFAULT_DATA_DIR,
    DEFAULT_DATABASE,
    DEFAULT_USERNAME,
    DEFAULT_WORK_DIR,
    LOCAL_DEFAULT_PASSWORD,
    RESOURCE_VARIABLES,
    Neo4jSettings,
    parse_value,
)

_LLM_VARIABLES = RESOURCE_VARIABLES["llm"]


class Neo4jResource(dg.ConfigurableResource):
    """A Bolt connection. An empty `uri` means the project's managed local server."""

    uri: str = ""
    username: str = DEFAULT_USERNAME
    password: str = LOCAL_DEFAULT_PASSWORD
    database: str = DEFAULT_DATABASE

    _driver: Driver | None = PrivateAttr(default=None)

    @property
    def settings(self) -> Neo4jSettings:
        return Neo4jSettings.resolve(self.uri, self.username, self.password, self.database)

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
                raise Neo4jUnreachable(
                    f"cannot reach Neo4j at {settings.uri}: {error}; {hint}"
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
    """The sentence-transformers model: bundled all-MiniLM-L6-v2 or a local model directory.
    Backend `standin`: hashed vectors and no model (`nara_kg.embedding.standin`)."""

    model: str = DEFAULT_MODEL
    backend: str = DEFAULT_BACKEND
    device: str = DEFAULT_DEVICE
    batch_size: int = DEFAULT_BATCH_SIZE
    #: Intra-op threads (0: one per core); give each of N parallel runs 1/N of the cores.
    threads: int = DEFAULT_THREADS

    _embedder: Embedder | None = PrivateAttr(default=None)

    def new_embedder(self, *, shared: bool = False) -> Embedder:
        """A new embedder of these settings; `shared`: for calls from several threads."""
        return make_embedder(
            model=self.model,
            backend=self.backend,
            device=self.device,
            batch_size=self.batch_size,
            threads=self.threads,
            shared=shared,
        )

    def get_embedder(self) -> Embedder:
        """The run's embedder, made on first use."""
        if self._embedder is None:
            self._embedder = self.new_embedder()
        return self._embedder


LLM_BACKENDS = ("extractive", "openai", "transformers", "local")


class LLMResource(dg.ConfigurableResource):
    """Text generation for community reports, answers and global search."""

    backend: str = EXTRACTIVE_BACKEND
    model: str = ""
    base_url: str = ""
    api_key: str = ""
    #: One call's time budget, retries included; a connection must open within the second.
    timeout_s: float = DEFAULT_TIMEOUT_S
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S
    max_retries: int = DEFAULT_MAX_RETRIES
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    temperature: float = 0.0
    #: Most tokens a model may generate per call; 0 keeps the backend's default.
    max_tokens: int = 0
    #: Off: when the LLM does not answer, `ask` answers with the extractive method and says
    #: so. On: that failure is an error.
    strict: bool = False

    def get_llm(self) -> LLM:
        from nara_kg.generation import llm

        if self.backend == "extractive":
            return llm.ExtractiveLLM()
        if self.backend == "openai":
            if not self.base_url or not self.model:
                raise ConfigurationError(
                    f"the openai backend needs {_LLM_VARIABLES['base_url']} and "
                    f"{_LLM_VARIABLES['model']}"
                )
            return llm.OpenAICompatibleLLM(
                self.base_url,
                self.model,
                self.api_key or None,
                timeout_s=self.timeout_s,
                connect_timeout_s=self.connect_timeout_s,
                max_retries=self.max_retries,
                max_concurrency=self.max_concurrency,
                temperature=self.temperature,
                max_tokens=self.max_tokens or llm.DEFAULT_MAX_TOKENS,
            )
        if self.backend == "transformers":
            if not self.model:
                raise ConfigurationError(
                    f"the transformers backend needs {_LLM_VARIABLES['model']} (a local path)"
                )
            return llm.TransformersLLM(
                self.model,
                temperature=self.temperature,
                max_new_tokens=self.max_tokens or llm.DEFAULT_MAX_NEW_TOKENS,
            )
        if self.backend == "local":
            from nara_kg.generation import local_model

            try:
                return local_model.local_llm(
                    temperature=self.temperature,
                    max_new_tokens=self.max_tokens or local_model.DEFAULT_MAX_NEW_TOKENS,
                )
            except llm.LLMError as error:
                raise ConfigurationError(str(error)) from None
        raise ConfigurationError(f"unknown LLM backend {self.backend!r}; use one of {LLM_BACKENDS}")


class PipelinePaths(dg.ConfigurableResource):
    """Where the input export is read from and where the stages keep their Parquet."""

    data_dir: str = str(DEFAULT_DATA_DIR)
    work_dir: str = str(DEFAULT_WORK_DIR)
    #: Empty: `questions.jsonl` in the data folder, when there is one.
    questions_file: str = ""
    #: Read files whose symbolic link leads outside the data folder (off: they are skipped and
    #: reported as rejects).
    follow_external_links: bool = False
    #: The most characters of body text taken from one record; longer ones are cut, the cut
    #: recorded on the record (`bodyTextCutFrom`) and listed by an advisory check.
    max_body_chars: int = DEFAULT_MAX_BODY_CHARS
    #: On: a run whose projection changed starts Leiden from the last run's level-0
    #: communities (GDS seedProperty). Off by default: seeded, the communities depend on the
    #: order of past builds, so an incremental build's differ from a full build's (one
    #: community more on the 120-record demo after one file's edits), which the project's
    #: guarantee (incremental == full by graph fingerprint) does not allow; and unseeded Leiden
    #: (deterministic) with ids named by a member kept more communities as they were (after one
    #: record deleted from that demo: 14 of the 14 level-0 communities it did not reach, against
    #: 8 seeded).
    leiden_seeded: bool = False

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

    @property
    def mention_labels_path(self) -> Path:
        """The demo generator's mention labels, beside the question file."""
        return self.questions_path.with_name(LABELS_FILE)


#: resource key -> (class, {field: environment variable}); the variables are the settings'.
ENV_BINDINGS: dict[str, tuple[type[dg.ConfigurableResource], dict[str, str]]] = {
    key: (cls, RESOURCE_VARIABLES[key])
    for key, cls in (
        ("neo4j", Neo4jResource),
        ("embedding_model", EmbeddingModel),
        ("llm", LLMResource),
        ("paths", PipelinePaths),
    )
}


def _binding(cls: type[dg.ConfigurableResource], name: str, variable: str, text: str) -> Any:
    """What a field is bound to: EnvVar for text (resolved when a run starts; secrets never
    show in the UI) and ints; a switch or a number of seconds is read when the code location
    loads, as Dagster has no boolean or float EnvVar."""
    annotation = cls.model_fields[name].annotation
    if annotation in (bool, "bool", float, "float"):
        return parse_value(variable, text, annotation)
    if annotation in (int, "int"):
        return dg.EnvVar.int(variable)
    return dg.EnvVar(variable)


def build_resources(
    env: Mapping[str, str] | None = None, **overrides: Mapping[str, Any]
) -> dict[str, dg.ConfigurableResource]:
    """The project's resources. `overrides` set fields directly (a test's own data folder,
    `nara-kg build --data`): `build_resources(paths={"data_dir": "..."})`."""
    source = os.environ if env is None else env
    unknown = set(overrides) - set(ENV_BINDINGS)
    if unknown:
        raise ValueError(f"unknown resources {sorted(unknown)}; known: {sorted(ENV_BINDINGS)}")
    built: dict[str, dg.ConfigurableResource] = {}
    for key, (cls, fields) in ENV_BINDINGS.items():
        values: dict[str, Any] = {
            name: _binding(cls, name, variable, source[variable])
            for name, variable in fields.items()
            if source.get(variable)
        }
        values.update(overrides.get(key, {}))
        built[key] = cls(**values)
    return built


def resource_run_config(
    key: str, env: Mapping[str, str] | None = None, **values: Any
) -> dict[str, Any]:
    """Run config for resource `key` that sets `values` and keeps every other field bound
    to its environment variable (run config replaces a resource's configuration whole)."""
    source = os.environ if env is None else env
    cls, fields = ENV_BINDINGS[key]
    config: dict[str, Any] = {}
    for name, variable in fields.items():
        if source.get(variable) and name not in values:
            binding = _binding(cls, name, variable, source[variable])
            config[name] = {"env": variable} if isinstance(binding, dg.EnvVar) else binding
    config.update(values)
    return {"resources": {key: {"config": config}}}


@contextmanager
def open_resources(**overrides: Mapping[str, Any]) -> Iterator[Any]:
    """The resources initialized outside a run (EnvVar resolved), for the CLI and the bench:
    `with open_resources() as r: r.neo4j.get_driver()`."""
    with dg.build_resources(build_resources(**overrides)) as initialized:
        yield initialized


def build_defs(env: Mapping[str, str] | None = None) -> dg.Definitions:
    """Called when the code location loads (not at import), so the environment is read then."""
    return dg.Definitions(resources=build_resources(env))
