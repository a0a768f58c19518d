"""What the assets say about themselves stays true: every asset names the core function it
calls, every dotted `nara_kg` name in an asset description or a graph_assets module docstring
exists, and every asset check is declared in quality.names."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest

import graph_assets
from graph_assets import ALL_ASSETS
from quality import names

DOTTED = re.compile(r"\bnara_kg(?:\.\w+)+")
#: "Core: a.b.c" or "Core: a.b.c, d.e.f" (the functions the asset's body calls).
CORE = re.compile(r"Core: (nara_kg(?:\.\w+)+(?:, nara_kg(?:\.\w+)+)*)")


def resolve(dotted: str) -> Any:
    """The object a dotted name denotes: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        module_name = ".".join(parts[:end])
        try:
            found: Any = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            missing = error.name or ""
            if module_name == missing or module_name.startswith(missing + "."):
                continue  # not a module: the rest are attributes
            raise  # the module exists, but something it imports does not
        for attribute in parts[end:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


def _descriptions() -> dict[str, str]:
    return {
        spec.key.to_user_string(): spec.description or ""
        for asset in ALL_ASSETS
        for spec in asset.specs
    }


def _module_docs() -> dict[str, str]:
    modules = [graph_assets.__name__] + [
        f"{graph_assets.__name__}.{info.name}"
        for info in pkgutil.iter_modules(graph_assets.__path__)
    ]
    return {name: importlib.import_module(name).__doc__ or "" for name in modules}


#: Asset key -> its description; graph_assets module -> its docstring.
DESCRIPTIONS = _descriptions()
TEXTS = {**DESCRIPTIONS, **_module_docs()}


@pytest.mark.parametrize("asset", sorted(DESCRIPTIONS))
def test_every_asset_names_the_core_functions_it_calls(asset: str) -> None:
    match = CORE.search(DESCRIPTIONS[asset])
    assert match, f"{asset}: its description has no 'Core: nara_kg....'"
    for dotted in match.group(1).split(", "):
        assert callable(resolve(dotted)), f"{asset}: {dotted} is not a function"


@pytest.mark.parametrize("where", sorted(TEXTS))
def test_dotted_core_names_exist(where: str) -> None:
    for dotted in DOTTED.findall(TEXTS[where]):
        try:
            resolve(dotted)
        except (ImportError, AttributeError) as error:
            pytest.fail(f"{where} names {dotted}, which does not exist: {error}")


def test_resolve_fails_on_a_name_that_does_not_exist() -> None:
    assert resolve("nara_kg.build.nodes.sync_nodes") is not None
    with pytest.raises(AttributeError):
        resolve("nara_kg.build.nodes.no_such_function")
    with pytest.raises(AttributeError):
        resolve("nara_kg.no_such_module.sync_nodes")


def test_every_asset_check_is_declared_in_quality_names() -> None:
    declared = names.BLOCKING | names.ADVISORY
    for asset in ALL_ASSETS:
        for spec in asset.check_specs:
            assert spec.name in declared, spec.name
            assert spec.blocking == names.is_blocking(spec.name)


def test_the_ui_source_code_link_opens_the_module_that_defines_the_asset() -> None:
    """The UI's "Source code" link of each asset opens the graph_assets module where its
    function is defined, at its decorators, not the wrapper every asset shares (common.py)."""
    from graph_assets import CODE_REFERENCES, build_defs

    defs = build_defs("0 2 * * *", "UTC")
    for asset in defs.assets or []:
        for key in asset.keys:
            (reference,) = asset.metadata_by_key[key][CODE_REFERENCES].code_references
            lines = Path(reference.file_path).read_text().splitlines()
            below = lines[reference.line_number - 1 :]
            first_def = next(line for line in below if line.lstrip().startswith("def "))
            assert first_def.startswith(f"def {asset.op.name}("), (key, reference.file_path)
            assert lines[reference.line_number - 1].startswith("@"), key
