"""One Dagster partition per input file: the partitions definition, keeping it in step with the
data folder, and which files a run covers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from nara_kg.ingest.inputs import list_input_paths

INPUT_FILES_PARTITIONS = "nara_input_files"
#: Partition key = the file's path relative to the data folder (forward slashes).
input_files = dg.DynamicPartitionsDefinition(name=INPUT_FILES_PARTITIONS)

#: Run tag of the full rebuild: every per-file stage recomputes instead of skipping.
REBUILD_TAG = "nara_kg/rebuild"
FULL = "full"

#: Characters Dagster does not accept in a partition key.
_INVALID_IN_KEY = ("...", "\a", "\b", "\f", "\n", "\r", "\t", "\v", "\0")


def valid_partition_key(rel_path: str) -> bool:
    return not any(bad in rel_path for bad in _INVALID_IN_KEY)


@dataclass(frozen=True)
class PartitionSync:
    added: list[str]
    removed: list[str]
    #: Files whose name cannot be a partition key (skipped, with the reason in the log).
    invalid: list[str]
    total: int


def sync_file_partitions(
    instance: dg.DagsterInstance, data_dir: Path, *, follow_external_links: bool = False
) -> PartitionSync:
    """Make the partitions equal the files under `data_dir`: add new files, delete gone ones."""
    on_disk = (
        list_input_paths(data_dir, follow_external_links=follow_external_links)
        if data_dir.is_dir()
        else []
    )
    valid = [rel for rel in on_disk if valid_partition_key(rel)]
    known = set(instance.get_dynamic_partitions(INPUT_FILES_PARTITIONS))
    added = [rel for rel in valid if rel not in known]
    removed = sorted(known - set(valid))
    if added:
        instance.add_dynamic_partitions(INPUT_FILES_PARTITIONS, added)
    for key in removed:
        instance.delete_dynamic_partition(INPUT_FILES_PARTITIONS, key)
    return PartitionSync(
        added=added,
        removed=removed,
        invalid=[rel for rel in on_disk if not valid_partition_key(rel)],
        total=len(valid),
    )


def files_of_run(
    context: dg.AssetExecutionContext, data_dir: Path, *, follow_external_links: bool = False
) -> tuple[list[str], bool]:
    """The files this run covers, and whether they came from the run's partitions.

    A partition or a range of partitions: those files. No partition at all (a job launched
    without one, e.g. `dagster job execute -j kg_full_rebuild`): every file of the export, and
    the partitions are brought in step with it first.
    """
    if context.has_partition_key or context.has_partition_key_range:
        return list(context.partition_keys), True
    sync_file_partitions(context.instance, data_dir, follow_external_links=follow_external_links)
    files = list_input_paths(data_dir, follow_external_links=follow_external_links)
    return [rel for rel in files if valid_partition_key(rel)], False


def is_full_rebuild(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext) -> bool:
    return context.run.tags.get(REBUILD_TAG) == FULL
