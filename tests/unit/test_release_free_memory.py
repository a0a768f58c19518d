"""`release_free_memory` hands freed heap pages back only after the resident size has grown by
`RELEASE_AFTER_GROWTH_MB` since the last hand-back (each hand-back makes the next batches fault
their buffers in again), and always when forced or when the size cannot be read."""

from __future__ import annotations

import pytest

from nara_kg.embedding import encoder

MB = 2**20


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[int] | int | None]:
    """A stand-in glibc trim and /proc reading: `resident` is what the size reads; `trims` the
    sizes at which the heap was trimmed."""
    state: dict[str, list[int] | int | None] = {"resident": 500 * MB, "trims": []}

    def trim(_pad: int) -> int:
        trims = state["trims"]
        assert isinstance(trims, list)
        trims.append(int(state["resident"] or 0))
        return 1

    monkeypatch.setattr(encoder, "_malloc_trim", lambda: trim)
    monkeypatch.setattr(encoder, "resident_bytes", lambda: state["resident"])
    monkeypatch.setattr(encoder, "_resident_floor", None)
    return state


def test_first_call_trims_then_only_after_growth(machine: dict) -> None:
    assert encoder.release_free_memory() is True
    machine["resident"] = 500 * MB + (encoder.RELEASE_AFTER_GROWTH_MB - 1) * MB
    assert encoder.release_free_memory() is False
    machine["resident"] = 500 * MB + encoder.RELEASE_AFTER_GROWTH_MB * MB
    assert encoder.release_free_memory() is True
    assert machine["trims"] == [500 * MB, (500 + encoder.RELEASE_AFTER_GROWTH_MB) * MB]


def test_growth_counts_from_the_lowest_size_seen(machine: dict) -> None:
    machine["resident"] = 600 * MB
    encoder.release_free_memory()
    machine["resident"] = 450 * MB  # freed elsewhere (large buffers are unmapped directly)
    assert encoder.release_free_memory() is False
    machine["resident"] = 450 * MB + encoder.RELEASE_AFTER_GROWTH_MB * MB
    assert encoder.release_free_memory() is True


def test_force_and_unreadable_size_always_trim(machine: dict) -> None:
    encoder.release_free_memory()
    assert encoder.release_free_memory(force=True) is True
    machine["resident"] = None
    assert encoder.release_free_memory() is True
    assert len(machine["trims"]) == 3


def test_no_glibc_no_trim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoder, "_malloc_trim", lambda: None)
    assert encoder.release_free_memory(force=True) is False


def test_resident_bytes_reads_this_process() -> None:
    resident = encoder.resident_bytes()
    assert resident is None or resident > 10 * MB
