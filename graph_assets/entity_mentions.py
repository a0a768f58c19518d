"""The entity_mentions asset: authority records named in chunk text, as MENTIONED_IN
relationships written by difference, with its blocking check against the demo generator's
labels (named in :mod:`nara_kg.model.check_names`)."""

from collections.abc import Iterator
from typing import Any

import dagster as dg

from graph_assets.common import (
    RECORDS_TOUCHED,
    counts_table,
    neo4j_writer_asset,
    severity,
    table,
    timed,
)
from graph_assets.graph_nodes import graph_nodes
from graph_assets.partitions import is_full_rebuild
from nara_kg.build import mention_changes
from nara_kg.linking.labels import MIN_PRECISION, MIN_RECALL
from nara_kg.model.check_names import ENTITY_MENTIONS_LABELS, is_blocking
from resources import Neo4jResource, PipelinePaths


@neo4j_writer_asset(
    deps=[graph_nodes],
    check_specs=[
        dg.AssetCheckSpec(
            ENTITY_MENTIONS_LABELS,
            asset="entity_mentions",
            description=(
                f"precision >= {MIN_PRECISION} and recall >= {MIN_RECALL} of (record, "
                "authority) pairs against mention_labels.jsonl (skipped without one)"
            ),
            blocking=is_blocking(ENTITY_MENTIONS_LABELS),
        )
    ],
    description=(
        "`MENTIONED_IN {count, surface}`: authority first chunk -> each chunk whose text names "
        "the authority (heading, variant and former names, inverted person names; "
        "Aho-Corasick over normalized forms, shared forms settled by the record's context or "
        "left unlinked). Incremental: a change set relinks only its records' chunks, those "
        "below them and the chunks holding an old or new form of an authority whose linking "
        "changed (nara_kg.build.mention_index), and each "
        "chunk's mentions are cached by row hash, context and linker fingerprint. "
        "Core: nara_kg.build.mention_changes.sync_entity_mentions."
    ),
)
def entity_mentions(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource, paths: PipelinePaths
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    metadata: dict[str, Any] = {}
    labels_path = paths.mention_labels_path
    with timed(metadata):
        result = mention_changes.sync_entity_mentions(
            neo4j.get_driver(),
            neo4j.database,
            paths.layout,
            labels_path=labels_path,
            trust_snapshot=not is_full_rebuild(context),
        )
    sync = result.sync
    context.log.info(
        f"{result.mentions} mentions in {result.chunks_with_mentions}/{result.chunks} chunks; "
        f"relinked {result.relinked}, reused {result.reused}"
    )
    label_metadata: dict[str, Any] = {"labels_file_found": result.labels is not None}
    if result.labels is not None:
        label_metadata.update(
            {
                "label_precision": dg.MetadataValue.float(round(result.labels.precision, 4)),
                "label_recall": dg.MetadataValue.float(round(result.labels.recall, 4)),
                "labelled_records": result.labels.records,
                # Records whose MENTIONED_IN the score read again (nara_kg.build.label_ledger).
                "label_records_read": result.label_records_read,
            }
        )
    yield dg.MaterializeResult(
        metadata={
            **metadata,
            RECORDS_TOUCHED: result.records_touched,
            # "changes": only the change set's chunks; "whole": every chunk (whole_reason).
            "sync_mode": result.mode,
            "whole_reason": result.whole_reason,
            "link_seconds": dg.MetadataValue.float(round(result.link_seconds, 3)),
            "authorities": result.authorities,
            "surface_forms": result.surface_forms,
            "mentions": result.mentions,
            "mentions_by_type": counts_table(dict(result.by_type)),
            "chunks": result.chunks,
            "chunks_with_mentions": result.chunks_with_mentions,
            "share_chunks_with_mentions": dg.MetadataValue.float(
                round(result.share_with_mentions, 4)
            ),
            "ambiguous_unlinked": result.ambiguous_total,
            "ambiguous_sample": table(result.ambiguous),
            "chunks_relinked": result.relinked,
            # Why: "own" (changed records), "below" (their descendants, or citing a moved
            # alias), "name_match" (holding a changed authority's form); "all" (whole).
            **{
                f"chunks_relinked_{why}": result.relinked_by.get(why, 0)
                for why in ("own", "below", "name_match", "all")
            },
            "authorities_changed": result.authorities_changed,
            "chunks_reused": result.reused,
            "relationships": sync.desired if sync else 0,
            "added": sync.added if sync else 0,
            "updated": sync.updated if sync else 0,
            "removed": sync.removed if sync else 0,
            "existing_state_from": sync.existing_from if sync else "graph",
            "linker_fingerprint": result.fingerprint[:16],
            **label_metadata,
        }
    )
    if result.labels is None:
        yield dg.AssetCheckResult(
            check_name=ENTITY_MENTIONS_LABELS,
            passed=True,
            severity=severity(ENTITY_MENTIONS_LABELS),
            description=f"skipped: no mention label file at {labels_path}",
            metadata={"skipped": True},
        )
        return
    score = result.labels
    yield dg.AssetCheckResult(
        check_name=ENTITY_MENTIONS_LABELS,
        passed=score.passed,
        severity=severity(ENTITY_MENTIONS_LABELS),
        metadata={
            **score.to_dict(),
            "min_precision": MIN_PRECISION,
            "min_recall": MIN_RECALL,
            "false_positive_sample": str(list(score.false_positive_sample)),
            "false_negative_sample": str(list(score.false_negative_sample)),
        },
    )
