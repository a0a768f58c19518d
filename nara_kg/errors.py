"""Expected failures, each turned into one clear line for a person (the CLI and the API).

A failure listed here is the user's to fix (a server that is down, a wrong password, an empty
query, a graph not built yet); anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from collections.abc import Callable


class UserError(Exception):
    """A failure whose message says what happened and what to do; shown without a traceback."""


class QueryError(UserError):
    """A query that cannot be answered as given (empty, or nothing to search in)."""


class BuildLocked(UserError):
    """Another build holds the work folder."""


def _neo4j_message(error: Exception) -> str | None:
    from neo4j import exceptions as neo4j_errors

    if isinstance(error, neo4j_errors.AuthError):
        return (
            "Neo4j refused the credentials: check NEO4J_USERNAME and NEO4J_PASSWORD "
            "(the local server's password is set at its first start)"
        )
    if isinstance(error, neo4j_errors.ServiceUnavailable):
        return (
            f"cannot reach Neo4j ({error}): start the local server with `nara-kg neo4j start`, "
            "or check NEO4J_URI"
        )
    if isinstance(error, neo4j_errors.ClientError):
        text = str(error.message or error)
        if "no such" in text.lower() and "index" in text.lower():
            return "the graph has no search index yet: build it first with `nara-kg build`"
    return None


def _dagster_message(error: Exception) -> str | None:
    import dagster as dg

    if isinstance(error, dg.Failure):
        return error.description or str(error)
    return None


def _plain(error: Exception) -> str | None:
    from nara_kg.generation.llm import LLMError

    if isinstance(error, UserError | LLMError | FileNotFoundError | PermissionError | TimeoutError):
        return str(error)
    return None


#: Most specific first: a Dagster Failure that wraps a Neo4j error is explained by the latter.
_EXPLAINERS: tuple[Callable[[Exception], str | None], ...] = (
    _plain,
    _neo4j_message,
    _dagster_message,
)


def _chain(error: BaseException) -> list[Exception]:
    chain: list[Exception] = []
    current: BaseException | None = error
    while isinstance(current, Exception) and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def explain(error: BaseException) -> str | None:
    """One line for an expected failure, or None for a bug (keep the traceback)."""
    chain = _chain(error)
    for explainer in _EXPLAINERS:
        for link in chain:
            message = explainer(link)
            if message:
                return " ".join(message.split())
    return None
