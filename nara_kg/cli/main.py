"""`nara-kg`: the command line of the platform."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

from nara_kg.cli.bench import bench_command
from nara_kg.cli.common import cli_resources, int_option
from nara_kg.cli.neo4j import neo4j_group
from nara_kg.cli.questions import ask_command, evaluate, search
from nara_kg.settings import PROJECT_ROOT, Neo4jSettings, dagster_home

#: The embedded instance of `make demo` (SQLite): run monitoring marks a run whose process died
#: as failed; the pools admit one user of the embedding model and one Neo4j writer at a time
#: (on 2 cores more would only contend); at most two runs at once when launched from the UI.
#: deploy/postgres/dagster.yaml is the same on PostgreSQL.
LOCAL_INSTANCE_YAML = """\
telemetry:
  enabled: false
run_monitoring:
  enabled: true
  poll_interval_seconds: 15
concurrency:
  pools:
    default_limit: 1
  runs:
    max_concurrent_runs: 2
"""


def _dagster_home() -> Path:
    """A persistent Dagster instance, so the UI shows the runs that `build` made."""
    home = dagster_home()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text(LOCAL_INSTANCE_YAML, encoding="utf-8")
    return home


def _dagster_failure(error: Exception) -> str | None:
    """What an asset's Dagster Failure says, when the project's own error under it does not."""
    import dagster as dg

    if isinstance(error, dg.Failure):
        return error.description or str(error)
    return None


class _Commands(click.Group):
    """Expected failures (a server down, a wrong password, an empty query, nothing built yet)
    and invalid option values (out of range, not UTF-8) end in one line on stderr and exit
    code 2; `--debug` shows the traceback instead."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.BadParameter as error:
            click.echo(f"error: {error.format_message()}", err=True)
            ctx.exit(2)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as error:
            from nara_kg.errors import explain

            message = explain(error, _dagster_failure)
            if message is None or (ctx.obj or {}).get("debug"):
                raise
            click.echo(f"error: {message}", err=True)
            ctx.exit(2)


@click.group(cls=_Commands, help="Build and query the NARA catalog knowledge graph.")
@click.version_option(package_name="nara-kg")
@click.option(
    "--debug",
    is_flag=True,
    envvar="NARA_KG_DEBUG",
    help="Show the full traceback of a failure instead of one line.",
)
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    ctx.obj = {"debug": debug}


main.add_command(neo4j_group)
main.add_command(bench_command)


@main.command("demo-data")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--records", default=400, show_default=True, help="Approximate record count.")
@click.option("--seed", default=7, show_default=True)
@click.option(
    "--shard-lines",
    default=200,
    show_default=True,
    help="Records per output file (smaller: more files, e.g. to exercise partitions).",
)
@click.option(
    "--real-export",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also emit authority records for the creators[] naIds found in this real export.",
)
def demo_data(
    out_dir: Path, records: int, seed: int, shard_lines: int, real_export: Path | None
) -> None:
    """Generate realistic NARA export records of all ten types into OUT_DIR."""
    from nara_kg.demo import generate_demo_data

    summary = generate_demo_data(
        out_dir, records=records, seed=seed, real_export_dir=real_export, shard_lines=shard_lines
    )
    total = sum(summary.records_by_type.values())
    click.echo(f"wrote {total} records in {len(summary.files)} files under {out_dir}")
    for node_type, count in sorted(summary.records_by_type.items()):
        click.echo(f"  {node_type:22} {count}")
    click.echo(f"questions: {summary.questions_path}")


def _ensure_server() -> None:
    from nara_kg.devserver import process as neo4j_server
    from nara_kg.settings import neo4j_home

    settings = Neo4jSettings.from_env()
    if settings.managed:
        neo4j_server.start(settings, neo4j_home(), log=lambda m: click.echo(m, err=True))


@main.command()
@click.option(
    "--data",
    "data_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Input export folder (default: NARA_DATA_DIR, else the demo data).",
)
@click.option(
    "--full",
    is_flag=True,
    help="kg_full_rebuild: re-parse, re-chunk and re-embed every file, rewrite every node.",
)
@int_option(
    "--parallel",
    default=1,
    low=1,
    high=64,
    help="Run the per-file stages as this many concurrent runs (one per range of files).",
)
@click.option(
    "--wait",
    "wait_s",
    default=0.0,
    show_default=True,
    help="Seconds to wait for a build already running on the same work folder (0: refuse).",
)
@click.option(
    "--bulk-first-load",
    is_flag=True,
    help=(
        "When the local Neo4j's database is empty, load the graph with neo4j-admin database "
        "import (the server is stopped and restarted) instead of the writers. Not with --full, "
        "whose writers rewrite every node whatever the graph holds."
    ),
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary.")
def build(
    data_dir: Path | None,
    full: bool,
    parallel: int,
    wait_s: float,
    bulk_first_load: bool,
    as_json: bool,
) -> None:
    """Run the knowledge-graph job over every input file (the jobs the UI shows).

    `kg_incremental` (unchanged files, chunks and relationships are skipped) or, with --full,
    `kg_full_rebuild`; the runs land in the Dagster instance at DAGSTER_HOME. Exits non-zero
    when a run fails, a blocking check included.
    """
    import dagster as dg

    from nara_kg.app.launch import build as launch_build
    from nara_kg.app.locking import build_lock

    if bulk_first_load and full:
        raise click.UsageError("--bulk-first-load loads an empty graph; --full rewrites it")

    with cli_resources() as r:
        data = (data_dir or r.paths.data_path).resolve()
        work, follow = r.paths.layout.root, r.paths.follow_external_links
        layout = r.paths.layout
    _dagster_home()
    _ensure_server()
    bulk: dict[str, Any] = {}

    def bulk_load() -> None:
        from nara_kg.devserver.bulk_load import first_load
        from nara_kg.settings import neo4j_home

        result = first_load(
            Neo4jSettings.from_env(), neo4j_home(), layout, log=lambda m: click.echo(m, err=True)
        )
        bulk.update(dataclasses.asdict(result))

    with (
        build_lock(work, wait_s=wait_s, command=" ".join(sys.argv)),
        dg.DagsterInstance.get() as instance,
    ):
        outcome = launch_build(
            data,
            instance,
            full=full,
            parallel=parallel,
            follow_external_links=follow,
            log=lambda message: click.echo(message, err=True),
            work_dir=work,
            before_graph_nodes=bulk_load if bulk_first_load else None,
        )
    parsed = outcome.assets.get("parsed_records", {})
    selection = outcome.assets.get("record_selection", {})
    nodes = outcome.assets.get("graph_nodes", {})
    summary: dict[str, Any] = {
        "success": outcome.success,
        "run_id": outcome.run_ids[-1] if outcome.run_ids else None,
        "run_ids": outcome.run_ids,
        "data_dir": str(data),
        "full": full,
        "parallel": parallel,
        "seconds": outcome.seconds,
        "partitions": {
            "total": outcome.partitions.total,
            "added": len(outcome.partitions.added),
            "removed": len(outcome.partitions.removed),
            "invalid_names": outcome.partitions.invalid,
        },
        "files_processed": parsed.get("files_parsed", 0),
        "files_skipped": (
            outcome.partitions.total
            if outcome.up_to_date_since is not None
            else parsed.get("files_skipped_unchanged", 0)
        ),
        "up_to_date_since_runs": outcome.up_to_date_since,
        "records_loaded": nodes.get("records_written", 0),
        "records_removed": nodes.get("records_removed", 0),
        "lines_rejected": selection.get("lines_rejected", 0),
        "rejects_path": selection.get("rejects_path"),
        "checks_failed": outcome.checks_failed,
        "bulk_first_load": bulk or None,
        "assets": {
            asset: {
                key: value
                for key, value in values.items()
                if isinstance(value, int | float | str) and not isinstance(value, bool)
            }
            for asset, values in outcome.assets.items()
        },
    }
    if not outcome.success:
        summary["failed_steps"] = outcome.failed_steps
    if as_json:
        click.echo(json.dumps(summary, indent=2, default=str))
    else:
        for key, values in summary["assets"].items():
            shown = {k: v for k, v in values.items() if k != "data_dir"}
            click.echo(f"{key:26} {json.dumps(shown, default=str)[:200]}")
        status = "succeeded" if outcome.success else "FAILED"
        if outcome.up_to_date_since is not None:
            runs = ", ".join(outcome.up_to_date_since)
            click.echo(f"build {status}: nothing changed since runs {runs}")
        else:
            click.echo(f"build {status} (runs {', '.join(outcome.run_ids)})")
        if summary["checks_failed"]:
            click.echo(f"checks failed: {', '.join(summary['checks_failed'])}")
    if not outcome.success:
        sys.exit(1)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@int_option("--port", default=8000, low=1, high=65535, help="Port the server listens on.")
@int_option(
    "--rate-limit",
    default=120,
    low=0,
    high=None,
    help="API requests a minute per client (0: no limit).",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    envvar="NARA_KG_ALLOWED_HOSTS",
    help="A Host name the server answers to besides localhost, 127.0.0.1, [::1] and --host "
    "(repeatable; `*`: any; env: space-separated).",
)
@click.option(
    "--forwarded-allow-ips",
    default="",
    envvar="NARA_KG_FORWARDED_ALLOW_IPS",
    help="Comma-separated addresses of the reverse proxies whose X-Forwarded-For is trusted "
    "(default: none, each client is its connection's address).",
)
def serve(
    host: str, port: int, rate_limit: int, allowed_hosts: tuple[str, ...], forwarded_allow_ips: str
) -> None:
    """The question-answering API and the chat page (http://HOST:PORT/, schema at /docs)."""
    from nara_kg.api.server import serve as run_server
    from nara_kg.cli.common import services_from_resources

    _ensure_server()
    run_server(
        host,
        port,
        services_factory=services_from_resources,
        rate_per_minute=rate_limit,
        extra_hosts=allowed_hosts,
        forwarded_allow_ips=forwarded_allow_ips.split(","),
        log=lambda m: click.echo(m, err=True),
    )


@main.command()
@click.option("--port", default=3000, show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True)
def ui(port: int, host: str) -> None:
    """Open the Dagster UI on this code location (with the same environment defaults)."""
    _dagster_home()
    command = [
        sys.executable,
        "-m",
        "dagster",
        "dev",
        "-w",
        str(PROJECT_ROOT / "workspace.yaml"),
        "-h",
        host,
        "-p",
        str(port),
    ]
    click.echo(f"Dagster UI on http://{host}:{port} (Ctrl-C to stop)")
    raise SystemExit(subprocess.call(command, cwd=PROJECT_ROOT))


main.add_command(search)
main.add_command(evaluate)
main.add_command(ask_command)
