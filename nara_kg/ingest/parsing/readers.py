"""Input lines and files -> ParsedRecord or Rejected, streamed: `.jsonl`/`.json`, gzip, zip.

A zip cut short (no central directory) is salvaged by reading its local headers front to back,
so the members that are whole still count. Nothing here raises for bad content: a bad line, an
empty file and a damaged stream each become one `Rejected`.
"""

from __future__ import annotations

import gzip
import io
import json
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Final, TypeVar

from nara_kg.ingest.parsing.parse import flatten_record, unwrap
from nara_kg.ingest.parsing.results import ParsedRecord, Rejected, RejectRecord

#: The most characters of a bad line kept in its Rejected.
RAW_LIMIT: Final = 2_000

#: What a line parser makes of a line: `parse_line`'s ParsedRecord, or a stand-in of its own.
Parsed = TypeVar("Parsed")


def _raw(text: str) -> str:
    return text[:RAW_LIMIT]


def parse_line(line: str | bytes, file_name: str, line_num: int) -> ParsedRecord | Rejected:
    """One line of any supported shape -> a ParsedRecord, or a Rejected naming what is wrong.

    Never raises for bad content.
    """
    if isinstance(line, bytes | bytearray):
        try:
            text = bytes(line).decode("utf-8")
        except UnicodeDecodeError as exc:
            shown = bytes(line).decode("utf-8", errors="replace")
            return Rejected(file_name, line_num, f"invalid UTF-8 at byte {exc.start}", _raw(shown))
    else:
        text = line
    text = text.removeprefix("\ufeff")  # a byte-order mark on a file's first line
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return Rejected(
            file_name, line_num, f"malformed JSON: {exc.msg} (col {exc.colno})", _raw(text)
        )
    except RecursionError:
        return Rejected(file_name, line_num, "malformed JSON: nested too deeply", _raw(text))
    try:
        record, transcription = unwrap(obj)
        return flatten_record(record, transcription, file_name, line_num)
    except RejectRecord as exc:
        return Rejected(file_name, line_num, str(exc), _raw(text))
    except Exception as exc:  # a shape nobody foresaw must cost one line, never the run
        reason = f"parser error: {type(exc).__name__}: {exc}"
        return Rejected(file_name, line_num, reason, _raw(text))


def _iter_lines(
    lines: Iterable[bytes],
    name: str,
    damage: Callable[[BaseException], str],
    parse: Callable[[bytes, str, int], Parsed | Rejected],
) -> Iterator[Parsed | Rejected]:
    """Parse a stream of lines; damage to the stream itself ends it with one Rejected."""
    line_num = 0
    seen = False
    try:
        for raw in lines:
            line_num += 1
            body = raw.rstrip(b"\r\n")
            if not body.strip():
                continue  # blank lines carry nothing and are not errors
            seen = True
            yield parse(body, name, line_num)
    except (EOFError, OSError, zlib.error, zipfile.BadZipFile) as exc:
        yield Rejected(name, line_num + 1, damage(exc), "")
        return
    if not seen:
        yield Rejected(name, 0, "empty file", "")


def _gzip_damage(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return f"truncated gzip stream: {exc}"
    return f"corrupt gzip stream: {exc}"


def _zip_damage(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return f"truncated zip archive: {exc}"
    return f"corrupt zip member: {exc}"


def _is_record_member(member: str) -> bool:
    lower = member.lower()
    base = lower.rsplit("/", 1)[-1]
    return (
        lower.endswith((".jsonl", ".json"))
        and not base.startswith(".")
        and not lower.startswith("__macosx/")
    )


def iter_file(path: Path, *, display_name: str | None = None) -> Iterator[ParsedRecord | Rejected]:
    """Stream one input file (`.jsonl`, `.json`, `.jsonl.gz`/`.gz`, `.zip`), line by line.

    Never reads a whole file into memory and never raises for bad content: each bad line, an
    empty file, and a truncated or corrupt compressed stream each become a `Rejected`.
    """
    name = display_name or path.name
    lower = path.name.lower()
    if lower.endswith(".zip"):
        try:
            if path.stat().st_size == 0:
                yield Rejected(name, 0, "empty file", "")
                return
            yield from _iter_zip(path, name)
        except OSError as exc:
            yield Rejected(name, 0, f"unreadable file: {exc}", "")
        return
    yield from iter_lines_with(path, parse_line, display_name=display_name)


def iter_lines_with(
    path: Path,
    parse: Callable[[bytes, str, int], Parsed | Rejected],
    *,
    display_name: str | None = None,
) -> Iterator[Parsed | Rejected]:
    """:func:`iter_file` for a `.jsonl`, `.json` or gzip file, each line given to `parse`
    (bytes, file name, 1-based line number) instead of :func:`parse_line`: an incremental
    parse answers an unchanged line from its previous rows. Not for zip archives, whose
    members number their lines each from 1."""
    name = display_name or path.name
    try:
        if path.stat().st_size == 0:
            yield Rejected(name, 0, "empty file", "")
            return
        if path.name.lower().endswith(".gz"):
            with gzip.open(path, "rb") as stream:
                yield from _iter_lines(stream, name, _gzip_damage, parse)
        else:
            with path.open("rb") as stream:
                yield from _iter_lines(stream, name, lambda exc: f"unreadable file: {exc}", parse)
    except OSError as exc:
        yield Rejected(name, 0, f"unreadable file: {exc}", "")


def _iter_zip(path: Path, name: str) -> Iterator[ParsedRecord | Rejected]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        # No central directory: the archive was cut short. Salvage the members that are whole
        # by reading local headers front to back.
        yield from _iter_zip_salvage(path, name)
        return
    with archive:
        members = [
            info
            for info in archive.infolist()
            if not info.is_dir() and _is_record_member(info.filename)
        ]
        if not members:
            yield Rejected(name, 0, "empty file: archive has no .jsonl or .json member", "")
            return
        for info in members:
            member_name = f"{name}!{info.filename}"
            damage = _member_damage(archive, info)
            if damage is not None:
                yield Rejected(member_name, 0, damage, "")
                continue
            try:
                with archive.open(info) as stream:
                    yield from _iter_lines(stream, member_name, _zip_damage, parse_line)
            except (zipfile.BadZipFile, zlib.error, NotImplementedError, OSError) as exc:
                yield Rejected(member_name, 0, f"corrupt zip member: {exc}", "")


def _member_damage(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str | None:
    """Why a member cannot be trusted (its CRC fails, its data is corrupt), or None. Checked
    by a first read of the whole member before any of its lines is parsed: zipfile checks
    the CRC only at the member's end, after every line but the last was read, so an altered
    line would load and an intact last line be lost."""
    try:
        with archive.open(info) as stream:
            while stream.read(_READ_SIZE):
                pass
    except (zipfile.BadZipFile, zlib.error, NotImplementedError, EOFError, OSError) as exc:
        return f"corrupt zip member (none of its lines is trusted): {exc}"
    return None


def _split_lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    pending = b""
    for chunk in chunks:
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line + b"\n"
    if pending:
        yield pending


_LOCAL_HEADER: Final = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE: Final = 0x04034B50
_READ_SIZE: Final = 1 << 16


def _member_chunks(stream: IO[bytes], method: int, size: int) -> Iterator[bytes]:
    """Decompressed bytes of one member, leaving `stream` just after its data."""
    if method == zipfile.ZIP_STORED:
        remaining = size
        while remaining:
            block = stream.read(min(remaining, _READ_SIZE))
            if not block:
                raise EOFError("member data ends early")
            remaining -= len(block)
            yield block
        return
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    while not inflater.eof:
        block = stream.read(_READ_SIZE)
        if not block:
            raise EOFError("member data ends early")
        out = inflater.decompress(block)
        if out:
            yield out
    if inflater.unused_data:
        stream.seek(-len(inflater.unused_data), io.SEEK_CUR)


def _salvaged_crc_fails(
    stream: IO[bytes], method: int, size: int, flags: int, header_crc: int
) -> bool:
    """Whether a whole member of a cut-short archive fails its CRC (read to its end, and past
    its data descriptor when it has one). A member cut short is not judged here: the second
    read salvages its whole lines and reports where it ends."""
    crc = 0
    try:
        for block in _member_chunks(stream, method, size):
            crc = zlib.crc32(block, crc)
    except (EOFError, zlib.error):
        return False
    expected = header_crc
    if flags & 0x08:
        descriptor = stream.read(4)
        if descriptor == b"PK\x07\x08":
            descriptor = stream.read(4)
        if len(descriptor) < 4:
            return False
        expected = int.from_bytes(descriptor, "little")
        stream.read(8)
    return crc != expected


def _iter_zip_salvage(path: Path, name: str) -> Iterator[ParsedRecord | Rejected]:
    with path.open("rb") as stream:
        any_member = False
        while True:
            header = stream.read(_LOCAL_HEADER.size)
            if len(header) < _LOCAL_HEADER.size:
                break
            fields = _LOCAL_HEADER.unpack(header)
            signature, _version, flags, method = fields[0], fields[1], fields[2], fields[3]
            compressed_size, name_length, extra_length = fields[7], fields[9], fields[10]
            if signature != _LOCAL_SIGNATURE:
                break  # the central directory (or garbage): no more local entries
            encoding = "utf-8" if flags & 0x800 else "cp437"
            member = stream.read(name_length).decode(encoding, errors="replace")
            stream.read(extra_length)
            member_name = f"{name}!{member}"
            stored_unknown_size = method == zipfile.ZIP_STORED and flags & 0x08
            if method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or stored_unknown_size:
                yield Rejected(
                    member_name,
                    0,
                    f"truncated zip archive: cannot salvage a member with method {method}",
                    "",
                )
                return
            if _is_record_member(member) and not member.endswith("/"):
                any_member = True
                start = stream.tell()
                if _salvaged_crc_fails(stream, method, compressed_size, flags, fields[6]):
                    yield Rejected(
                        member_name,
                        0,
                        "corrupt zip member (none of its lines is trusted): Bad CRC-32",
                        "",
                    )
                    continue  # the check read past the member and its data descriptor
                stream.seek(start)
                chunks = _member_chunks(stream, method, compressed_size)
                damaged = False
                for result in _iter_lines(
                    _split_lines(chunks), member_name, _zip_damage, parse_line
                ):
                    damaged = damaged or (
                        isinstance(result, Rejected)
                        and result.reason.startswith("truncated zip archive")
                    )
                    yield result
                if damaged:
                    return
            else:
                chunks = _member_chunks(stream, method, compressed_size)
                try:
                    for _ in chunks:
                        pass
                except (EOFError, zlib.error) as exc:
                    yield Rejected(member_name, 0, _zip_damage(exc), "")
                    return
            if flags & 0x08:
                # Data descriptor: optional signature, CRC, sizes (zip64 sizes not supported).
                descriptor = stream.read(4)
                stream.read(12 if descriptor == b"PK\x07\x08" else 8)
        if not any_member:
            yield Rejected(name, 0, "truncated zip archive: no readable member", "")
            return
        yield Rejected(name, 0, "truncated zip archive: central directory missing", "")
