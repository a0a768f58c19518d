"""What the Dagster UI shows reads well: descriptions keep what Markdown would swallow in code
spans and speak the operator's language, size buckets sort by size, and the per-file and
graph-wide assets are two groups."""

from __future__ import annotations

import re

import pytest

from graph_assets import ALL_ASSETS, FILE_SPECS
from graph_assets.common import GRAPH_GROUP, PER_FILE_GROUP
from graph_assets.graph_communities import size_distribution_rows

DESCRIPTIONS = {
    spec.key.to_user_string(): spec.description or ""
    for asset in ALL_ASSETS
    for spec in asset.specs
}
CODE_SPAN = re.compile(r"`[^`]*`")


@pytest.mark.parametrize("asset", sorted(DESCRIPTIONS))
def test_descriptions_keep_angle_brackets_in_code_and_name_no_seeds(asset: str) -> None:
    text = DESCRIPTIONS[asset]
    outside_code = CODE_SPAN.sub("", text)
    # Markdown takes "<level>" for an HTML tag and drops it.
    assert not re.search(r"<[A-Za-z/]", outside_code), asset
    assert not re.search(r"\bseed\s*\d|\bthe seed\b", text), asset


def test_community_size_buckets_sort_by_size() -> None:
    distribution = {"<= 10": 4, "<= 100": 1, "<= 1000": 1, "<= 2": 9, "<= 5": 7, "> 1000": 1}
    assert [row["size"] for row in size_distribution_rows(distribution)] == [
        "<= 2",
        "<= 5",
        "<= 10",
        "<= 100",
        "<= 1000",
        "> 1000",
    ]


def test_per_file_and_graph_wide_assets_are_two_groups() -> None:
    file_keys = {spec.key for spec in FILE_SPECS}
    groups = {spec.key: spec.group_name for asset in ALL_ASSETS for spec in asset.specs}
    assert {groups[key] for key in file_keys} == {PER_FILE_GROUP}
    assert {group for key, group in groups.items() if key not in file_keys} == {GRAPH_GROUP}
