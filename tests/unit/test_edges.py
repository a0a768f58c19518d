from __future__ import annotations

from nara_kg.model.edges import (
    RecordLinks,
    authority_edges,
    includes_edges,
    next_edges,
    resolve_authority,
)
from nara_kg.model.schema import AUTHORITY_RELATIONSHIPS, Rel

SERIES = RecordLinks(na_id=10, chunk_count=3, parent_na_id=1, references=(("creator", 500),))
FILE_UNIT = RecordLinks(na_id=11, chunk_count=1, parent_na_id=10, references=(("subject", 600),))
ORPHAN = RecordLinks(na_id=12, chunk_count=1, parent_na_id=999)
RECORD_GROUP = RecordLinks(na_id=1, chunk_count=1, parent_na_id=None)
ORG = RecordLinks(na_id=700, chunk_count=1, parent_na_id=None)
TOPIC = RecordLinks(na_id=600, chunk_count=2, parent_na_id=None, references=(("broaderTerm", 601),))


def test_next_links_consecutive_chunks_only() -> None:
    assert next_edges([SERIES, FILE_UNIT]) == {("10-0", "10-1"), ("10-1", "10-2")}


def test_includes_needs_the_nearest_ancestor_in_the_graph() -> None:
    present = {1, 10, 11, 12}
    assert includes_edges([SERIES, FILE_UNIT, ORPHAN, RECORD_GROUP], present) == {
        ("1-0", "10-0"),
        ("10-0", "11-0"),
    }


def test_creator_that_names_a_nested_organization_name_resolves_to_the_organization() -> None:
    aliases = {500: 700}
    present = {1, 10, 11, 600, 700}
    assert resolve_authority(500, present, aliases) == 700
    assert resolve_authority(600, present, aliases) == 600
    assert resolve_authority(12345, present, aliases) is None
    edges = authority_edges([SERIES, FILE_UNIT, TOPIC, ORG], present, aliases)
    assert set(edges) == set(AUTHORITY_RELATIONSHIPS)
    assert edges[Rel.CREATOR] == {("700-0", "10-0")}
    assert edges[Rel.SUBJECT] == {("600-0", "11-0")}
    assert edges[Rel.BROADER_TERM] == set()  # 601 is not in the graph


def test_an_organization_never_links_to_itself_through_its_own_names() -> None:
    org = RecordLinks(
        na_id=700, chunk_count=1, parent_na_id=None, references=(("organizationName", 500),)
    )
    edges = authority_edges([org], {700}, {500: 700})
    assert edges[Rel.ORGANIZATION_NAME] == set()
