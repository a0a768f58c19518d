"""The label ledger: a score kept up to date by replaced records equals the whole score."""

import random
from pathlib import Path

import pytest

from nara_kg.build.label_ledger import LabelLedger
from nara_kg.linking.labels import score_labels

AUTHORITIES = range(1, 40)


def _labels(rng: random.Random, records: int) -> dict[int, set[int]]:
    return {r: set(rng.sample(AUTHORITIES, rng.randint(0, 4))) for r in range(100, 100 + records)}


def _found(rng: random.Random, labels: dict[int, set[int]], records: range) -> set[tuple[int, int]]:
    """Mostly the labels, some missed, some wrong, and pairs of records without labels."""
    pairs = set()
    for record in records:
        for authority in labels.get(record, set()):
            if rng.random() < 0.85:
                pairs.add((record, authority))
        if rng.random() < 0.3:
            pairs.add((record, rng.choice(AUTHORITIES)))
    return pairs


def _split_lines(labels: dict[int, set[int]]) -> list[tuple[int, list[int]]]:
    lines: list[tuple[int, list[int]]] = []
    for record, names in labels.items():
        ordered = sorted(names)
        lines += [(record, ordered[: len(ordered) // 2]), (record, ordered[len(ordered) // 2 :])]
    return lines


@pytest.mark.parametrize("seed", range(8))
def test_replacing_records_gives_the_whole_score(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    labels = _labels(rng, 300)
    records = range(50, 450)  # some records carry no label line
    found = _found(rng, labels, records)
    with LabelLedger(tmp_path / "ledger.sqlite") as ledger:
        # Streamed as a labels file may give them: a record's line split in two, and pairs
        # found once per chunk.
        ledger.rebuild("labels-1", _split_lines(labels), [*found, *found], "g1")
        assert ledger.score() == score_labels(found, labels)
        for round_ in range(3):
            changed = set(rng.sample(records, 25))
            now = _found(rng, labels, range(50, 450))
            found = {p for p in found if p[0] not in changed} | {p for p in now if p[0] in changed}
            relinked = ledger.labelled(changed)
            assert relinked == sorted(changed & labels.keys())
            ledger.replace(relinked, [p for p in found if p[0] in changed], f"g{round_ + 2}")
            assert ledger.score() == score_labels(found, labels)


def test_it_belongs_to_one_labels_file_and_one_write(tmp_path: Path) -> None:
    with LabelLedger(tmp_path / "ledger.sqlite") as ledger:
        assert not ledger.matches("labels-1", "g1")
        ledger.rebuild("labels-1", {1: {2}}.items(), [(1, 2)], "g1")
        assert ledger.matches("labels-1", "g1")
        assert not ledger.matches("labels-2", "g1")
        assert not ledger.matches("labels-1", "g2")
        ledger.advance("g1", "g2")
        assert ledger.matches("labels-1", "g2")
        ledger.advance("g1", "g3")  # not the base it holds: stays
        assert not ledger.matches("labels-1", "g3")


def test_a_damaged_file_is_started_again(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    path.write_bytes(b"not a database" * 100)
    with LabelLedger(path) as ledger:
        assert not ledger.matches("labels-1", "g1")
        ledger.rebuild("labels-1", {1: {2}}.items(), [], "g1")
        assert ledger.score().false_negatives == 1
