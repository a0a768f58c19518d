"""The one digest of source files that stored states are keyed by."""

from pathlib import Path

from nara_kg.model.source_digest import source_digest


def _files(tmp_path: Path) -> list[Path]:
    (tmp_path / "pkg").mkdir()
    a, b = tmp_path / "pkg" / "a.py", tmp_path / "pkg" / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    return [a, b]


def test_a_changed_byte_changes_the_digest(tmp_path: Path) -> None:
    files = _files(tmp_path)
    before = source_digest(files)
    files[1].write_text("y = 3\n")
    assert source_digest(files) != before


def test_the_prefix_enters_the_digest(tmp_path: Path) -> None:
    files = _files(tmp_path)
    assert source_digest(files, prefix=b"(1,)") != source_digest(files, prefix=b"(2,)")


def test_with_names_a_moved_file_changes_the_digest(tmp_path: Path) -> None:
    files = _files(tmp_path)
    named, bare = source_digest(files, names_under=tmp_path), source_digest(files)
    moved = tmp_path / "pkg" / "c.py"
    files[1].rename(moved)
    assert source_digest([files[0], moved], names_under=tmp_path) != named
    # Without names only the bytes count.
    assert source_digest([files[0], moved]) == bare
