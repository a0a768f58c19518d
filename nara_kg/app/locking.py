"""One build at a time per work folder: an OS file lock (the `filelock` library) plus a note of
who holds it, so a second build can say which one is running instead of colliding with it."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from nara_kg.errors import BuildLocked

LOCK_NAME = "build.lock"
OWNER_NAME = "build.lock.json"


def _owner(work_dir: Path) -> dict[str, Any]:
    try:
        owner: dict[str, Any] = json.loads((work_dir / OWNER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return owner


def describe_owner(work_dir: Path) -> str:
    owner = _owner(work_dir)
    if not owner:
        return "another build"
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(owner.get("started", 0)))
    return (
        f"the build started at {started} by pid {owner.get('pid')} on {owner.get('host')} "
        f"({owner.get('command', 'nara-kg build')})"
    )


@contextmanager
def build_lock(work_dir: Path, *, wait_s: float = 0.0, command: str = "") -> Iterator[None]:
    """Hold the work folder for one build. Waits up to `wait_s` seconds for a running build
    (0: refuse at once) and raises BuildLocked naming it. The OS releases the lock when the
    holder dies, so a killed build never leaves the folder locked."""
    work_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(work_dir / LOCK_NAME))
    try:
        lock.acquire(timeout=wait_s)
    except Timeout as error:
        raise BuildLocked(
            f"{describe_owner(work_dir)} is using {work_dir}; wait for it to finish "
            "(or pass --wait SECONDS), or stop it"
        ) from error
    try:
        (work_dir / OWNER_NAME).write_text(
            json.dumps(
                {
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "started": time.time(),
                    "command": command,
                }
            ),
            encoding="utf-8",
        )
        yield
    finally:
        (work_dir / OWNER_NAME).unlink(missing_ok=True)
        lock.release()
