"""The Dagster UI in a real browser (Playwright driving Debian's /usr/bin/chromium; Playwright's
own browsers are never installed): after a build, the asset graph shows each per-file asset's
partitions, an asset page renders table metadata as a table, and a backfill of every partition
can be launched from the asset page's Materialize dialog.

Screenshots of each step go to var/test-artifacts/screenshots/.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.service import ui_pages
from tests.service.conftest import (
    FILE_ASSETS,
    GRAPH_ASSETS,
    SCREENSHOTS,
    DagsterService,
    input_partition_keys,
)
from tests.service.dagster_api import RUN_FINISHED
from tests.service.ui_pages import (
    ASSET_NODE,
    GRAPH_LINEAGE,
    GRAPH_VIEWPORT,
    PER_FILE_LINEAGE,
    open_page,
    ui_browser,
)

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

PAGE_VIEWPORT = {"width": 1600, "height": 1200}
SCREENSHOT_PREFIX = "service-ui-"
LAUNCH_OR_CONFIRM = re.compile("Launch runs to materialize|Additional assets will be materialized")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    for old in SCREENSHOTS.glob(f"{SCREENSHOT_PREFIX}*.png"):  # only ours: the folder is shared
        old.unlink()
    with ui_browser() as chromium:
        yield chromium


@pytest.fixture
def page_factory(browser: Any) -> Iterator[Any]:
    pages: list[Any] = []

    def new_page(viewport: dict[str, int] = PAGE_VIEWPORT) -> Any:
        pages.append(ui_pages.new_page(browser, viewport))
        return pages[-1]

    yield new_page
    for page in pages:
        page.context.close()


def screenshot(page: Any, name: str) -> Path:
    return ui_pages.screenshot(page, f"{SCREENSHOT_PREFIX}{name}")


def test_asset_graph_shows_the_partitions(built_service: DagsterService, page_factory: Any) -> None:
    from playwright.sync_api import expect

    n_files = len(input_partition_keys(built_service.data_dir))
    page = page_factory(GRAPH_VIEWPORT)

    def node_of(asset: str) -> Any:
        nodes = page.locator(ASSET_NODE)
        return nodes.filter(has=page.get_by_text(asset, exact=True)).first

    try:
        open_page(page, built_service, PER_FILE_LINEAGE)
        for asset in FILE_ASSETS:
            node = node_of(asset)
            expect(node).to_contain_text(f"{n_files} partitions")
            expect(node).to_contain_text("100% filled")
    finally:  # what the page showed, also when an expectation failed
        screenshot(page, "01-asset-graph-partitions")
    try:
        # The graph-wide assets are not partitioned: each simply shows its materialization.
        open_page(page, built_service, GRAPH_LINEAGE)
        for asset in GRAPH_ASSETS:
            node = node_of(asset)
            expect(node).to_contain_text("Materialized")
            expect(node).not_to_contain_text("partitions")
    finally:
        screenshot(page, "01a-asset-graph-graph-wide")
    open_page(page, built_service, PER_FILE_LINEAGE)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    node = node_of("parsed_records")
    node.screenshot(path=str(SCREENSHOTS / f"{SCREENSHOT_PREFIX}01b-parsed-records-node.png"))

    # The partitions tab of a per-file asset: every file materialized, none failed or missing.
    page = page_factory()
    open_page(page, built_service, "/assets/parsed_records?view=partitions")
    expect(page.get_by_text(f"{n_files} Partitions Selected")).to_be_visible()
    expect(page.get_by_text(f"Materialized ({n_files})")).to_be_visible()
    expect(page.get_by_text("Failed (0)")).to_be_visible()
    expect(page.get_by_text("Missing (0)")).to_be_visible()
    screenshot(page, "02-parsed-records-partitions")


def table_metadata(service: DagsterService, asset: str) -> dict[str, list[str]]:
    """key -> column names of the table metadata of the asset's latest materialization."""
    data = service.api.execute(
        """
        query ($key: AssetKeyInput!) {
          assetNodeOrError(assetKey: $key) {
            ... on AssetNode {
              assetMaterializations(limit: 1) {
                metadataEntries {
                  __typename label
                  ... on TableMetadataEntry {
                    table { schema { columns { name } } records }
                  }
                }
              }
            }
          }
        }
        """,
        {"key": {"path": [asset]}},
    )["assetNodeOrError"]
    events = data.get("assetMaterializations") or []
    assert events, f"{asset} has no materialization"
    entries = events[0]["metadataEntries"]
    assert not [e["label"] for e in entries if e["__typename"] == "MarkdownMetadataEntry"], (
        f"{asset} still has Markdown metadata"
    )
    return {
        entry["label"]: [column["name"] for column in entry["table"]["schema"]["columns"]]
        for entry in entries
        if entry["__typename"] == "TableMetadataEntry" and entry["table"]["records"]
    }


@pytest.mark.parametrize("asset", ["record_selection", "parsed_records"])
def test_asset_page_renders_table_metadata_as_a_table(
    built_service: DagsterService, page_factory: Any, asset: str
) -> None:
    from playwright.sync_api import expect

    tables = table_metadata(built_service, asset)
    assert tables, f"{asset}: no table metadata with rows"
    page = page_factory()
    open_page(page, built_service, f"/assets/{asset}")
    metadata = page.locator("table").filter(has_text="Key").filter(has_text="Value").first
    expect(metadata).to_be_visible()
    for key, columns in tables.items():
        row = metadata.locator("tr").filter(has_text=key).first
        expect(row).to_be_visible()
        # The value is a real table (the table metadata component), headed by the columns.
        rendered = row.locator("table").first
        expect(rendered).to_be_visible()
        headers = [text.strip() for text in rendered.locator("th").all_inner_texts()]
        assert headers[: len(columns)] == columns, (key, headers, columns)
        assert rendered.locator("tbody tr").count() > 0, key
        expect(row).not_to_contain_text("Show Markdown")
    metadata.scroll_into_view_if_needed()
    screenshot(page, f"03-{asset}-table-metadata")


def test_backfill_of_all_partitions_from_the_ui(
    built_service: DagsterService, page_factory: Any
) -> None:
    from playwright.sync_api import expect

    api = built_service.api
    n_files = len(input_partition_keys(built_service.data_dir))
    before = {backfill["id"] for backfill in api.backfills(limit=50)}

    page = page_factory()
    open_page(page, built_service, "/assets/parsed_records")
    page.get_by_role("button", name="Materialize…").first.click()
    first = page.get_by_role("dialog").filter(has_text=LAUNCH_OR_CONFIRM)
    expect(first).to_be_visible()
    if "Additional assets will be materialized" in first.inner_text():
        # The per-file stages are one multi-asset: the UI says the others come along.
        for other in set(FILE_ASSETS) - {"parsed_records"}:
            expect(first.get_by_role("link", name=other, exact=True)).to_be_visible()
        screenshot(page, "04-additional-assets-confirm")
        first.get_by_role("button", name="Confirm").click()
    dialog = page.get_by_role("dialog").filter(has_text="Launch runs to materialize")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="All", exact=True).click()
    expect(dialog).to_contain_text(f"{n_files} partitions selected")
    screenshot(page, "05-launch-dialog-all-partitions")
    dialog.get_by_role("button", name="Launch backfill").click()
    toast = page.get_by_text("Created backfill")
    expect(toast).to_be_visible()
    page.wait_for_timeout(1000)  # the toast fades in
    screenshot(page, "06-backfill-created")
    toast_id = re.search(r"Created backfill (\w+)", toast.inner_text())

    deadline = time.monotonic() + 30
    created: list[dict[str, Any]] = []
    while not created and time.monotonic() < deadline:
        created = [b for b in api.backfills(limit=50) if b["id"] not in before]
        time.sleep(0.5)
    assert len(created) == 1, created
    backfill = created[0]
    assert toast_id is not None and toast_id.group(1) == backfill["id"], toast_id
    selected = {"/".join(a["path"]) for a in backfill["assetSelection"]}
    assert "parsed_records" in selected and selected <= set(FILE_ASSETS), selected
    assert backfill["numPartitions"] == n_files

    # The backfill's page lists it; then it is canceled (what it would redo is unchanged).
    open_page(page, built_service, f"/runs/b/{backfill['id']}")
    expect(page.get_by_text(f"{n_files} partitions").first).to_be_visible()
    expect(page.get_by_text("parsed_records").first).to_be_visible()
    screenshot(page, "07-backfill-page")
    api.cancel_backfill(backfill["id"])
    api.wait_for_backfill(
        backfill["id"],
        timeout=300,
        until=lambda b: b.finished and all(r["status"] in RUN_FINISHED for r in b.runs),
    )
