"""Arguments the command line cannot use end in one line (`error: ...`, exit 2) before anything
is opened: naIds past Neo4j's 64-bit integers, bytes that are not UTF-8, dates written with
other scripts' digits, `--k` and `--level` outside the API's bounds. No Neo4j is needed (the
one named here does not exist, so reaching it would be a different error)."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from click.testing import CliRunner

from nara_kg.cli.main import main
from nara_kg.errors import QueryError
from nara_kg.retrieval.filters import SearchFilters


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return {"NEO4J_URI": f"bolt://127.0.0.1:{port}"}


def one_line_error(result: Any) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return str(lines[0])


def run(env: dict[str, str], *args: str) -> Any:
    return CliRunner().invoke(main, list(args), env=env)


@pytest.mark.parametrize("command", ["search", "ask"])
def test_an_out_of_range_naid_is_one_line(env: dict[str, str], command: str) -> None:
    for within in ("99999999999999999999", str(2**63), "0"):
        line = one_line_error(run(env, command, "flood", "--within", within))
        assert "--within" in line


# What Python makes of bytes that are not UTF-8 in argv (surrogateescape): b"\xff" -> "\udcff".
NOT_UTF8 = b"flood \xff control".decode("utf-8", "surrogateescape")


@pytest.mark.parametrize("command", ["search", "ask"])
def test_arguments_that_are_not_utf8_are_one_line(env: dict[str, str], command: str) -> None:
    assert "UTF-8" in one_line_error(run(env, command, NOT_UTF8))
    assert "UTF-8" in one_line_error(run(env, command, "flood", "--materials", NOT_UTF8))
    assert "UTF-8" in one_line_error(run(env, command, "flood", "--date-from", NOT_UTF8))


#: Digits of other scripts, which `\d` matches: fullwidth 1940, Arabic-Indic 1950, and mixed.
OTHER_DIGITS = [
    "\uff11\uff19\uff14\uff10",
    "\u0661\u0669\u0665\u0660",
    "1940-\uff10\uff11",
    "1940-01-\u0660\u0662",
]


@pytest.mark.parametrize("date", OTHER_DIGITS)
def test_dates_with_other_digits_are_one_line(env: dict[str, str], date: str) -> None:
    for option in ("--date-from", "--date-to"):
        line = one_line_error(run(env, "search", "flood", option, date))
        assert "must be a date written YYYY" in line
    with pytest.raises(QueryError):
        SearchFilters(date_to=date)


def test_k_and_level_have_the_api_bounds(env: dict[str, str]) -> None:
    for args in (
        ["search", "flood", "--k", "0"],
        ["search", "flood", "--k", "51"],
        ["ask", "flood", "--k", "100000"],
        ["ask", "flood", "--level", "-1"],
        ["ask", "flood", "--level", "65"],
    ):
        line = one_line_error(run(env, *args))
        assert args[2] in line and "range" in line, line
    # In range, the command goes on to the (absent) server.
    assert "cannot reach Neo4j" in one_line_error(run(env, "search", "flood", "--k", "50"))
