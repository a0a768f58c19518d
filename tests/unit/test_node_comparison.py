"""graph_nodes' whole path keeps the chunk nodes' row hashes on disk: a chunk the input has
takes its row out, whatever is left is what the input lost, and the scratch file goes."""

from __future__ import annotations

from pathlib import Path

import pytest

from nara_kg.build import node_comparison
from nara_kg.build.node_comparison import ExistingHashes


def test_taken_rows_leave_the_store_and_the_rest_come_out_in_order(tmp_path: Path) -> None:
    path = tmp_path / "scratch" / "nodes.sqlite"
    rows = [(f"{n}-0", f"h{n}") for n in range(30, 0, -1)]
    with ExistingHashes(path) as existing:
        # A later row of a chunk replaces an earlier one, as a dict would.
        assert existing.fill([*rows, ("5-0", "newer"), ("9-1", None)]) == 32
        assert existing.take(["5-0", "9-1", "404-0"]) == {"5-0": "newer", "9-1": None}
        # Taken once: a second question finds nothing.
        assert existing.take(["5-0"]) == {}
        left = [chunk for batch in existing.left() for chunk in batch]
        assert left == sorted(chunk for chunk, _ in rows if chunk != "5-0")
        assert path.exists()
    assert not path.exists()


def test_keys_beyond_one_statement_and_batches_beyond_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(node_comparison, "BATCH_ROWS", 7)
    rows = [(f"{n}-0", "h") for n in range(2_000)]
    with ExistingHashes(tmp_path / "nodes.sqlite") as existing:
        existing.fill(rows)
        taken = existing.take([chunk for chunk, _ in rows[:1_950]])
        assert len(taken) == 1_950
        batches = list(existing.left())
        assert [len(b) for b in batches] == [7] * 7 + [1]
        assert sorted(c for b in batches for c in b) == sorted(c for c, _ in rows[1_950:])
