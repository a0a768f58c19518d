"""Names of every asset check, defined once, with the severity each one has and why.

The checks themselves live in :mod:`quality.checks` (bad input, Great Expectations suites,
graph checks) and, for entity linking and the retrieval thresholds, on the assets
:mod:`graph_assets.entity_mentions` and :mod:`graph_assets.retrieval_evaluation`. This module is
a leaf (no Dagster, no checks): both import it, and importing it never runs the quality
package. :mod:`quality.names` re-exports it with each check's Dagster severity.

Severity policy
---------------
* **Blocking, ERROR** — the check guards what the graph is built from or what search reads. A
  failure stops every downstream asset in the same run (Dagster skips them), so a bad parse
  never reaches Neo4j and a broken graph never reaches the evaluation:

  - ``parsed_records_reject_share``: too many bad input lines (threshold
    ``NARA_KG_MAX_REJECT_SHARE``, default 1%).
  - ``parsed_records_integrity``: naId present and unique, ten known types, record kinds,
    catalog URLs.
  - ``chunks_integrity``: chunks within the model's token limit (nothing silently truncated),
    chunkIds unique, chunkSeqIds contiguous.
  - ``graph_nodes_match_parquet``, ``text_embeddings_complete``, ``vector_index_online``,
    ``includes_relationships_consistent``, ``next_relationships_consistent``: the graph holds
    exactly what the Parquet says and search can use it.
  - ``community_reports_complete``: every Community node has a report
    (:func:`quality.checks.community_report_check` on the community_reports asset).
  - ``entity_mentions_match_labels``: entity linking reaches precision >= 0.95 and recall >=
    0.80 of (record, authority) pairs against ``mention_labels.jsonl`` beside the question file
    (written by the demo generator; checked by the entity_mentions asset itself; skipped,
    passing, when there is no label file).

* **Advisory, WARN, not blocking** — the data is usable even when the check fails; people should
  look, the run goes on:

  - ``parsed_records_dates``: every ``logicalDate_*`` value is a valid YYYY-MM-DD date. A bad
    date only makes one property wrong; it never breaks the graph.
  - ``parsed_records_body_cut``: no chosen record had its body text cut to
    ``NARA_KG_MAX_BODY_CHARS``; lists those that were.
  - ``includes_relationships_no_cycles``: no ancestor cycle had to be broken; lists those
    that were.
  - ``retrieval_meets_thresholds``: hit@5 and MRR@10 reach their minimums, over the question
    file or, without one, over known-item questions generated from the export (checked by the
    retrieval_evaluation asset itself); when nothing could be measured it fails as "not
    evaluated", a warning, never a pass.
"""

from __future__ import annotations

from typing import Final

# Bad input.
PARSED_RECORDS_REJECT_SHARE: Final = "parsed_records_reject_share"
# Great Expectations suites.
PARSED_RECORDS_INTEGRITY: Final = "parsed_records_integrity"
PARSED_RECORDS_DATES: Final = "parsed_records_dates"
#: Records whose body text was cut to NARA_KG_MAX_BODY_CHARS (advisory: the record is in the
#: graph, only the tail of its text is not searchable).
PARSED_RECORDS_BODY_CUT: Final = "parsed_records_body_cut"
#: Ancestor cycles broken while building Includes (advisory: the hierarchy was repaired).
ANCESTOR_CYCLES: Final = "includes_relationships_no_cycles"
CHUNKS_INTEGRITY: Final = "chunks_integrity"
#: The one step that runs the three Great Expectations suites on record_selection.
RECORD_SELECTION_SUITES: Final = "record_selection_suites"
# Graph checks (Cypher).
GRAPH_NODES_MATCH_PARQUET: Final = "graph_nodes_match_parquet"
TEXT_EMBEDDINGS_COMPLETE: Final = "text_embeddings_complete"
VECTOR_INDEX_ONLINE: Final = "vector_index_online"
INCLUDES_CONSISTENT: Final = "includes_relationships_consistent"
NEXT_CONSISTENT: Final = "next_relationships_consistent"
COMMUNITY_REPORTS_COMPLETE: Final = "community_reports_complete"
#: Entity linking against the demo generator's labels (yielded by the entity_mentions asset).
ENTITY_MENTIONS_LABELS: Final = "entity_mentions_match_labels"
# Retrieval quality (yielded by the retrieval_evaluation asset).
RETRIEVAL_THRESHOLDS_CHECK: Final = "retrieval_meets_thresholds"

#: Checks whose failure stops downstream assets (blocking=True, severity ERROR).
BLOCKING: Final[frozenset[str]] = frozenset(
    {
        PARSED_RECORDS_REJECT_SHARE,
        PARSED_RECORDS_INTEGRITY,
        CHUNKS_INTEGRITY,
        GRAPH_NODES_MATCH_PARQUET,
        TEXT_EMBEDDINGS_COMPLETE,
        VECTOR_INDEX_ONLINE,
        INCLUDES_CONSISTENT,
        NEXT_CONSISTENT,
        COMMUNITY_REPORTS_COMPLETE,
        ENTITY_MENTIONS_LABELS,
    }
)
#: Advisory checks (not blocking, severity WARN).
ADVISORY: Final[frozenset[str]] = frozenset(
    {PARSED_RECORDS_DATES, PARSED_RECORDS_BODY_CUT, ANCESTOR_CYCLES, RETRIEVAL_THRESHOLDS_CHECK}
)

#: Environment variable with the largest acceptable share of rejected lines (a fraction such as
#: ``0.01`` or a percentage such as ``1%``); read when the check runs, never at import time.
MAX_REJECT_SHARE_ENV: Final = "NARA_KG_MAX_REJECT_SHARE"
DEFAULT_MAX_REJECT_SHARE: Final = 0.01

#: How many offending values a check shows.
SAMPLE_SIZE: Final = 10


def is_blocking(check_name: str) -> bool:
    return check_name in BLOCKING
