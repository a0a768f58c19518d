"""Identifiers and dates read from questions and titles, and the exact-match score."""

from __future__ import annotations

from datetime import date

import pytest

from nara_kg.retrieval.query_understanding import (
    MAX_FACTS,
    DateRange,
    Identifier,
    exact_match_score,
    find_dates,
    find_identifiers,
    record_facts,
    rerank,
    title_phrase_query,
    understand,
)


def _r(a: str, b: str) -> DateRange:
    return DateRange(date.fromisoformat(a), date.fromisoformat(b))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Volume 408, June 13 \u2013 June 14, 1941", [_r("1941-06-13", "1941-06-14")]),
        ("Volume 534, May 29 - May 31, 1942", [_r("1942-05-29", "1942-05-31")]),
        ("Volume 310, December 1939 \u2013 July 1940", [_r("1939-12-01", "1940-07-31")]),
        ("Volume 200, January \u2013 August 1, 1939", [_r("1939-01-01", "1939-08-01")]),
        ("Volume 857, June 22, 1945", [_r("1945-06-22", "1945-06-22")]),
        ("Volume 599, December 24 \u2013 December 19, 1942", [_r("1942-12-19", "1942-12-24")]),
        ("March 3-5, 1942", [_r("1942-03-03", "1942-03-05")]),
        ("early March 1942", [_r("1942-03-01", "1942-03-10")]),
        ("in late February 1940", [_r("1940-02-21", "1940-02-29")]),
        ("mid-1941 is not a month", [_r("1941-01-01", "1941-12-31")]),
        ("on 3 March 1942", [_r("1942-03-03", "1942-03-03")]),
        (
            "on 1942-03-03 and 4/5/1943",
            [_r("1942-03-03", "1942-03-03"), _r("1943-04-05", "1943-04-05")],
        ),
        ("between 1939 and 1941", [_r("1939-01-01", "1941-12-31")]),
        ("Sept. 1944", [_r("1944-09-01", "1944-09-30")]),
        ("no dates here, volume 12", []),
    ],
)
def test_dates_are_read_as_ranges(text: str, expected: list[DateRange]) -> None:
    assert find_dates(text) == expected


def test_identifiers_are_read_with_their_suffix() -> None:
    assert find_identifiers("Morgenthau diary vol. 544 A and Box #12") == [
        Identifier("volume", "544", "A"),
        Identifier("box", "12", ""),
    ]


def test_understand_keeps_years_and_identifier_numbers_out_of_na_ids() -> None:
    facts = understand("Volume 512 of 1942, naId 28277031")
    assert facts.identifiers == (Identifier("volume", "512", ""),)
    assert facts.na_ids == (28277031,)
    assert facts.dates == (_r("1942-01-01", "1942-12-31"),)
    assert not understand("flood control correspondence").any


def test_the_exact_volume_outranks_its_neighbours() -> None:
    facts = understand("Morgenthau diaries volume 512")
    exact = record_facts(1, "Volume 512, April 1 \u2013 April 2, 1942", None, None)
    near = record_facts(2, "Volume 513, April 3 \u2013 April 4, 1942", None, None)
    suffixed = record_facts(3, "Volume 512 A, April 2, 1942", None, None)
    scores = {r.na_id: exact_match_score(facts, r) for r in (exact, near, suffixed)}
    assert scores[1] > scores[3] > scores[2]


def test_the_covering_narrow_range_outranks_wide_and_missing_ranges() -> None:
    facts = understand("What happened on March 3, 1942?")
    narrow = record_facts(1, "Volume 503, March 2 \u2013 March 4, 1942", None, None)
    wide = record_facts(2, "Volume 310, December 1941 \u2013 July 1942", None, None)
    other = record_facts(3, "Volume 504, March 5 \u2013 March 6, 1942", None, None)
    own_dates = record_facts(4, "Correspondence", "1942-03-03", "1942-03-03")
    fits = {r.na_id: exact_match_score(facts, r)[1] for r in (narrow, wide, other, own_dates)}
    assert fits[4] > fits[1] > fits[2] > fits[3] == 0.0


def test_title_phrase_query_names_identifiers_and_the_months_of_narrow_dates() -> None:
    assert title_phrase_query(understand("volume 544 A on March 3, 1942")) == (
        'title:"volume 544 A" OR (title:"March" AND title:"1942")'
    )
    assert title_phrase_query(understand("flood control in 1942")) == ""


def test_rerank_puts_exact_matches_first_and_leaves_plain_questions_alone() -> None:
    fused = [("1", 0.18), ("2", 0.10), ("3", 0.05)]
    records = {
        "1": record_facts(1, "Volume 513, April 3 - April 4, 1942", None, None),
        "2": record_facts(2, "Volume 511, March 30 - March 31, 1942", None, None),
        "3": record_facts(3, "Volume 512, April 1 - April 2, 1942", None, None),
    }
    assert [k for k, _ in rerank(fused, understand("volume 512"), records)] == ["3", "1", "2"]
    assert [k for k, _ in rerank(fused, understand("April 1, 1942"), records)] == ["3", "1", "2"]
    assert rerank(fused, understand("diaries of the secretary"), records) == fused


def test_catalog_codes_are_read_without_their_years() -> None:
    facts = understand("FOIA request 2006-0459-F and entry A1 37-A, series 210-CMB")
    assert facts.codes == (("2006", "0459", "f"), ("a1",), ("37", "a"), ("210", "cmb"))
    assert facts.dates == ()
    assert understand("records of 1939-1941").codes == ()
    assert understand("March 3rd, 1942").codes == ()


def test_a_code_matches_the_records_local_identifier_or_control_number() -> None:
    facts = understand("Still picture series 210-CMB")
    wanted = record_facts(1, "Minidoka", None, None, ["210-CMB", "NWDNS-210-CMB"])
    twin = record_facts(2, "Minidoka", None, None, ["210-CMA", "NWDNS-210-CMA"])
    assert exact_match_score(facts, wanted)[0] > exact_match_score(facts, twin)[0]


def test_a_bare_number_matches_any_numbered_unit() -> None:
    facts = understand("the final diary volume, number 864")
    assert exact_match_score(facts, record_facts(1, "Volume 864, June 1945", None, None))[0] == 2
    assert exact_match_score(facts, record_facts(2, "Volume 863, June 1945", None, None))[0] == 0


def test_parts_of_months_and_beginnings() -> None:
    assert understand("the first days of March 1941").dates == (_r("1941-03-01", "1941-03-07"),)
    assert understand("the last week of December 1944").dates == (_r("1944-12-25", "1944-12-31"),)
    facts = understand("Which series begin on March 18, 1942?")
    assert facts.asks_start and facts.node_types == frozenset({"series"})
    long_series = record_facts(1, "Property Files", "1942-03-18", "1946-06-30", (), "series")
    organization = record_facts(2, "War Relocation Authority", "1942-03-18", None, (), "")
    volume = record_facts(3, "Volume 508, March 15 - March 18, 1942", None, None, (), "fileUnit")
    assert exact_match_score(facts, long_series)[1] == 1.0
    ranked = rerank(
        [("3", 0.2), ("2", 0.1), ("1", 0.05)],
        facts,
        {"1": long_series, "2": organization, "3": volume},
    )
    assert [key for key, _ in ranked] == ["1", "2", "3"]


def test_a_pasted_page_contributes_a_bounded_number_of_facts() -> None:
    page = " ".join(f"word{i} volume {i} on March {i % 28 + 1}, 1942" for i in range(3_000))
    facts = understand(page)
    assert max(len(facts.codes), len(facts.identifiers), len(facts.dates)) <= MAX_FACTS
    assert title_phrase_query(facts).count(" OR ") < 1_024
