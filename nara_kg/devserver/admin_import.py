"""`neo4j-admin database import full` into the local server's home (the server stopped).

The home has no launcher scripts (its jars come from Maven, see :mod:`nara_kg.devserver.assembly`):
the tool runs as its main class on the home's `lib/`, reading the home's neo4j.conf like the
server, so the store lands where the server will open it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from nara_kg.devserver.layout import ADMIN_TOOL, Neo4jRuntimeError, java, server_env
from nara_kg.devserver.process import running_pid
from nara_kg.settings import neo4j_heap_size

#: Memory the importer may use off the heap for its caches: bounded, since the machine is
#: shared (the tool's default takes most of the free memory).
OFF_HEAP_MEMORY = "1g"


def import_command(
    home: Path, database: str, arguments: list[str], *, array_delimiter: str, report: Path
) -> list[str]:
    heap = neo4j_heap_size()
    return [
        java(),
        f"-Xmx{heap}",
        "-Dfile.encoding=UTF-8",
        "-cp",
        str(home / "lib" / "*"),
        ADMIN_TOOL,
        "database",
        "import",
        "full",
        # Before the options: `--nodes` and `--relationships` take every argument after them.
        database,
        "--overwrite-destination=true",
        # Texts hold line breaks inside quoted fields.
        "--multiline-fields=true",
        f"--array-delimiter={array_delimiter}",
        # The relationship writers MATCH both ends and skip an edge whose end is no node;
        # the import does the same.
        "--skip-bad-relationships=true",
        "--bad-tolerance=-1",
        f"--report-file={report}",
        f"--max-off-heap-memory={OFF_HEAP_MEMORY}",
        *arguments,
    ]


def import_database(
    home: Path, database: str, arguments: list[str], *, array_delimiter: str, report: Path
) -> str:
    """Replace `database`'s store with the import of `arguments` (``--nodes=...``,
    ``--relationships=...``); the tool's output. The server must be stopped."""
    home = home.resolve()
    if running_pid(home) is not None:
        raise Neo4jRuntimeError(f"the Neo4j of {home} runs: stop it before importing")
    proc = subprocess.run(
        import_command(home, database, arguments, array_delimiter=array_delimiter, report=report),
        cwd=home,
        env=server_env(home),
        capture_output=True,
        text=True,
        check=False,
    )
    output = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0:
        tail = "\n".join(output.splitlines()[-30:])
        raise Neo4jRuntimeError(
            f"neo4j-admin database import failed (exit {proc.returncode}):\n{tail}"
        )
    return output
