"""Synthetic NARA Catalog records of all ten types, deterministic for a seed.

The project cannot ship real NARA data, and no real recordGroup, collection or authority record
is publicly available, so demos, tests and benchmarks run on records made here. They follow
`shared/data/nara/STRUCTURE.md` key for key: `{"record": {...}}` lines, int naIds,
`audiovisual` as a quoted string, date objects with `logicalDate` (year-only dates get -01-01 /
-12-31), ancestors farthest first with `distance`, series stubs in ancestors carrying their
creators, physicalOccurrences with referenceUnits and mediaOccurrences, digitalObjects (some
with OCR `extractedText`, some without `objectType`), restrictions, variantControlNumbers,
holdings counts written as floats, items that skip the fileUnit level, and organization
authorities whose `organizationNames[]` entries have their own naIds, which is what
descriptions' `creators[].naId` point at.

All text comes from the word lists and templates in `vocabulary`; nothing is copied from real
records. Places are invented towns in real states; URLs use the reserved domain example.org.

Walk it in the order the data is made: `world` (the shared state), `authorities`,
`record_groups`, `series`, `file_units`, `items` (with `descriptions` and `digital` for the
parts they share), `build` (how many of each), then `authority_records`, `real_creators`,
`questions` and `writer` (the entry point, re-exported here).
"""

from __future__ import annotations

from nara_kg.demo.writer import SHARD_LINES, DemoDataSummary, generate_demo_data

__all__ = ["SHARD_LINES", "DemoDataSummary", "generate_demo_data"]
