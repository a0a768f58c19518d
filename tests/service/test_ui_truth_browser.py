"""What the Dagster UI shows is true, read in a real browser (Debian's Chromium through
Playwright) after a complete build: a partition's metadata shows its own file's figures; after
re-running an unchanged partition the assets downstream are not "Unsynced"; the evaluation's
check is green only with a measured result.

Screenshots go to var/test-artifacts/screenshots/.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.service.conftest import (
    BUILD_TIMEOUT_S,
    FILE_ASSETS,
    GRAPH_ASSETS,
    DagsterService,
    input_partition_keys,
)
from tests.service.ui_pages import (
    ASSET_NODE,
    GRAPH_LINEAGE,
    GRAPH_VIEWPORT,
    new_page,
    open_page,
    screenshot,
    ui_browser,
)

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

PAGE_VIEWPORT = {"width": 1600, "height": 1400}
PREFIX = "service-ui-truth-"


@pytest.fixture(scope="module")
def page(built_service: DagsterService) -> Iterator[Any]:
    with ui_browser() as browser:
        yield new_page(browser, PAGE_VIEWPORT)


def shot(page: Any, name: str) -> None:
    screenshot(page, f"{PREFIX}{name}", full_page=True)


def partition_metadata(service: DagsterService, asset: str, partition: str) -> dict[str, str]:
    """label -> text of the latest materialization of one partition, through GraphQL."""
    data = service.api.execute(
        """
        query ($key: AssetKeyInput!, $partition: String!) {
          assetNodeOrError(assetKey: $key) {
            ... on AssetNode {
              assetMaterializations(partitions: [$partition], limit: 1) {
                partition
                metadataEntries {
                  label
                  ... on IntMetadataEntry { intValue }
                  ... on TextMetadataEntry { text }
                }
              }
            }
          }
        }
        """,
        {"key": {"path": [asset]}, "partition": partition},
    )["assetNodeOrError"]
    [event] = data["assetMaterializations"]
    assert event["partition"] == partition
    return {
        entry["label"]: str(entry.get("intValue", entry.get("text")))
        for entry in event["metadataEntries"]
    }


def stale_statuses(service: DagsterService) -> dict[str, str]:
    data = service.api.execute(
        """
        query { assetNodes { assetKey { path } isPartitioned staleStatus } }
        """
    )["assetNodes"]
    return {
        "/".join(node["assetKey"]["path"]): node["staleStatus"]
        for node in data
        if not node["isPartitioned"]
    }


def test_a_partition_shows_its_own_files_figures(built_service: DagsterService, page: Any) -> None:
    from playwright.sync_api import expect

    keys = input_partition_keys(built_service.data_dir)
    lines = {
        key: sum(1 for line in (built_service.data_dir / key).open() if line.strip())
        for key in keys
    }
    # A file whose line count no other file shares, so the figure can only be its own.
    counts = list(lines.values())
    key = next((k for k, n in lines.items() if counts.count(n) == 1), keys[0])
    metadata = partition_metadata(built_service, "parsed_records", key)
    assert metadata["file"] == key
    assert metadata["lines"] == str(lines[key])
    assert metadata["lines"] != str(sum(counts))
    assert "per_file" not in metadata

    open_page(page, built_service, f"/assets/parsed_records?view=partitions&partition={key}")
    row = page.locator("tr").filter(has_text="lines_rejected").first
    expect(row).to_be_visible()
    lines_row = page.locator("tr").filter(has=page.get_by_text("lines", exact=True)).first
    expect(lines_row).to_contain_text(str(lines[key]))
    expect(
        page.locator("tr").filter(has=page.get_by_text("file", exact=True)).first
    ).to_contain_text(key)
    shot(page, "01-partition-metadata")


def test_rerunning_an_unchanged_partition_leaves_downstream_synced(
    built_service: DagsterService, page: Any
) -> None:
    from playwright.sync_api import expect

    before = stale_statuses(built_service)
    assert {before[a] for a in GRAPH_ASSETS} == {"FRESH"}, before
    key = input_partition_keys(built_service.data_dir)[1]
    backfill_id = built_service.api.launch_backfill(
        list(FILE_ASSETS), partition_names=[key], title="service test: unchanged partition"
    )
    backfill = built_service.api.wait_for_backfill(backfill_id, timeout=BUILD_TIMEOUT_S)
    assert backfill.status == "COMPLETED_SUCCESS", backfill
    after = stale_statuses(built_service)
    assert {after[a] for a in GRAPH_ASSETS} == {"FRESH"}, after

    page.set_viewport_size(GRAPH_VIEWPORT)
    try:
        open_page(page, built_service, GRAPH_LINEAGE)
        node = page.locator(ASSET_NODE)
        expect(
            node.filter(has=page.get_by_text("record_selection", exact=True)).first
        ).to_contain_text("Materialized")
        expect(page.get_by_text("Unsynced")).to_have_count(0)
    finally:
        shot(page, "02-graph-after-unchanged-partition")
        page.set_viewport_size(PAGE_VIEWPORT)


def test_the_evaluation_check_is_green_only_with_a_measured_result(
    built_service: DagsterService, page: Any
) -> None:
    from playwright.sync_api import expect

    data = built_service.api.execute(
        """
        query {
          assetNodeOrError(assetKey: {path: ["retrieval_evaluation"]}) {
            ... on AssetNode {
              assetChecksOrError {
                ... on AssetChecks {
                  checks {
                    name
                    executionForLatestMaterialization {
                      status
                      evaluation {
                        success
                        metadataEntries {
                          label
                          ... on FloatMetadataEntry { floatValue }
                          ... on BoolMetadataEntry { boolValue }
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
        """
    )["assetNodeOrError"]["assetChecksOrError"]["checks"]
    [check] = [c for c in data if c["name"] == "retrieval_meets_thresholds"]
    evaluation = check["executionForLatestMaterialization"]["evaluation"]
    figures = {
        e["label"]: e.get("floatValue", e.get("boolValue")) for e in evaluation["metadataEntries"]
    }
    assert evaluation["success"] == (figures["hit_at_5"] >= 0.6 and figures["mrr_at_10"] >= 0.4)
    assert "skipped" not in figures

    open_page(page, built_service, "/assets/retrieval_evaluation?view=checks")
    expect(page.get_by_text("retrieval_meets_thresholds").first).to_be_visible()
    expect(page.get_by_text("Evaluation result")).to_be_visible()
    verdict = "Passed" if evaluation["success"] else "Failed"
    expect(page.get_by_text(verdict).first).to_be_visible()
    # The verdict stands on figures shown beside it.
    expect(page.locator("tr").filter(has_text="hit_at_5").first).to_be_visible()
    expect(page.locator("tr").filter(has_text="mrr_at_10").first).to_be_visible()
    shot(page, "03-evaluation-check")
