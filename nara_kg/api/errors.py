"""Failures as HTTP responses: one line (`nara_kg.errors.explain`) and a status that says whose
move it is. A bad request is the client's (4xx); a database, graph or LLM that is not there is
the server's, and temporary (503); anything unexplained is a bug (500, logged in full)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from nara_kg.errors import BuildLocked, QueryError, UserError, explain

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
    import dagster as dg
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
        return error_response(status, message)

    for kind in (
        UserError,
        LLMError,
        neo4j_errors.Neo4jError,
        neo4j_errors.DriverError,
        TimeoutError,
    ):
        app.add_exception_handler(kind, expected)
    # The Neo4j resource wraps "cannot reach Neo4j" in a dagster Failure.
    app.add_exception_handler(dg.Failure, expected)
