"""Shortens the Dagster daemon's loop interval in the service tests' processes.

Dagster's backfill daemon looks at its backfills every `DEFAULT_DAEMON_INTERVAL_SECONDS` (30 s),
a module constant and not an instance setting, and a backfill waits for about three of its
ticks (its first runs, the graph-wide run once the files are done, its end). The service tests
start `dagster dev` with this folder first on PYTHONPATH, so Python imports this module in the
daemon's process, and the constant is set when Dagster's controller module loads (the backfill
loop reads it from that module on each tick). Only `NARA_KG_TEST_DAEMON_INTERVAL_S` turns it on;
nothing outside the tests puts this folder on the path.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from types import ModuleType
from typing import Any

_TARGET = "dagster._daemon.controller"
_INTERVAL = os.environ.get("NARA_KG_TEST_DAEMON_INTERVAL_S")


class _SetIntervalOnLoad(importlib.abc.MetaPathFinder):
    def __init__(self, interval_s: int) -> None:
        self._interval_s = interval_s

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != _TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_set(module: ModuleType) -> None:
            exec_module(module)
            # Loud if Dagster renames it: the suite would silently wait 30 s per tick again.
            if not hasattr(module, "DEFAULT_DAEMON_INTERVAL_SECONDS"):
                raise AttributeError(f"{_TARGET} has no DEFAULT_DAEMON_INTERVAL_SECONDS")
            module.DEFAULT_DAEMON_INTERVAL_SECONDS = self._interval_s  # type: ignore[attr-defined]

        loader.exec_module = exec_and_set  # type: ignore[method-assign]
        return spec


if _INTERVAL:
    sys.meta_path.insert(0, _SetIntervalOnLoad(int(_INTERVAL)))
