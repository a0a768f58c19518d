"""Entity linking (nara_kg.linking): surface forms, normalization, matching, disambiguation."""

from __future__ import annotations

import dataclasses

import pytest

from nara_kg.linking.authorities import Authority, authority_from_properties, heading_years
from nara_kg.linking.disambiguate import AmbiguousSurface, Decision, Mention
from nara_kg.linking.linker import ChunkText, EntityLinker, LinkResult, link_chunks
from nara_kg.linking.matcher import SurfaceMatcher
from nara_kg.linking.normalize import normalize, normalize_form
from nara_kg.linking.surface_forms import is_specific, person_forms, surface_forms

FDR = Authority(
    1001,
    "person",
    "Roosevelt, Franklin D. (Franklin Delano), 1882-1945",
    ("Roosevelt, F. D.",),
    1882,
    1945,
)
FDR_LIBRARY = Authority(2001, "organization", "Franklin D. Roosevelt Library. 1939-")
WRA = Authority(
    2002,
    "organization",
    "Department of the Interior. War Relocation Authority. 2/16/1944-6/30/1946",
    ("Office of Emergency Management. War Relocation Authority. 3/18/1942-2/16/1944",),
    1942,
    1946,
    aliases=(2902,),
)
SPRINGFIELD = Authority(3001, "geographicPlaceName", "Springfield (Ill.)")
FLOODS = Authority(4001, "topicalSubject", "Flood control", ("Flood prevention",))
SMITH_ELDER = Authority(5001, "person", "Smith, John Q., 1800-1850", (), 1800, 1850)
SMITH_YOUNGER = Authority(5002, "person", "Smith, John Q., 1900-1970", (), 1900, 1970)
SMITH_UNDATED = Authority(5003, "person", "Smith, John Q.")
STATE_SMITH_OFFICE = Authority(6001, "organization", "Smith Office of Records. 1950-1960")


@pytest.fixture(scope="module")
def linker() -> EntityLinker:
    return EntityLinker.from_authorities(
        [FDR, FDR_LIBRARY, WRA, SPRINGFIELD, FLOODS, SMITH_ELDER, SMITH_YOUNGER, STATE_SMITH_OFFICE]
    )


def chunk(
    text: str,
    record_authorities: frozenset[int] = frozenset(),
    ancestor_authorities: frozenset[int] = frozenset(),
    date_range: tuple[int | None, int | None] | None = None,
) -> ChunkText:
    return ChunkText("c1", text, 9, record_authorities, ancestor_authorities, date_range)


def linked(
    linker: EntityLinker,
    text: str,
    record_authorities: frozenset[int] = frozenset(),
    ancestor_authorities: frozenset[int] = frozenset(),
    date_range: tuple[int | None, int | None] | None = None,
) -> dict[int, Mention]:
    found = chunk(text, record_authorities, ancestor_authorities, date_range)
    return {m.authority_na_id: m for m in linker.link(found)[0]}


# -- surface forms -----------------------------------------------------------------------------


def test_person_forms_invert_and_use_the_fuller_name_without_dates() -> None:
    forms = person_forms("Roosevelt, Franklin D. (Franklin Delano), 1882-1945")
    assert "Franklin D. Roosevelt" in forms
    assert "Franklin Delano Roosevelt" in forms
    assert "Roosevelt, Franklin D." in forms
    assert "Franklin Roosevelt" in forms
    assert not any(f == "Roosevelt" for f in forms)  # a surname alone names too many people
    assert "Martin Luther King Jr." in person_forms("King, Martin Luther, Jr., 1929-1968")


def test_organization_forms_drop_dates_and_keep_the_last_unit() -> None:
    assert surface_forms(WRA) == [
        "department of the interior war relocation authority 2 16 1944 6 30 1946",  # as written
        "department of the interior war relocation authority",
        "war relocation authority",
        "office of emergency management war relocation authority 3 18 1942 2 16 1944",
        "office of emergency management war relocation authority",  # the former name
    ]


def test_place_forms_drop_the_qualifier_but_subject_forms_keep_theirs() -> None:
    assert surface_forms(SPRINGFIELD) == ["springfield ill", "springfield"]
    mercury = Authority(1, "topicalSubject", "Mercury (Planet)")
    assert surface_forms(mercury) == ["mercury planet"]


@pytest.mark.parametrize(
    ("form", "specific"),
    [
        ("ohio", True),
        ("national park service", True),
        ("united states", True),
        ("fbi", False),  # under four letters
        ("1945", False),  # only a number
        ("photographs", False),  # one common word
        ("office of the secretary", False),  # only generic words
        ("division 12", False),
    ],
)
def test_too_short_or_generic_forms_are_not_linked(form: str, specific: bool) -> None:
    assert is_specific(form) is specific


def test_generic_last_unit_is_not_a_form() -> None:
    office = Authority(7, "organization", "Department of State. Office of the Secretary")
    assert surface_forms(office) == ["department of state office of the secretary"]


def test_authority_from_properties_reads_variants_dates_and_aliases() -> None:
    person = authority_from_properties(
        {
            "naId": 10,
            "authorityType": "person",
            "heading": "Morgenthau, Henry, 1891-1967",
            "fullerFormOfName": "Henry Junior",
            "heading_variantPersonNames": ["Morgenthau, H."],
        }
    )
    assert person is not None
    assert (person.start_year, person.end_year) == (1891, 1967)
    assert person.variants == ("Morgenthau, H.", "Morgenthau, Henry Junior")
    org = authority_from_properties(
        {
            "naId": 20,
            "authorityType": "organization",
            "heading": "Department of the Interior. War Relocation Authority. 2/16/1944-6/30/1946",
            "heading_organizationNames": [
                "Office of Emergency Management. War Relocation Authority. 3/18/1942-2/16/1944"
            ],
            "naId_organizationNames": [20, 21],
            "variantOrganizationNames": ["WRA Relocation Office"],
        }
    )
    assert org is not None
    assert (org.start_year, org.end_year) == (1942, 1946)
    assert org.aliases == (21,)
    assert "WRA Relocation Office" in org.variants
    assert authority_from_properties({"naId": 1, "authorityType": "person"}) is None
    # A date field wins; the heading gives the end the fields lack.
    dated = authority_from_properties(
        {
            "naId": 30,
            "authorityType": "person",
            "heading": "Doe, Jane, 1890-1950",
            "logicalDate_birthDate": "1891-03-02",
        }
    )
    assert dated is not None and (dated.start_year, dated.end_year) == (1891, 1950)


def test_heading_years() -> None:
    assert heading_years("U.S. Trade and Development Agency. (10/28/1992 - )", "organization") == (
        1992,
        None,
    )
    assert heading_years("Smith, John, d. 1950", "person") == (None, 1950)
    assert heading_years("Civilian Conservation Corps Camp 1234", "organization") == (None, None)


# -- normalization -----------------------------------------------------------------------------


def test_normalize_folds_case_punctuation_unicode_and_line_break_hyphens() -> None:
    text = "“FRANKLIN D. Roose-\nvelt”, Müller, ﬁeld, U. S. Army, Smith-\nJones"
    assert normalize(text).text == "franklin d roosevelt muller field us army smith jones"
    assert normalize_form("U.S.") == normalize_form("US") == "us"
    assert normalize_form("Roose\u00advelt") == "roosevelt"  # soft hyphen inside the word
    assert normalize_form("Jose\u0301") == normalize_form("José") == "jose"


def test_normalized_spans_map_back_to_the_original_text() -> None:
    text = "See  Mr. ROOSE-\n  velt's “ﬁle” of 1944."
    normalized = normalize(text)
    start = normalized.text.index("roosevelt")
    s, e = normalized.original_span(start, start + len("roosevelt"))
    assert text[s:e] == "ROOSE-\n  velt"
    start = normalized.text.index("file")
    s, e = normalized.original_span(start, start + 4)
    assert text[s:e] == "ﬁle"


# -- matching ----------------------------------------------------------------------------------


def test_inverted_direct_and_fuller_names_all_link(linker: EntityLinker) -> None:
    text = (
        "Roosevelt, Franklin D. wrote to Franklin Delano Roosevelt; "
        "later F.D. Roosevelt and Franklin D. Roosevelt agreed."
    )
    found = linked(linker, text)
    assert set(found) == {FDR.na_id}
    assert found[FDR.na_id].count == 4
    assert found[FDR.na_id].surface == "Roosevelt, Franklin D"  # ties: the first met


def test_variants_useFor_and_former_names_link(linker: EntityLinker) -> None:
    found = linked(linker, "Flood prevention under the Office of Emergency Management's WRA")
    assert set(found) == {FLOODS.na_id}
    found = linked(
        linker, "Transferred from the Office of Emergency Management. War Relocation Authority."
    )
    assert set(found) == {WRA.na_id}
    assert found[WRA.na_id].surface.startswith("Office of Emergency Management")


def test_noisy_text_links_and_offsets_return_the_original_surface(linker: EntityLinker) -> None:
    text = (
        "Memo to FRANKLIN D. ROOSE-\nVELT and to Franklin D. Roose-\nvelt about “flood  control”."
    )
    found = linked(linker, text)
    # An upper-case continuation after a line-break hyphen is not joined; a lower-case one is.
    assert found[FDR.na_id].count == 1
    assert [text[s:e] for s, e in found[FDR.na_id].spans] == ["Franklin D. Roose-\nvelt"]
    assert found[FDR.na_id].surface == "Franklin D. Roose-\nvelt"
    assert [text[s:e] for s, e in found[FLOODS.na_id].spans] == ["flood  control"]


def test_only_whole_words_match(linker: EntityLinker) -> None:
    assert linked(linker, "Springfields and NewSpringfield and springfieldian") == {}
    assert set(linked(linker, "Springfield, Ill., and (Springfield)")) == {SPRINGFIELD.na_id}


def test_longest_match_wins(linker: EntityLinker) -> None:
    found = linked(
        linker, "Papers at the Franklin D. Roosevelt Library, and Franklin D. Roosevelt."
    )
    assert set(found) == {FDR.na_id, FDR_LIBRARY.na_id}
    assert found[FDR_LIBRARY.na_id].count == 1
    assert found[FDR.na_id].count == 1  # the person inside the library's name is not counted
    # "war relocation" loses to the longer "relocation authority"; "war" then fits before it.
    matcher = SurfaceMatcher({"war relocation": [1], "relocation authority": [2], "war": [3]})
    assert [m.candidates for m in matcher.find("the war relocation authority")] == [(3,), (2,)]


def test_an_authority_does_not_mention_itself(linker: EntityLinker) -> None:
    mentions, _ = linker.link(ChunkText("c", "Franklin D. Roosevelt was born in 1882.", FDR.na_id))
    assert mentions == []


# -- disambiguation ----------------------------------------------------------------------------


def test_shared_form_resolved_by_the_records_creators(linker: EntityLinker) -> None:
    assert linker.matcher.candidates("john smith") == (SMITH_ELDER.na_id, SMITH_YOUNGER.na_id)
    found = linked(linker, "Letter from John Smith.", record_authorities=frozenset({5002}))
    assert set(found) == {SMITH_YOUNGER.na_id}
    assert found[SMITH_YOUNGER.na_id].decided_by == Decision.RECORD.value
    found = linked(linker, "Letter from John Smith.", ancestor_authorities=frozenset({5001}))
    assert set(found) == {SMITH_ELDER.na_id}
    assert found[SMITH_ELDER.na_id].decided_by == Decision.ANCESTORS.value


def test_creator_alias_naid_counts_as_the_organization(linker: EntityLinker) -> None:
    other = Authority(2003, "organization", "Department of War. War Relocation Authority. 1942-")
    shared = EntityLinker.from_authorities([WRA, other])
    mentions, ambiguous = shared.link(
        chunk("The War Relocation Authority", record_authorities=frozenset({2902}))
    )
    assert [m.authority_na_id for m in mentions] == [WRA.na_id]
    assert ambiguous == []


def test_shared_form_resolved_by_dates(linker: EntityLinker) -> None:
    found = linked(linker, "John Q. Smith reported.", date_range=(1940, 1945))
    assert set(found) == {SMITH_YOUNGER.na_id}
    assert found[SMITH_YOUNGER.na_id].decided_by == Decision.DATES.value
    found = linked(linker, "John Q. Smith reported.", date_range=(None, 1820))
    assert set(found) == {SMITH_ELDER.na_id}


def test_undated_candidate_is_not_ruled_out_by_dates() -> None:
    linker = EntityLinker.from_authorities([SMITH_ELDER, SMITH_UNDATED])
    mentions, ambiguous = linker.link(chunk("John Smith", date_range=(1940, 1945)))
    assert [m.authority_na_id for m in mentions] == [SMITH_UNDATED.na_id]  # the elder is ruled out
    mentions, ambiguous = linker.link(chunk("John Smith", date_range=(1820, 1830)))
    assert mentions == []
    assert [a.candidates for a in ambiguous] == [(SMITH_ELDER.na_id, SMITH_UNDATED.na_id)]


def test_shared_form_resolved_by_an_unambiguous_mention_in_the_chunk() -> None:
    other = Authority(5004, "person", "Roosevelt, Franklin")
    linker = EntityLinker.from_authorities([FDR, other])
    found = {
        m.authority_na_id: m
        for m in linker.link(chunk("Franklin Delano Roosevelt, or Franklin Roosevelt"))[0]
    }
    assert found[FDR.na_id].count == 2
    assert other.na_id not in found


def test_shared_form_left_unlinked_when_nothing_decides(linker: EntityLinker) -> None:
    text = "John Smith met John Smith; Smith Office of Records."
    mentions, ambiguous = linker.link(chunk(text))
    assert [m.authority_na_id for m in mentions] == [STATE_SMITH_OFFICE.na_id]
    assert ambiguous == [
        AmbiguousSurface("John Smith", (SMITH_ELDER.na_id, SMITH_YOUNGER.na_id), "c1", 2)
    ]
    # Both candidates in the record's context and both fitting the dates: still undecided.
    both = frozenset({5001, 5002})
    mentions, ambiguous = linker.link(
        chunk("John Smith", record_authorities=both, date_range=(1800, 1990))
    )
    assert mentions == [] and len(ambiguous) == 1


# -- the whole run -----------------------------------------------------------------------------


def test_link_chunks_aggregates_per_chunk_and_authority(linker: EntityLinker) -> None:
    chunks = [
        ChunkText("a", "Flood control near Springfield; flood control again.", 1),
        ChunkText("b", "Nothing to see here.", 2),
        ChunkText("c", "John Smith and Springfield (Ill.)", 3),
    ]
    result = link_chunks(chunks, linker)
    assert isinstance(result, LinkResult)
    assert [(m.chunk_id, m.authority_na_id, m.count) for m in result.mentions] == [
        ("a", FLOODS.na_id, 2),
        ("a", SPRINGFIELD.na_id, 1),
        ("c", SPRINGFIELD.na_id, 1),
    ]
    assert (result.chunks, result.chunks_with_mentions) == (3, 2)
    assert [a.chunk_id for a in result.ambiguous] == ["c"]
    assert result.mentions_by_type() == {"topicalSubject": 1, "geographicPlaceName": 2}


def test_fingerprint_follows_the_authority_forms() -> None:
    before = EntityLinker.from_authorities([FLOODS]).fingerprint()
    assert EntityLinker.from_authorities([FLOODS]).fingerprint() == before
    changed = Authority(4001, "topicalSubject", "Flood control", ("Flood prevention", "Levees"))
    assert EntityLinker.from_authorities([changed]).fingerprint() != before


def test_fingerprint_follows_the_years_and_aliases_too() -> None:
    before = EntityLinker.from_authorities([FLOODS]).fingerprint()
    redated = dataclasses.replace(FLOODS, start_year=1900)
    assert EntityLinker.from_authorities([redated]).fingerprint() != before
    aliased = dataclasses.replace(FLOODS, aliases=(99,))
    assert EntityLinker.from_authorities([aliased]).fingerprint() != before


def test_an_alias_two_authorities_claim_goes_to_the_same_one_in_any_order() -> None:
    first = dataclasses.replace(FLOODS, na_id=5, aliases=(99,))
    second = dataclasses.replace(FLOODS, na_id=6, heading="Floods of 1927", aliases=(99,))
    assert EntityLinker.from_authorities([second, first]).canonical(99) == 5
    assert EntityLinker.from_authorities([first, second]).canonical(99) == 5
