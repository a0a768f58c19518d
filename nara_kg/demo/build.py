"""The whole data set: how many records of each family, made in a fixed order.

Authorities come first (descriptions cite them), then record groups and collections, series,
file units and items; each record group's or collection's lines end up shuffled together.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from nara_kg.demo.authorities import (
    link_people,
    make_geography,
    make_orgs,
    make_people,
    make_records_types,
    make_topics,
)
from nara_kg.demo.file_units import make_file_unit
from nara_kg.demo.items import make_item
from nara_kg.demo.labels import record_labels
from nara_kg.demo.record_groups import make_collections, make_record_groups
from nara_kg.demo.series import make_series
from nara_kg.demo.text import record_line
from nara_kg.demo.world import World


def build_world(records: int, seed: int) -> World:
    """Every authority and every description of a data set of about `records` records."""
    world = World(records, seed)
    rng = world.rng
    target = world.target
    n_rg = 1 + target // 5000
    n_coll = 1 + target // 8000
    n_authorities = max(21, round(target * 0.08))
    wanted = {
        "organization": max(4, round(n_authorities * 0.25)),
        "person": max(4 + n_coll, round(n_authorities * 0.25)),
        "geographicPlaceName": max(4, round(n_authorities * 0.18)),
        "specificRecordsType": max(3, round(n_authorities * 0.12)),
        "topicalSubject": max(6, round(n_authorities * 0.20)),
    }
    make_geography(world, wanted["geographicPlaceName"])
    make_records_types(world, wanted["specificRecordsType"])
    make_topics(world, wanted["topicalSubject"])
    make_people(world, wanted["person"])
    make_orgs(world, wanted["organization"])
    link_people(world)
    make_record_groups(world, n_rg)
    make_collections(world, n_coll)
    n_auth = len(world.geo) + len(world.records_types) + len(world.topics)
    n_auth += len(world.people) + len(world.orgs)
    n_series = max(2 * len(world.tops), round(target * 0.05))
    rest = max(2, target - n_auth - len(world.tops) - n_series)
    n_items = max(1, round(rest * 0.32))
    n_file_units = max(1, rest - n_items)

    all_series = make_series(world, n_series)
    weights = [rng.paretovariate(1.3) for _ in all_series]
    records_by_top: dict[int, list[tuple[dict[str, Any], Any]]] = {
        top.na_id: [] for top in world.tops
    }
    for series in rng.choices(all_series, weights, k=n_file_units):
        records_by_top[series.top.na_id].append((make_file_unit(world, series), None))
    with_units = [s for s in all_series if s.file_units]
    item_counts: Counter[int] = Counter()
    for series in rng.choices(all_series, weights, k=n_items):
        file_unit = None
        # Most items sit in a file unit; some hang directly under the series.
        if rng.random() < 0.7 and (series.file_units or with_units):
            host = series if series.file_units else rng.choice(with_units)
            series = host
            file_unit = rng.choice(host.file_units)
            item_counts[file_unit["naId"]] += 1
        item, transcription = make_item(world, series, file_unit)
        records_by_top[series.top.na_id].append((item, transcription))

    for series in all_series:
        if series.file_units and rng.random() < 0.7:
            series.record["fileUnitCount"] = len(series.file_units)
        if series.items and rng.random() < 0.5:
            series.record["itemCount"] = series.items
        for file_unit in series.file_units:
            if item_counts[file_unit["naId"]] and rng.random() < 0.5:
                file_unit["itemCount"] = item_counts[file_unit["naId"]]
        records_by_top[series.top.na_id].append((series.record, None))
    for top in world.tops:
        top.record["seriesCount"] = len(top.series)
        entries = [(top.record, None), *records_by_top[top.na_id]]
        # Shards interleave levels, as in the real export.
        rng.shuffle(entries)
        top.lines = [record_line(record, transcription) for record, transcription in entries]
        for record, transcription in entries:
            world.counts[record["levelOfDescription"]] += 1
            label = record_labels(world, record, transcription)
            if label is not None:
                world.labels.append(label)
    return world
