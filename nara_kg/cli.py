"""`nara-kg`: the command line of the platform."""

from __future__ import annotations

import click

from nara_kg.neo4j_cli import neo4j_group


@click.group(help="Build and query the NARA catalog knowledge graph.")
@click.version_option(package_name="nara-kg")
def main() -> None:
    pass


main.add_command(neo4j_group)
