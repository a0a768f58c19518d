"""Parts are written with dictionaries only where values repeat: never on vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from nara_kg.ingest.stages.common import dictionary_columns, write_table
from nara_kg.model.tables import vector_schema


def test_vectors_are_written_without_a_dictionary_and_read_back_equal(tmp_path: Path) -> None:
    schema = vector_schema(4, "model:onnx:0")
    vectors = np.arange(24, dtype=np.float32).reshape(6, 4)
    table = pa.Table.from_arrays(
        [
            pa.array([f"{n}-0" for n in range(6)]),
            pa.array(["same"] * 6),
            pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), 4),
        ],
        schema=schema,
    )
    assert dictionary_columns(schema) == [schema.names[0], schema.names[1]]
    path = tmp_path / "part.parquet"
    write_table(table, path)
    columns = pq.ParquetFile(path).metadata.row_group(0)
    encodings = {columns.column(i).path_in_schema: columns.column(i).encodings for i in range(3)}
    assert not any("DICTIONARY" in e for e in encodings[f"{schema.names[2]}.list.element"])
    assert any("DICTIONARY" in e for e in encodings[schema.names[1]])
    read = pq.read_table(path)
    assert read.equals(table)
    assert read.schema.metadata == schema.metadata


def test_nested_float_lists_count_as_floats() -> None:
    schema = pa.schema(
        [
            ("name", pa.string()),
            ("weights", pa.list_(pa.list_(pa.float64()))),
            ("counts", pa.list_(pa.int64())),
            ("score", pa.float32()),
        ]
    )
    assert dictionary_columns(schema) == ["name", "counts"]
