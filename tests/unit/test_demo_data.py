"""Tests of the synthetic NARA record generator (nara_kg.demo)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from nara_kg.demo import SHARD_LINES, DemoDataSummary, generate_demo_data
from nara_kg.ingest.parsing.readers import iter_file
from nara_kg.ingest.parsing.results import ParsedRecord, Rejected
from nara_kg.model.schema import AUTHORITY_TYPES, DESCRIPTION_TYPES, RECORD_TYPES

EXPORT_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "nara" / "export"
needs_real_data = pytest.mark.skipif(
    not EXPORT_DIR.is_dir(), reason="real NARA samples (../shared/data/nara) not present"
)

LAYOUT = re.compile(
    r"^(descriptions/record-groups/(rg_\d+)/\2-\d+\.jsonl"
    r"|descriptions/collections/(coll_[A-Z0-9-]+)/\3-\d+\.jsonl"
    r"|authority-records/(person|organization|geographic-reference|specific-records-type"
    r"|topical-subject)/\4-\d+\.jsonl)$"
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DemoDataSummary]:
    out = tmp_path_factory.mktemp("demo")
    return out, generate_demo_data(out, records=400, seed=7)


@pytest.fixture(scope="module")
def parsed(demo: tuple[Path, DemoDataSummary]) -> list[ParsedRecord | Rejected]:
    _, summary = demo
    return [result for path in summary.files for result in iter_file(path)]


@pytest.fixture(scope="module")
def raw_records(demo: tuple[Path, DemoDataSummary]) -> list[dict[str, Any]]:
    _, summary = demo
    lines: list[dict[str, Any]] = []
    for path in summary.files:
        with path.open(encoding="utf-8") as handle:
            lines.extend(json.loads(line) for line in handle)
    return lines


def records_of(parsed: list[ParsedRecord | Rejected]) -> dict[int, ParsedRecord]:
    return {r.na_id: r for r in parsed if isinstance(r, ParsedRecord)}


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_seed_gives_byte_identical_files(tmp_path: Path) -> None:
    first = generate_demo_data(tmp_path / "a", records=300, seed=11)
    second = generate_demo_data(tmp_path / "b", records=300, seed=11)
    generate_demo_data(tmp_path / "c", records=300, seed=12)
    a, b, c = tree_bytes(tmp_path / "a"), tree_bytes(tmp_path / "b"), tree_bytes(tmp_path / "c")
    assert a == b
    assert len(a) >= 8
    assert a != c
    assert first.records_by_type == second.records_by_type


def test_layout_and_shards(demo: tuple[Path, DemoDataSummary]) -> None:
    out, summary = demo
    relative = [p.relative_to(out).as_posix() for p in summary.files]
    assert relative == sorted(relative)
    for name in relative:
        assert LAYOUT.match(name), name
    assert any(n.startswith("descriptions/record-groups/rg_") for n in relative)
    assert any(n.startswith("descriptions/collections/coll_") for n in relative)
    kinds = {n.split("/")[1] for n in relative if n.startswith("authority-records/")}
    assert kinds == {
        "person",
        "organization",
        "geographic-reference",
        "specific-records-type",
        "topical-subject",
    }
    sizes = [len(p.read_text(encoding="utf-8").splitlines()) for p in summary.files]
    assert max(sizes) == SHARD_LINES  # the record group spills into a second shard
    assert all(0 < size <= SHARD_LINES for size in sizes)
    assert summary.questions_path == out / "questions.jsonl"


def test_every_line_parses_and_all_ten_types_are_present(
    demo: tuple[Path, DemoDataSummary], parsed: list[ParsedRecord | Rejected]
) -> None:
    _, summary = demo
    assert [r for r in parsed if isinstance(r, Rejected)] == []
    counts = Counter(r.node_type for r in parsed if isinstance(r, ParsedRecord))
    assert set(counts) == set(RECORD_TYPES)
    assert dict(counts) == summary.records_by_type
    assert sum(counts.values()) == 400
    assert len(records_of(parsed)) == 400  # naIds are unique
    assert counts["fileUnit"] > counts["item"] > counts["series"] > counts["recordGroup"]
    for record in records_of(parsed).values():
        for value in record.properties.values():
            assert value is not None and value != "N/A"


def test_shards_interleave_levels(demo: tuple[Path, DemoDataSummary]) -> None:
    _, summary = demo
    mixed = 0
    for path in summary.files:
        if "descriptions" in path.parts:
            levels = [
                json.loads(line)["record"]["levelOfDescription"]
                for line in path.read_text(encoding="utf-8").splitlines()
            ]
            mixed += len(set(levels)) >= 3 and levels != sorted(levels)
    assert mixed >= 2


def test_every_reference_resolves_to_a_generated_authority(
    parsed: list[ParsedRecord | Rejected],
) -> None:
    records = records_of(parsed)
    aliases = {alias: r.na_id for r in records.values() for alias in r.org_name_aliases}
    via_alias = 0
    rels: Counter[str] = Counter()
    for record in records.values():
        references = list(record.references)
        for stub in record.stubs:
            references.extend(stub.references)
        for reference in references:
            target = reference.na_id if reference.na_id in records else aliases.get(reference.na_id)
            assert target is not None, (record.na_id, reference)
            assert records[target].node_type in AUTHORITY_TYPES, reference
            if reference.authority_type is not None:
                assert records[target].node_type == reference.authority_type, reference
            via_alias += reference.na_id not in records
            rels[reference.rel] += 1
    assert via_alias > 0  # description creators cite nested organization names
    # Every kind of authority relationship is exercised.
    assert set(rels) == {
        "broaderTerm",
        "contributor",
        "creator",
        "subject",
        "donor",
        "narrowerTerm",
        "organizationalReference",
        "relatedTerm",
        "jurisdiction",
        "organizationName",
        "personalReference",
    }


def test_description_hierarchy_is_complete(parsed: list[ParsedRecord | Rejected]) -> None:
    records = records_of(parsed)
    for record in records.values():
        if record.node_type in DESCRIPTION_TYPES and record.node_type not in (
            "recordGroup",
            "collection",
        ):
            assert record.parent_na_id in records, record.na_id
            chain = record.properties["ancestors"]
            assert records[chain[-1]].node_type in ("recordGroup", "collection")
    for top in ("recordGroup", "collection"):
        top_ids = {r.na_id for r in records.values() if r.node_type == top}
        children = {
            r.node_type
            for r in records.values()
            if r.properties.get("ancestors", [0])[-1] in top_ids
        }
        assert children == {"series", "fileUnit", "item"}, top


def test_structure_quirks_of_the_real_export(raw_records: list[dict[str, Any]]) -> None:
    records = [line["record"] for line in raw_records]
    by_level: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_level.setdefault(record.get("levelOfDescription") or record["authorityType"], []).append(
            record
        )
    assert all(isinstance(r["naId"], int) for r in records)
    # audiovisual is a quoted string, in both capitalizations.
    flags = {item["audiovisual"] for item in by_level["item"]}
    assert flags <= {"False", "false", "True"} and {"False", "false"} <= flags
    # Ancestors are listed farthest first, with distance.
    for record in by_level["item"] + by_level["fileUnit"] + by_level["series"]:
        distances = [a["distance"] for a in record["ancestors"]]
        assert distances == sorted(distances, reverse=True) and distances[-1] == 1
    item_paths = Counter(
        tuple(a["levelOfDescription"] for a in item["ancestors"]) for item in by_level["item"]
    )
    assert any(path[-1] == "series" for path in item_paths)  # items that skip the fileUnit level
    assert any(path[-1] == "fileUnit" for path in item_paths)
    # Series stubs inside ancestors carry their creators.
    assert all(
        a.get("creators")
        for r in by_level["fileUnit"]
        for a in r["ancestors"]
        if a["levelOfDescription"] == "series"
    )
    # Holdings counts are floats; year-only dates get -01-01 / -12-31.
    counts = [
        m["count"]
        for s in by_level["series"]
        for o in s["physicalOccurrences"]
        for m in o.get("holdingsMeasurements", [])
    ]
    assert counts and all(isinstance(c, float) for c in counts)
    for series in by_level["series"]:
        end = series["inclusiveEndDate"]
        if "month" not in end:
            assert end["logicalDate"] == f"{end['year']}-12-31"
    # Restrictions, variant numbers, and API-style optional fields appear.
    assert any(r["accessRestriction"]["status"] != "Unrestricted" for r in by_level["series"])
    assert all("useRestriction" in r for r in by_level["fileUnit"])
    assert any(len(r.get("variantControlNumbers", [])) > 1 for r in by_level["series"])
    assert "referenceUnits" in by_level["recordGroup"][0]
    assert by_level["collection"][0]["donors"]
    # Digital objects: some without objectType, OCR on some, some of it long.
    objects = [o for r in records for o in r.get("digitalObjects", [])]
    assert any("objectType" not in o for o in objects)
    texts = [o["extractedText"] for o in objects if "extractedText" in o]
    assert texts and max(len(t) for t in texts) > 3000 and min(len(t) for t in texts) < 3000
    # Most file units are title-only, as in the real data.
    title_only = [r for r in by_level["fileUnit"] if "scopeAndContentNote" not in r]
    assert len(title_only) > 0.7 * len(by_level["fileUnit"])
    # Some items carry a sibling transcription; multi-paragraph notes use blank lines.
    assert any("record_transcription" in line for line in raw_records)
    assert any("\n\n" in r.get("scopeAndContentNote", "") for r in by_level["series"])
    assert any("\n\n" in r.get("administrativeHistoryNote", "") for r in by_level["organization"])
    assert any("\n\n" in r.get("biographicalNote", "") for r in by_level["person"])


def test_organizations_nest_names_that_creators_cite(raw_records: list[dict[str, Any]]) -> None:
    records = [line["record"] for line in raw_records]
    organizations = [r for r in records if r.get("authorityType") == "organization"]
    nested = {n["naId"]: org["naId"] for org in organizations for n in org["organizationNames"]}
    creator_ids = {
        c["naId"]
        for r in records
        for c in r.get("creators", [])
        if c["authorityType"] == "organization"
    }
    assert creator_ids and creator_ids <= set(nested)
    assert any(nested[c] != c for c in creator_ids)
    assert any(len(org["organizationNames"]) > 1 for org in organizations)


def test_questions_point_at_known_distinctive_records(
    demo: tuple[Path, DemoDataSummary], parsed: list[ParsedRecord | Rejected]
) -> None:
    _, summary = demo
    records = records_of(parsed)
    every = [
        json.loads(line) for line in summary.questions_path.read_text(encoding="utf-8").splitlines()
    ]
    # person_org questions follow the others (see test_person_org_questions_name_mentions).
    questions = [q for q in every if q.get("kind") != "person_org"]
    assert every[: len(questions)] == questions
    modes = Counter(q["mode"] for q in questions)
    assert 17 <= modes["local"] <= 22 and modes["global"] == 3
    assert len({q["id"] for q in questions}) == len(questions)
    assert len({q["question"] for q in questions}) == len(questions)
    expected_types: Counter[str] = Counter()
    for question in questions:
        assert set(question) == {"id", "question", "expected_naids", "mode"}
        if question["mode"] == "global":
            continue
        assert question["expected_naids"]
        for na_id in question["expected_naids"]:
            record = records[na_id]
            expected_types[record.node_type] += 1
            # The question names words the record itself carries.
            words = set(re.findall(r"[a-z]{4,}", question["question"].lower()))
            text = f"{record.title} {record.body_text or ''}".lower()
            shared = {w for w in words if w in text}
            assert len(shared) >= 2, (question, shared)
    assert expected_types["series"] >= 3 and expected_types["fileUnit"] >= 2
    assert {"person", "organization", "collection", "recordGroup"} <= set(expected_types)


def test_person_org_questions_name_mentions(demo: tuple[Path, DemoDataSummary]) -> None:
    _, summary = demo
    questions = [
        json.loads(line) for line in summary.questions_path.read_text(encoding="utf-8").splitlines()
    ]
    asked = [q for q in questions if q.get("kind") == "person_org"]
    assert asked and len({q["id"] for q in questions}) == len(questions)
    labels = {
        (label["naId"], mention["surface"])
        for line in summary.labels_path.read_text(encoding="utf-8").splitlines()
        for label in [json.loads(line)]
        for mention in label["mentions"]
    }
    for question in asked:
        # Each expected record's label names the surface the question uses.
        for na_id in question["expected_naids"]:
            assert any(n == na_id and s in question["question"] for n, s in labels), question


def test_rerun_removes_shards_it_no_longer_writes(tmp_path: Path) -> None:
    generate_demo_data(tmp_path, records=600, seed=3)
    smaller = generate_demo_data(tmp_path, records=60, seed=3)
    on_disk = sorted(
        p
        for p in tmp_path.rglob("*.jsonl")
        if p not in (smaller.questions_path, smaller.labels_path)
    )
    assert on_disk == smaller.files


def test_mention_labels_name_authorities_the_text_carries(
    demo: tuple[Path, DemoDataSummary], parsed: list[ParsedRecord | Rejected]
) -> None:
    """Every label names an authority of the data set by a surface its record's text holds."""
    _, summary = demo
    records = records_of(parsed)
    lines = [json.loads(line) for line in summary.labels_path.read_text().splitlines()]
    assert len(lines) > 100
    labelled = 0
    for line in lines:
        record = records[line["naId"]]
        assert record.node_type in ("series", "fileUnit", "item")
        text = f"{record.title} {record.body_text or ''}".lower()
        for mention in line["mentions"]:
            assert records[mention["authority"]].record_kind == "authority"
            labelled += 1
            # OCR noise may garble some copies, never every word of the name.
            words = mention["surface"].lower().split()
            assert any(w in text for w in words), (line, mention)
    assert labelled > len(lines)


def test_too_few_records_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 40"):
        generate_demo_data(tmp_path, records=10)


def test_small_and_large_counts_are_exact(tmp_path: Path) -> None:
    assert sum(generate_demo_data(tmp_path / "s", records=40).records_by_type.values()) == 40
    large = generate_demo_data(tmp_path / "l", records=3000)
    assert sum(large.records_by_type.values()) == 3000
    assert len(large.records_by_type) == 10


@needs_real_data
def test_real_creators_get_authorities_and_resolve(tmp_path: Path) -> None:
    summary = generate_demo_data(tmp_path, records=200, seed=7, real_export_dir=EXPORT_DIR)
    generated = records_of([r for p in summary.files for r in iter_file(p)])
    aliases = {alias: r.na_id for r in generated.values() for alias in r.org_name_aliases}
    real_creators: dict[int, str | None] = {}
    real_headings: set[str | None] = set()
    real_titles: set[str] = set()
    for path in sorted(EXPORT_DIR.glob("*.jsonl")):
        for result in iter_file(path):
            assert isinstance(result, ParsedRecord)
            if result.title:
                real_titles.add(result.title)
            for stub in result.stubs:
                for reference in stub.references:
                    real_creators[reference.na_id] = reference.authority_type
                    real_headings.add(reference.heading)
            for reference in result.references:
                if reference.rel == "creator":
                    real_creators[reference.na_id] = reference.authority_type
                    real_headings.add(reference.heading)
    assert real_creators
    for na_id, authority_type in real_creators.items():
        if authority_type == "person":
            assert generated[na_id].node_type == "person"
        else:
            owner = aliases[na_id]  # organizations resolve through organizationNames[]
            assert owner != na_id and owner not in real_creators
            assert generated[owner].node_type == "organization"
    # Names of real bodies may be reused; the real records' own titles and texts may not.
    text = "".join(p.read_text(encoding="utf-8") for p in summary.files)
    headings = " ".join(h for h in real_headings if h)
    copied = [t for t in real_titles if len(t) > 25 and t in text and t not in headings]
    assert copied == []
    # Still deterministic with the real directory.
    again = generate_demo_data(tmp_path / "again", records=200, seed=7, real_export_dir=EXPORT_DIR)
    assert [p.read_bytes() for p in again.files] == [p.read_bytes() for p in summary.files]
