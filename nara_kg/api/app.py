"""The question-answering API and the chat page (`nara-kg serve`).

Endpoints (schema at /openapi.json, browsable at /docs, both served offline):

* ``POST /api/search``: hybrid local search with filters;
* ``POST /api/ask``: classification, a local or global answer (or the records), provenance;
* ``GET /api/records/{naId}``: one record with its hierarchy, children and authorities;
* ``GET /api/health``: whether Neo4j answers, and what the graph holds;
* ``GET /api/examples``: a few questions made from the loaded graph's records;
* ``GET /``: the chat page (static files built by ``web/build.sh``).

Endpoints are plain functions: FastAPI runs them on its thread pool, where the Neo4j driver's
blocking calls belong.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractContextManager, asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, cast

from fastapi import FastAPI, HTTPException, Request
from fastapi import Path as PathParam
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from nara_kg.api import errors, examples, models, records
from nara_kg.api.limits import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_BURST,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_RATE_PER_MINUTE,
    BodySizeLimit,
    BodyTimeout,
    HostAllowList,
    RateLimit,
)
from nara_kg.api.services import Services, warm_up
from nara_kg.generation.llm import describe
from nara_kg.graph.batches import read_all
from nara_kg.graph.reports import reports_per_level
from nara_kg.model.limits import MAX_NA_ID
from nara_kg.model.schema import Label, Prop

log = logging.getLogger("nara_kg.api")

STATIC_DIR = Path(__file__).resolve().parent / "static"
#: The page runs only its own scripts and talks only to this server (record text is catalog
#: data: even if some escaped markup got through, no inline or foreign script would run).
PAGE_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}

GRAPH_COUNTS = f"""
MATCH (c:{Label.CHUNK}) WITH count(c) AS chunks
OPTIONAL MATCH (r:{Label.CHUNK} {{{Prop.CHUNK_SEQ_ID}: 0}}) WITH chunks, count(r) AS records
OPTIONAL MATCH (m:{Label.COMMUNITY})
RETURN chunks, records, count(m) AS communities
"""


def _package_version() -> str:
    try:
        return version("nara-kg")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0"


def create_app(
    services: Services | None = None,
    *,
    services_factory: Callable[[], AbstractContextManager[Services]] | None = None,
    rate_per_minute: int = DEFAULT_RATE_PER_MINUTE,
    burst: int = DEFAULT_BURST,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    static_dir: Path = STATIC_DIR,
    allowed_hosts: Sequence[str] | None = None,
    body_timeout_s: float | None = DEFAULT_BODY_TIMEOUT_S,
) -> FastAPI:
    """The application. Tests pass `services`; `nara-kg serve` passes a factory that opens the
    project's resources for the server's lifetime, and its Host allow-list
    (`server.allowed_hosts`; None here: any Host, as the tests' clients send their own)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if services is not None:
            app.state.services = services
            yield
            return
        if services_factory is None:
            raise ValueError("create_app needs `services` or a `services_factory`")
        with services_factory() as opened:
            app.state.services = opened
            # Load the model now, so the first question does not wait for it.
            warm_up(opened)
            yield

    app = FastAPI(
        title="nara-kg: questions over the National Archives Catalog knowledge graph",
        version=_package_version(),
        summary="Hybrid search, grounded answers and global (community) answers, each with "
        "its provenance subgraph.",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        responses={
            400: {"model": models.ErrorBody, "description": "A query that cannot be answered."},
            413: {"model": models.ErrorBody, "description": "Request body too large."},
            422: {"model": models.ErrorBody, "description": "Invalid request."},
            429: {"model": models.ErrorBody, "description": "Too many requests."},
            503: {
                "model": models.ErrorBody,
                "description": "Neo4j, the graph or the LLM is not available (Retry-After).",
            },
        },
    )
    errors.install(app)
    # The last added runs first: refuse a foreign Host, then oversized or stalled bodies before
    # anything reads them, then rate-limit.
    app.add_middleware(RateLimit, per_minute=rate_per_minute, burst=burst)
    if body_timeout_s is not None:
        app.add_middleware(BodyTimeout, timeout_s=body_timeout_s)
    app.add_middleware(BodySizeLimit, max_body_bytes=max_body_bytes)
    if allowed_hosts is not None:
        app.add_middleware(HostAllowList, allowed=allowed_hosts)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        response = cast(Response, await call_next(request))
        for key, value in _SECURITY_HEADERS.items():
            response.headers.setdefault(key, value)
        if request.url.path == "/" or request.url.path.startswith("/static/"):
            response.headers.setdefault("Content-Security-Policy", PAGE_CSP)
        return response

    def current(request: Request) -> Services:
        return cast(Services, request.app.state.services)

    @app.get("/api/health", response_model=models.Health, tags=["service"])
    def health(request: Request) -> JSONResponse:
        """Whether Neo4j answers (200) or not (503), and what the graph holds."""
        svc = current(request)
        body: dict[str, Any] = {
            "llm": describe(svc.llm),
            "version": app.version,
        }
        try:
            driver = svc.driver()
            counts = read_all(driver, svc.database, GRAPH_COUNTS)[0]
            levels = reports_per_level(driver, svc.database)
        except Exception as error:
            from nara_kg.errors import explain

            message = explain(error)
            if message is None:
                raise
            log.warning("GET /api/health: %s", message)
            body.update(status="unavailable", neo4j=errors.public_message(error))
            return JSONResponse(
                models.Health(**body).model_dump(), status_code=503, headers={"Retry-After": "10"}
            )
        body.update(
            status="ok",
            neo4j="ok",
            graph=models.GraphCounts(
                records=int(counts["records"]),
                chunks=int(counts["chunks"]),
                communities=int(counts["communities"]),
                reports_per_level={str(level): n for level, n in levels.items()},
            ),
        )
        return JSONResponse(models.Health(**body).model_dump())

    @app.post("/api/search", response_model=models.SearchResponse, tags=["questions"])
    def search(request: Request, body: models.SearchRequest) -> models.SearchResponse:
        """Hybrid local search (vector + full text, fused) over the records that pass the
        filters; each hit with its dates, hierarchy (root first) and authorities. Fewer than
        `k` hits only when fewer records match."""
        from nara_kg.retrieval.search import local_search

        svc = current(request)
        filters = body.filters.to_search()
        result = local_search(
            svc.driver(), svc.database, svc.embedder.encode, body.query, k=body.k, filters=filters
        )
        return models.SearchResponse(
            query=body.query,
            k=body.k,
            filters=filters.describe(),
            latency_ms=round(result.latency_ms, 1),
            hits=[records.record_hit(hit.to_dict()) for hit in result.hits],
        )

    @app.post("/api/ask", response_model=models.AskResponse, tags=["questions"])
    def ask(request: Request, body: models.AskRequest) -> models.AskResponse:
        """Answer a question (or list records) from the graph. `request_type` says how it was
        classified (`question` or `show_records`); `mode` whether local search or the community
        reports answered; a refusal is seed 000's sentence with `refused: true`."""
        from nara_kg.retrieval.ask import ask_with_fallback

        svc = current(request)
        response = ask_with_fallback(
            svc.driver(),
            svc.database,
            svc.embedder,
            svc.llm,
            svc.cache,
            body.question,
            strict=body.strict_llm or svc.strict_llm,
            mode=body.mode,
            k=body.k,
            level=body.level,
            filters=body.filters.to_search(),
            history=[turn.to_turn() for turn in body.history],
        )
        return records.ask_response(response)

    @app.get("/api/examples", response_model=models.Examples, tags=["questions"])
    def example_questions(request: Request) -> models.Examples:
        """A few questions the loaded graph can answer, made from its own records (the chat
        page offers them to a first-time reader)."""
        svc = current(request)
        return models.Examples(questions=examples.questions(svc.driver(), svc.database))

    @app.get(
        "/api/records/{na_id}",
        response_model=models.RecordDetail,
        tags=["records"],
        responses={404: {"model": models.ErrorBody, "description": "No record has this naId."}},
    )
    def record(
        request: Request,
        na_id: int = PathParam(gt=0, le=MAX_NA_ID, description="The record's naId."),
    ) -> models.RecordDetail:
        """One record by naId: its properties and text, the hierarchy above it (root first),
        its children, its related authorities and, for an authority, the records it is
        related to."""
        svc = current(request)
        found = records.record_detail(svc.driver(), svc.database, na_id)
        if found is None:
            raise HTTPException(404, f"no record with naId {na_id} in the graph")
        return found

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=app.title,
            swagger_js_url="/static/vendor/swagger-ui/swagger-ui-bundle.js",
            swagger_css_url="/static/vendor/swagger-ui/swagger-ui.css",
            swagger_favicon_url="/static/favicon.svg",
        )

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False, response_model=None)
    def page() -> Response:
        index = static_dir / "index.html"
        if not index.is_file():
            return errors.error_response(
                503, "the chat page is not built: run `make web` (web/build.sh)"
            )
        return FileResponse(index, media_type="text/html; charset=utf-8")

    app.mount("/static", StaticFiles(directory=static_dir, check_dir=False), name="static")
    return app
