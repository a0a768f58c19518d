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


class ConfigurationError(UserError):
    """A setting that cannot be used as given (an unknown backend, a model path that is not
    there); the message names the setting."""


class Neo4jUnreachable(RuntimeError):
    """The Neo4j resource could not connect; the message says where and what to check. Its
    cause (a refused password, a server down) is explained first when it can be."""


class LLMError(RuntimeError):
    """A generation failed; the message is safe to log (it never contains a credential)."""


class LLMUnreachable(LLMError):
    """The endpoint did not answer within the call's time budget and retries (a server down,
    unreachable, or never answering): callers may fall back to the extractive method."""


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


def _plain(error: Exception) -> str | None:
    if isinstance(error, UserError | LLMError | FileNotFoundError | PermissionError | TimeoutError):
        return str(error)
    return None


def _unreachable(error: Exception) -> str | None:
    return str(error) if isinstance(error, Neo4jUnreachable) else None


#: Explains one link of a failure's chain, or returns None.
Explainer = Callable[[Exception], str | None]

#: Most specific first: a wrapper (Neo4jUnreachable, an asset's Dagster Failure) that wraps a
#: Neo4j error is explained by the latter.
_EXPLAINERS: tuple[Explainer, ...] = (_plain, _neo4j_message, _unreachable)


def _chain(error: BaseException) -> list[Exception]:
    chain: list[Exception] = []
    current: BaseException | None = error
    while isinstance(current, Exception) and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def explain(error: BaseException, *more: Explainer) -> str | None:
    """One line for an expected failure, or None for a bug (keep the traceback). `more` are a
    shell's explainers of its framework's wrappers, tried after the project's own."""
    chain = _chain(error)
    for explainer in (*_EXPLAINERS, *more):
        for link in chain:
            message = explainer(link)
            if message:
                return " ".join(message.split())
    return None
