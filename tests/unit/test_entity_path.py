"""The pure parts of retrieval through entities: the graph's linker, anchors, the ranking, and
when an anchor's neighbourhood is read again."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

import nara_kg.retrieval.entity_path as entity_path_module
from nara_kg.model.schema import Rel, chunk_id
from nara_kg.retrieval.ask import local_provenance
from nara_kg.retrieval.entity_path import (
    Anchor,
    EntityPath,
    PathEdge,
    anchor_neighbourhoods,
    clear_anchor_neighbourhoods,
    graph_linker,
    path_ranking,
    question_anchors,
    rank_records,
)
from nara_kg.retrieval.search import SearchHit, reciprocal_rank_fusion

AUTHORITIES = [
    {"naId": 1, "authorityType": "person", "heading": "Kimball, Floyd R., 1890-1960"},
    {
        "naId": 2,
        "authorityType": "organization",
        "heading": "Bureau of Flood Prevention. 1/1/1930-12/31/1950",
        "naId_organizationNames": [3],
    },
    # An organization name's own naId: an alias of 2, no authority of its own.
    {"naId": 3, "authorityType": "organization", "heading": "Bureau of Flood Prevention"},
    {"naId": 4, "authorityType": "person"},  # no heading: not an authority
]


def test_graph_linker_drops_aliases_and_headingless() -> None:
    linker = graph_linker(AUTHORITIES)
    assert sorted(linker.authorities) == [1, 2]


def test_question_anchors_in_order_of_appearance() -> None:
    linker = graph_linker(AUTHORITIES)
    anchors = question_anchors(
        linker, "Did Floyd R. Kimball write to the Bureau of Flood Prevention?"
    )
    assert [a.na_id for a in anchors] == [1, 2]
    assert anchors[0].authority_type == "person"
    assert question_anchors(linker, "Which records describe dams?") == []


def test_rank_records_anchors_then_mentions_then_relationships() -> None:
    edges = [
        PathEdge(1, Rel.MENTIONED_IN, 10, "10-1", 1),
        PathEdge(1, Rel.MENTIONED_IN, 11, "11-0", 3),
        PathEdge(1, Rel.MENTIONED_IN, 11, "11-2", 5),
        PathEdge(1, Rel.CREATOR, 12, "12-0"),
        PathEdge(2, Rel.SUBJECT, 10, "10-0"),
        PathEdge(1, Rel.CREATOR, 13, "13-0"),
        PathEdge(1, Rel.SUBJECT, 13, "13-0"),
    ]
    # 10: two anchors; 11: 8 mentions (its most-mentioning chunk); 13: two relationships.
    assert rank_records(edges) == [(10, "10-1"), (11, "11-2"), (13, "13-0"), (12, "12-0")]
    assert rank_records([]) == []


def test_entity_ranking_joins_the_fusion() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "b"], ["b", "a"], ["c", "a"]]))
    assert max(fused, key=lambda key: fused[key]) == "a"
    assert "c" in fused


def test_provenance_links_anchor_to_hit_records() -> None:
    hit = SearchHit(naId=10, title="T", type="item", score=1.0, source=None, is_stub=False)
    path = EntityPath(edges=[PathEdge(1, Rel.MENTIONED_IN, 10, "10-1", 2)])
    path.anchors = question_anchors(graph_linker(AUTHORITIES), "Floyd R. Kimball")
    path.edges.append(PathEdge(1, Rel.MENTIONED_IN, 99, "99-0", 1))  # not a hit: left out
    provenance = local_provenance([hit], {10}, path)
    links = [edge.to_dict() for edge in provenance.relationships]
    assert {"source": "record:1", "type": "MENTIONED_IN", "target": "record:10"} in links
    assert [node.id for node in provenance.nodes] == ["record:10", "record:1"]
    assert all(edge["target"] != "record:99" for edge in links)


def test_anchor_leads_unless_the_question_asks_for_mentions() -> None:
    anchor = Anchor(1, "person", "Kimball, Floyd R., 1890-1960", "Floyd R. Kimball")
    edges = [PathEdge(1, Rel.MENTIONED_IN, 10, "10-0", 2), PathEdge(1, Rel.CREATOR, 1, "1-0")]
    assert path_ranking("Who was Floyd R. Kimball?", [anchor], edges) == [(1, "1-0"), (10, "10-0")]
    for question in (
        "Which records mention Floyd R. Kimball?",
        "Find the records that name Floyd R. Kimball.",
        "What do the records say about Floyd R. Kimball?",
    ):
        assert path_ranking(question, [anchor], edges)[0] == (10, "10-0")


#: The fake graph below answers every read, so no driver is needed.
NO_DRIVER: Any = None


class _Graph:
    """The two reads `anchor_neighbourhoods` makes, counted, over a settable signature."""

    def __init__(self) -> None:
        self.signature: tuple[object, ...] = ("rev-1",)
        self.reads: list[list[str]] = []

    def graph_signature(self, driver: object, database: str) -> tuple[object, ...]:
        return self.signature

    def anchor_neighbours(
        self, driver: object, database: str, chunks: list[str], per: int, most: int
    ) -> list[dict[str, object]]:
        self.reads.append(list(chunks))
        # Chunk "9-0" is no node: the read returns no row for it.
        return [
            {"anchor": int(c.split("-")[0]), "degree": 1, "edges": [], "signature": self.signature}
            for c in chunks
            if c != "9-0"
        ]


@pytest.fixture
def graph(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Graph]:
    fake = _Graph()
    monkeypatch.setattr(entity_path_module, "cypher", fake)
    monkeypatch.setattr(entity_path_module, "sync_state", fake)
    monkeypatch.setattr(entity_path_module, "SIGNATURE_CHECK_SECONDS", 0.0)
    clear_anchor_neighbourhoods()
    yield fake
    clear_anchor_neighbourhoods()


def _anchors(rows: list[Mapping[str, object]]) -> list[object]:
    return [row["anchor"] for row in rows]


def test_an_anchor_s_neighbourhood_is_read_once_while_the_graph_is_unchanged(
    graph: _Graph,
) -> None:
    ids = [chunk_id(1, 0), chunk_id(2, 0)]
    assert _anchors(anchor_neighbourhoods(NO_DRIVER, "neo4j", ids, 50, 2000)) == [1, 2]
    assert graph.reads == [ids]
    later = [chunk_id(3, 0), chunk_id(1, 0), chunk_id(9, 0)]
    assert _anchors(anchor_neighbourhoods(NO_DRIVER, "neo4j", later, 50, 2000)) == [3, 1]
    assert graph.reads[1:] == [[chunk_id(3, 0), chunk_id(9, 0)]]  # only what was not known
    anchor_neighbourhoods(NO_DRIVER, "neo4j", later, 50, 2000)
    assert len(graph.reads) == 2  # an anchor that is no node is remembered as none
    anchor_neighbourhoods(NO_DRIVER, "neo4j", ids, 10, 2000)
    assert graph.reads[-1] == ids  # another per-anchor limit is another neighbourhood


def test_a_write_to_the_graph_makes_every_neighbourhood_read_again(graph: _Graph) -> None:
    ids = [chunk_id(1, 0)]
    anchor_neighbourhoods(NO_DRIVER, "neo4j", ids, 50, 2000)
    graph.signature = ("rev-2",)
    rows = anchor_neighbourhoods(NO_DRIVER, "neo4j", ids, 50, 2000)
    assert graph.reads == [ids, ids]
    assert rows[0]["signature"] == ("rev-2",)
    assert len(entity_path_module._neighbourhoods) == 1  # the old graph's are dropped


def test_the_least_recently_asked_anchors_are_forgotten_first(
    graph: _Graph, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(entity_path_module, "NEIGHBOURHOOD_CACHE_SIZE", 2)
    for na_id in (1, 2, 1, 3):  # 2 is now the least recently asked
        anchor_neighbourhoods(NO_DRIVER, "neo4j", [chunk_id(na_id, 0)], 50, 2000)
    graph.reads.clear()
    anchor_neighbourhoods(NO_DRIVER, "neo4j", [chunk_id(1, 0), chunk_id(3, 0)], 50, 2000)
    assert graph.reads == []
    anchor_neighbourhoods(NO_DRIVER, "neo4j", [chunk_id(2, 0)], 50, 2000)
    assert graph.reads == [[chunk_id(2, 0)]]
