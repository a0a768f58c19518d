"""The NARA Catalog parser: JSON lines -> typed, flattened records (pure functions, no I/O at
import time).

* :mod:`.fields`: the field tables (seed 000's "Перечень атрибутов", one dict per record type)
  and the JSON shapes each key must have.
* :mod:`.results`: what the parser yields: ParsedRecord, Reference, StubRecord, Rejected, and
  the reject categories.
* :mod:`.values`: raw JSON values -> Neo4j-storable values; one field read from a record.
* :mod:`.dates`: the short date range shown in a chunk header.
* :mod:`.parse`: one record object -> a ParsedRecord (validation, references, stubs, body text).
* :mod:`.readers`: lines and files (plain, gzip, zip, a cut-short zip) -> parsed records and
  rejects, streamed.

The Parquet parts the parser's output is written to are :mod:`nara_kg.ingest.records`.
"""
