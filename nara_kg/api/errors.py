"""Failures as HTTP responses: one line and a status that says whose move it is. A bad request
is the client's (4xx, `nara_kg.errors.explain`'s line); a database, graph or LLM that is not
there is the server's, and temporary (503): the client gets a fixed sentence
(`public_message`), and the explanation, with the addresses and whatever the upstream
replied, goes to the server log only; anything unexplained is a bug (500, logged in full)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from nara_kg.errors import BuildLocked, Neo4jUnreachable, QueryError, UserError, explain

log = logging.getLogger("nara_kg.api")


def _chain(error: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def status_for(error: BaseException) -> int:
    """The HTTP status of an explained failure (see the module docstring)."""
    from neo4j import exceptions as neo4j_errors

    from nara_kg.generation.llm import LLMError
    from nara_kg.retrieval.ask import NoReports

    chain = _chain(error)
    if any(isinstance(link, QueryError) for link in chain):
        return 400
    if any(isinstance(link, BuildLocked) for link in chain):
        return 409
    unavailable = (
        NoReports,
        LLMError,
        Neo4jUnreachable,
        neo4j_errors.ServiceUnavailable,
        neo4j_errors.AuthError,
        neo4j_errors.SessionExpired,
        TimeoutError,
    )
    if any(isinstance(link, unavailable) for link in chain):
        return 503
    if any(isinstance(link, neo4j_errors.ClientError) for link in chain):
        return 503  # explained ClientErrors are "the graph has no search index yet"
    if any(isinstance(link, UserError) for link in chain):
        return 400
    return 503


NEO4J_DOWN = "cannot reach Neo4j: the graph database is not answering; try again shortly"
NEO4J_CREDENTIALS = (
    "Neo4j refused the credentials this server uses: its administrator must check "
    "NEO4J_USERNAME and NEO4J_PASSWORD"
)
LLM_DOWN = (
    "the configured LLM did not answer: try again shortly, or ask without strict_llm for an "
    "extractive answer"
)
LLM_FAILED = (
    "the configured LLM failed: ask without strict_llm for an extractive answer, or try again later"
)
TIMED_OUT = "the request took too long: try again shortly"
UNAVAILABLE = "the service is not available right now: try again shortly"


def public_message(error: BaseException) -> str:
    """What a client is told of a failure of the server's side (a 503): a fixed sentence per
    kind, never a Bolt address, an LLM endpoint or an upstream's reply."""
    from neo4j import exceptions as neo4j_errors

    from nara_kg.generation.llm import LLMError, LLMUnreachable
    from nara_kg.retrieval.ask import NoReports

    chain = _chain(error)

    def has(*kinds: type[BaseException]) -> bool:
        return any(isinstance(link, kinds) for link in chain)

    reports = [link for link in chain if isinstance(link, NoReports)]
    if reports:
        return str(reports[0])  # a fixed text of ours: build the reports
    if has(neo4j_errors.AuthError):
        return NEO4J_CREDENTIALS
    if has(neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired):
        return NEO4J_DOWN
    if has(LLMUnreachable):
        return LLM_DOWN
    if has(LLMError):
        return LLM_FAILED
    if has(neo4j_errors.ClientError):
        # Explained ClientErrors are "the graph has no search index yet": a fixed text.
        return explain(error) or UNAVAILABLE
    if has(TimeoutError):
        return TIMED_OUT
    return UNAVAILABLE


def error_response(status: int, message: str, detail: Any = None) -> JSONResponse:
    body: dict[str, Any] = {"error": message}
    if detail is not None:
        body["detail"] = detail
    headers = {"Retry-After": "10"} if status == 503 else None
    return JSONResponse(body, status_code=status, headers=headers)


def _validation_message(errors: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """One line naming each bad field, and the details without the offending input (a 200 KB
    query is not echoed back, and nothing a client sent is reflected)."""
    parts = []
    details = []
    for error in errors:
        location = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        parts.append(f"{location or 'request'}: {error.get('msg', 'invalid')}")
        details.append({"loc": list(error.get("loc", ())), "msg": error.get("msg", "")})
    return "invalid request: " + "; ".join(parts), details


def install(app: FastAPI) -> None:
    """Register the handlers: validation (422), HTTP errors, and the expected failures."""
    from neo4j import exceptions as neo4j_errors

    from nara_kg.generation.llm import LLMError

    @app.exception_handler(RequestValidationError)
    async def validation(_: Request, error: RequestValidationError) -> JSONResponse:
        message, details = _validation_message(list(error.errors()))
        return error_response(422, message, details)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, error: StarletteHTTPException) -> JSONResponse:
        response = error_response(error.status_code, str(error.detail))
        for key, value in (error.headers or {}).items():
            response.headers[key] = value
        return response

    async def expected(request: Request, error: Exception) -> JSONResponse:
        message = explain(error)
        if message is None:
            log.exception("unexpected failure on %s %s", request.method, request.url.path)
            return error_response(500, "internal error: the server log has the details")
        status = status_for(error)
        if status >= 500:
            log.warning("%s %s: %s", request.method, request.url.path, message)
            return error_response(status, public_message(error))
        return error_response(status, message)

    for kind in (
        UserError,
        LLMError,
        Neo4jUnreachable,
        neo4j_errors.Neo4jError,
        neo4j_errors.DriverError,
        TimeoutError,
    ):
        app.add_exception_handler(kind, expected)
