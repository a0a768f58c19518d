"""`nara-kg neo4j start|stop|status`: the project-managed local Neo4j (or the external one)."""

from __future__ import annotations

import json
import sys

import click

from nara_kg.devserver import process as neo4j_server
from nara_kg.devserver.layout import Neo4jRuntimeError
from nara_kg.settings import Neo4jSettings, neo4j_home


def _fail(exc: Exception) -> None:
    raise click.ClickException(str(exc)) from exc


@click.group(name="neo4j", help="Start, stop and inspect the Neo4j + GDS graph server.")
def neo4j_group() -> None:
    pass


@neo4j_group.command(help="Start the local Neo4j (assembling it on first use) and wait for Bolt.")
@click.option(
    "--timeout", default=180, show_default=True, type=float, help="Seconds to wait for Bolt."
)
def start(timeout: float) -> None:
    settings = Neo4jSettings.from_env()
    try:
        neo4j_server.start(settings, neo4j_home(), timeout=timeout, log=click.echo)
    except Neo4jRuntimeError as exc:
        _fail(exc)


@neo4j_group.command(help="Stop the local Neo4j (clean shutdown; killed only after --timeout).")
@click.option(
    "--timeout", default=60, show_default=True, type=float, help="Seconds to wait for a clean exit."
)
def stop(timeout: float) -> None:
    settings = Neo4jSettings.from_env()
    if not settings.managed:
        click.echo(f"NEO4J_URI is set ({settings.uri}): there is no local Neo4j to stop")
        return
    if not neo4j_server.stop(neo4j_home(), timeout=timeout, log=click.echo):
        click.echo("Neo4j is not running")


@neo4j_group.command(help="Show where the graph server is and whether it runs.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def status(as_json: bool) -> None:
    settings = Neo4jSettings.from_env()
    info = neo4j_server.status(settings, neo4j_home())
    if as_json:
        click.echo(json.dumps(info, sort_keys=True))
        return
    kind = "local (managed by nara-kg)" if info["managed"] else "external (NEO4J_URI)"
    state = "running" if info["running"] else "not running"
    if info["running"] and info.get("pid"):
        state += f" (pid {info['pid']})"
    click.echo(f"Neo4j:     {state}")
    click.echo(f"server:    {kind}")
    click.echo(f"uri:       {info['uri']}")
    click.echo(f"user:      {info['user']}")
    click.echo(f"database:  {info['database']}")
    edition = f" {info['edition']}" if info.get("edition") else ""
    click.echo(f"versions:  Neo4j {info['neo4j_version']}{edition}, GDS {info['gds_version']}")
    if info["home"]:
        click.echo(f"home:      {info['home']}")
        click.echo(f"log:       {info['log_file']}")
    if info["error"]:
        click.echo(f"error:     {info['error']}", err=True)
        sys.exit(1)
