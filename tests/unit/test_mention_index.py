"""The mention index: which chunks an authority change can relink, found by word and by the
stored linker, without linking the others."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from nara_kg.build import mention_index
from nara_kg.build.mention_index import (
    IndexBuilder,
    MentionIndex,
    changed_keys,
    chunk_words,
    form_words,
    relinked_chunks,
)
from nara_kg.build.mentions import normalized_chunk
from nara_kg.linking.authorities import Authority
from nara_kg.linking.linker import EntityLinker

ROOSEVELT = Authority(
    1, "person", "Roosevelt, Franklin D. (Franklin Delano), 1882-1945", (), 1882, 1945
)
IRRIGATION = Authority(2, "topicalSubject", "Irrigation canals")
BUREAU = Authority(3, "organization", "Bureau of Reclamation", aliases=(30,))
OTHER_BUREAU = Authority(4, "organization", "Reclamation Service", aliases=(30, 40))

TEXTS = {
    (10, 0): "Letter from Franklin D. Roosevelt about the dam.",
    (10, 1): "Irrigation canals of the valley.",
    (11, 0): "Reports of the Bureau of Reclamation, 1920.",
    (12, 0): "Roosevelt Franklin met with the engineers.",  # words of a form, not the form
    (13, 0): "Nothing named here at all.",
}


def _state(tmp_path: Path, authorities: list[Authority], generation: str = "g1") -> Path:
    path = tmp_path / "mention-index.sqlite"
    builder = IndexBuilder(path)
    for (na_id, seq), text in TEXTS.items():
        builder.add_normalized(na_id, seq, normalized_chunk(text).text)
    builder.finish(EntityLinker.from_authorities(authorities), generation)
    return path


def test_words_are_the_matchers_and_skip_generic_words_and_numbers() -> None:
    # The matcher's normalization (initials folded, case and punctuation dropped), and no row
    # for "of", "the" or "1920": every form the linker keeps has another word.
    assert chunk_words("Reports of the Bureau of Reclamation, 1920.") == set(
        form_words("reports bureau reclamation")
    )
    assert form_words("bureau of reclamation") == form_words("reclamation bureau")
    assert form_words("of the 1920") == ()


def test_changed_keys_streams_two_sorted_lists() -> None:
    stored = [(1, "a"), (2, "b"), (4, "d")]
    current = [(1, "a"), (2, "B"), (3, "c")]
    assert list(changed_keys(stored, current)) == [2, 3, 4]
    assert list(changed_keys([], [])) == []


def test_an_unchanged_linker_changes_nothing(tmp_path: Path) -> None:
    path = _state(tmp_path, [ROOSEVELT, IRRIGATION, BUREAU])
    with MentionIndex(path) as state:
        assert state.equals("g1") and not state.equals("g0")
        change = state.linker_change(EntityLinker.from_authorities([ROOSEVELT, IRRIGATION, BUREAU]))
        assert (change.changed, change.aliases, change.forms) == (set(), set(), set())
        assert state.chunks_naming(change.forms) == set()


def test_a_rename_finds_the_chunks_holding_the_old_or_the_new_name(tmp_path: Path) -> None:
    path = _state(tmp_path, [ROOSEVELT, IRRIGATION, BUREAU])
    renamed = dataclasses.replace(IRRIGATION, heading="Reclamation projects")
    linker = EntityLinker.from_authorities([ROOSEVELT, renamed, BUREAU])
    with MentionIndex(path) as state:
        change = state.linker_change(linker)
        assert change.changed == {IRRIGATION.na_id}
        assert change.forms == {"irrigation canals", "reclamation projects"}
        assert state.chunks_naming(change.forms) == {(10, 1)}


def test_new_years_alone_find_the_chunks_holding_its_forms(tmp_path: Path) -> None:
    path = _state(tmp_path, [ROOSEVELT, IRRIGATION, BUREAU])
    redated = dataclasses.replace(ROOSEVELT, end_year=1946)
    with MentionIndex(path) as state:
        change = state.linker_change(EntityLinker.from_authorities([redated, IRRIGATION, BUREAU]))
        assert change.changed == {ROOSEVELT.na_id}
        # Every word of a form, in any order: a superset of the chunks holding the form.
        assert state.chunks_naming(change.forms) == {(10, 0), (12, 0)}


def test_an_added_and_a_removed_authority_and_a_moved_alias(tmp_path: Path) -> None:
    path = _state(tmp_path, [ROOSEVELT, IRRIGATION, BUREAU])
    with MentionIndex(path) as state:
        # Removed: its old forms, from the state.
        change = state.linker_change(EntityLinker.from_authorities([ROOSEVELT, BUREAU]))
        assert change.changed == {IRRIGATION.na_id}
        assert state.chunks_naming(change.forms) == {(10, 1)}
        # Added, claiming alias 30 (which stays BUREAU's: the lower naId) and 40 (new).
        linker = EntityLinker.from_authorities([ROOSEVELT, IRRIGATION, BUREAU, OTHER_BUREAU])
        change = state.linker_change(linker)
        assert change.changed == {OTHER_BUREAU.na_id} and change.aliases == {40}
        assert state.chunks_naming(change.forms) == {(11, 0)}
        # BUREAU gone: alias 30 goes to OTHER_BUREAU, whose forms' chunks link again too.
        linker = EntityLinker.from_authorities([ROOSEVELT, IRRIGATION, OTHER_BUREAU])
        state.apply("g2", [], [], linker, state.linker_change(linker))
        assert state.equals("g2")
        back = EntityLinker.from_authorities([ROOSEVELT, IRRIGATION, BUREAU, OTHER_BUREAU])
        change = state.linker_change(back)
        assert change.aliases == {30} and change.affected == {BUREAU.na_id, OTHER_BUREAU.na_id}


def test_apply_replaces_the_changed_records_words(tmp_path: Path) -> None:
    path = _state(tmp_path, [ROOSEVELT, IRRIGATION, BUREAU])
    linker = EntityLinker.from_authorities([ROOSEVELT, IRRIGATION, BUREAU])
    with MentionIndex(path) as state:
        words = [(w, 13, 0) for w in chunk_words("Irrigation canals were dug.")]
        state.apply("g2", [10, 13], words, linker, state.linker_change(linker))
        assert state.chunks_naming({"irrigation canals"}) == {(13, 0)}
        assert state.chunks_naming({"franklin roosevelt"}) == {(12, 0)}


def test_a_chunk_is_relinked_once_and_whole_records_are_not_named() -> None:
    named = {(10, 0), (10, 1), (11, 2), (12, 0)}
    assert relinked_chunks(named, {10: object()}) == {
        11: frozenset({2}),
        12: frozenset({0}),
    }


def test_another_linking_code_version_or_generation_is_not_the_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _state(tmp_path, [ROOSEVELT])
    with MentionIndex(path) as state:
        assert state.equals("g1")
        state.advance("g0", "g2")  # not the state's base: stays at g1
        assert state.equals("g1") and not state.equals("g2")
        state.advance("g1", "g2")
        assert state.equals("g2")
        assert not state.equals(None)
        monkeypatch.setattr(mention_index, "linking_version", lambda: "another")
        assert not state.equals("g2")


def test_a_whole_state_left_unfinished_keeps_the_old_one(tmp_path: Path) -> None:
    path = _state(tmp_path, [ROOSEVELT])
    builder = IndexBuilder(path)
    builder.add_normalized(99, 0, normalized_chunk("Irrigation canals").text)
    builder.abandon()
    with MentionIndex(path) as state:
        assert state.equals("g1")
        assert state.chunks_naming({"irrigation canals"}) == {(10, 1)}
