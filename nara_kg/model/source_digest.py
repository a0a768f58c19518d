"""One digest of source files, for the stored states that must be thrown away when the code
they were computed with changes (report inputs, the mention index, the selection checks'
memory, the build's up-to-date record)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path


def source_digest(
    sources: Iterable[Path], *, prefix: bytes = b"", names_under: Path | None = None
) -> str:
    """sha256 of `prefix` and each source's bytes, in the order given. With `names_under`,
    each file's path relative to it goes in before its bytes, so that a moved file changes
    the digest too."""
    digest = hashlib.sha256(prefix)
    for path in sources:
        if names_under is not None:
            digest.update(str(path.relative_to(names_under)).encode())
            digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()
