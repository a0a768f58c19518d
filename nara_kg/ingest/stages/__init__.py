"""The file-level stages of the build, one input file at a time: scan -> parse -> chunk -> embed;
then the graph-wide selection of one row per naId across every file.

Each per-file stage reads and writes only that file's parts under the work directory (see
:mod:`nara_kg.ingest.layout`), so files are independent Dagster partitions that run in parallel and
retry alone. A stage skips a file whose inputs are unchanged (content hash, chunker, model)
unless `force` is set (the full rebuild). The Dagster assets are thin wrappers around these
functions, one module per asset:

* :mod:`.raw_jsonl`: `scan_file` (size and content hash); `scan_inputs` over every file.
* :mod:`.parsed_records`: `parse_file` (records and rejects parts).
* :mod:`.record_selection`: `select_live_records` (graph-wide: one row per naId, the alias
  table, the parsed index, the rejects table); `parse_inputs` parses every file and selects.
* :mod:`.changes`: the change set the selection leaves for the graph writers (naIds added,
  changed or removed, files whose parts changed), computed from the changed files' chunk parts
  against :mod:`.record_index` (the chosen records in SQLite, by naId, parent and cited naId).
* :mod:`.chunks`: `chunk_file`; `chunk_records` over every file; `iter_chunks` and
  `record_links` read the chunks of the chosen rows.
* :mod:`.chunk_embeddings`: `plan_file`, `encode_pending`, `write_vectors` (vectors of the
  files' embeddable chunks, several files encoded together).
* :mod:`.file_run`: `run_file_stages`, the per-file stages over a run's files (two files
  prepared at a time, several files encoded together, a failed file isolated), returning a
  `FileStagesOutcome` that the Dagster op maps to materializations.
* :mod:`.common`: atomic JSON and Parquet writes shared by the stages.

Table schemas and column names: :mod:`nara_kg.model.tables`.
"""
