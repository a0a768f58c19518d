"""The README's examples come from the demo data `make demo` generates, never from real records:
its sample input line is a line of that export, and the facts it quotes about the graph
(the naId its Cypher queries use, the counts per type) are that export's."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from nara_kg.demo import generate_demo_data
from nara_kg.ingest.parsing.readers import iter_file
from nara_kg.ingest.parsing.results import ParsedRecord
from nara_kg.settings import PROJECT_ROOT

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
#: What `make demo` generates: the Makefile's DEMO_RECORDS and the CLI's default --seed.
DEMO_RECORDS, DEMO_SEED = 400, 7


@pytest.fixture(scope="module")
def demo_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("readme") / "data"
    generate_demo_data(root, records=DEMO_RECORDS, seed=DEMO_SEED)
    return root


def export_lines(root: Path) -> set[str]:
    return {
        line
        for path in root.rglob("*.jsonl")
        if path.parent != root  # questions and mention labels sit at the top
        for line in path.read_text(encoding="utf-8").splitlines()
    }


def parsed_records(root: Path) -> dict[int, ParsedRecord]:
    return {
        result.na_id: result
        for path in sorted(root.rglob("*.jsonl"))
        if path.parent != root
        for result in iter_file(path)
        if isinstance(result, ParsedRecord)
    }


def test_the_sample_input_line_is_a_generated_demo_line(demo_export: Path) -> None:
    match = re.search(r"```json\n(.*?)\n```", README, re.DOTALL)
    assert match, "the README shows no sample input line"
    line = match.group(1)
    assert "\n" not in line, "the sample is one line of JSON Lines"
    assert "record" in json.loads(line)
    assert line in export_lines(demo_export)


def test_the_cypher_examples_name_a_demo_record_and_its_hierarchy(demo_export: Path) -> None:
    cypher = re.search(r"```cypher\n(.*?)```", README, re.DOTALL)
    assert cypher, "the README has no Cypher examples"
    na_ids = {int(n) for n in re.findall(r"naId: (\d+)", cypher.group(1))}
    assert len(na_ids) == 1
    (na_id,) = na_ids
    records = parsed_records(demo_export)
    record = records[na_id]
    # The README says the hierarchy query gives the record group, the series and the file unit.
    assert record.node_type == "fileUnit"
    ancestors = record.properties["ancestors"]
    assert [records[a].node_type for a in reversed(ancestors)] == ["recordGroup", "series"]


def test_the_counts_quoted_for_the_demo_graph(demo_export: Path) -> None:
    quoted = re.search(
        r"\((\d+) records, [\d,]+ chunks, \d+ communities\) the first query gives (\d+) file\s+"
        r"units, (\d+) items, (\d+) series",
        README,
    )
    assert quoted, "the README no longer quotes the demo graph's counts"
    total, file_units, items, series = (int(n) for n in quoted.groups())
    by_type = Counter(r.node_type for r in parsed_records(demo_export).values())
    assert total == DEMO_RECORDS == sum(by_type.values())
    assert (file_units, items, series) == (by_type["fileUnit"], by_type["item"], by_type["series"])
