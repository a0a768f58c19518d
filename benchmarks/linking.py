"""Speed of entity linking on synthetic data: `python -m benchmarks.linking [chunks] [auths]`.

Builds `auths` synthetic authorities (persons with inverted, dated headings; organizations with
hierarchies and dates; places with qualifiers; topical subjects), then links `chunks` chunks of
about 1,000 characters of filler prose naming about five of them each (some names inverted, some
hyphenated at a line break, some upper-case; one in ten chunks names a shared form).

Measured on the development machine (2 CPU cores shared with other work, one process, Python
3.11, pyahocorasick 2.3.1), 10,000 chunks of ~1,000 characters and 5,000 authorities:

    build: 5,000 authorities -> 24,287 surface forms in 0.6 s
    link:  10,000 chunks (10.0 M characters) in 2.0-2.2 s of CPU (3.1-3.4 s wall under load):
           about 0.2 ms a chunk, ~3,000 chunks/s; 45,444 mentions, 1,619 ambiguous forms left
           unlinked. Normalization is about 70% of it, the automaton scan about 10%, settling
           and counting the rest.

For scale: BENCHMARKS.md measures plain all-MiniLM-L6-v2 encoding at about 80 chunks/s on the
same 2 CPUs, so 10,000 chunks take about two minutes to embed; linking them adds about 2%.
"""

from __future__ import annotations

import random
import sys
import time

from nara_kg.linking.authorities import Authority
from nara_kg.linking.linker import ChunkText, EntityLinker, link_chunks

_SYLLABLES = (
    "bar", "ken", "dal", "mor", "ris", "tov", "lan", "sel", "wick", "ham", "ton", "ber",
    "cor", "fen", "gil", "hol", "jas", "kir", "lom", "nev", "pel", "quin", "rud", "stan",
)  # fmt: skip
_FILLER_TEXT = (
    "the report was forwarded to the field office for further action and the inspection showed "
    "that most of the work had been completed before the end of the season while local "
    "officials asked that the correspondence be filed with the annual statements"
)
_FILLER = tuple(_FILLER_TEXT.split())


def _word(rng: random.Random, parts: int = 2) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(parts)).capitalize()


def synthetic_authorities(count: int, rng: random.Random) -> list[Authority]:
    authorities: list[Authority] = []
    for index in range(count):
        na_id = 900_000_000 + index
        kind = index % 10
        if kind < 4:
            born = rng.randint(1800, 1950)
            last, first, middle = _word(rng, 3), _word(rng), _word(rng)
            authorities.append(
                Authority(
                    na_id,
                    "person",
                    f"{last}, {first} {middle[0]}. ({first} {middle}), {born}-{born + 70}",
                    (f"{last}, {first[0]}. {middle[0]}.",),
                    born,
                    born + 70,
                )
            )
        elif kind < 7:
            start = rng.randint(1850, 1990)
            heading = f"Department of {_word(rng)}. Bureau of {_word(rng, 3)}. {start}-{start + 20}"
            authorities.append(
                Authority(na_id, "organization", heading, (f"{_word(rng, 3)} Board",), start)
            )
        elif kind < 9:
            heading = f"{_word(rng, 3)} ({rng.choice(('Ill.', 'Ohio', 'Tex.'))})"
            authorities.append(Authority(na_id, "geographicPlaceName", heading))
        else:
            authorities.append(Authority(na_id, "topicalSubject", f"{_word(rng, 3)} control"))
    return authorities


def synthetic_chunks(
    count: int, authorities: list[Authority], rng: random.Random
) -> list[ChunkText]:
    names: list[str] = []
    for authority in authorities:
        if authority.authority_type == "person":
            last, rest = authority.heading.split(", ", 1)
            names.append(f"{rest.split(' (')[0]} {last}")
        else:
            names.append(authority.heading.split(". ")[-2 if "Bureau" in authority.heading else 0])
    chunks: list[ChunkText] = []
    for index in range(count):
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < 1_000:
            if rng.random() < 0.03:
                name = rng.choice(names)
                if rng.random() < 0.1:
                    name = name.upper()
                elif rng.random() < 0.1 and len(name) > 8:
                    name = f"{name[:4]}-\n{name[4:]}"
                words.append(name)
            else:
                words.append(rng.choice(_FILLER))
        record = rng.choice(authorities).na_id
        chunks.append(ChunkText(f"c{index}", " ".join(words), index, frozenset({record})))
    return chunks


def main(argv: list[str]) -> None:
    chunk_count = int(argv[0]) if argv else 10_000
    authority_count = int(argv[1]) if len(argv) > 1 else 5_000
    rng = random.Random(14)
    authorities = synthetic_authorities(authority_count, rng)
    chunks = synthetic_chunks(chunk_count, authorities, rng)
    started = time.perf_counter()
    linker = EntityLinker.from_authorities(authorities)
    built = time.perf_counter() - started
    print(
        f"build: {len(authorities):,} authorities -> {len(linker.matcher):,} forms in {built:.2f} s"
    )
    characters = sum(len(c.text) for c in chunks)
    started, cpu_started = time.perf_counter(), time.process_time()
    result = link_chunks(chunks, linker)
    took, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    print(
        f"link: {len(chunks):,} chunks ({characters / 1e6:.1f} M characters) in {took:.2f} s "
        f"({cpu:.2f} s CPU), {len(chunks) / took:,.0f} chunks/s; "
        f"{len(result.mentions):,} mentions, {len(result.ambiguous):,} ambiguous, "
        f"{result.chunks_with_mentions:,} chunks with some"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
