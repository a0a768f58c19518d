"""The benchmark's input: a generated export, and a share of its records changed in place."""

from __future__ import annotations

import json
import random
import shutil
import time
from pathlib import Path
from typing import Any


def generate_dataset(out_dir: Path, records: int, seed: int = 7) -> dict[str, Any]:
    """A fresh synthetic export of about `records` records of all ten types."""
    from nara_kg.demo import generate_demo_data

    if out_dir.exists():
        shutil.rmtree(out_dir)
    started = time.perf_counter()
    summary = generate_demo_data(out_dir, records=records, seed=seed)
    return {
        "records": sum(summary.records_by_type.values()),
        "records_by_type": summary.records_by_type,
        "files": len(summary.files),
        "bytes": sum(path.stat().st_size for path in summary.files),
        "questions": str(summary.questions_path),
        "seconds": round(time.perf_counter() - started, 3),
    }


def generate_dataset_in_child(out_dir: Path, records: int, seed: int = 7) -> dict[str, Any]:
    """:func:`generate_dataset` in a spawned child process. The generator holds its whole world
    in memory (about 12 GB at 10^6 records); the child gives it back before the builds run."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(generate_dataset, out_dir, records, seed).result()


_BODY_FIELD = {
    "person": "biographicalNote",
    "organization": "administrativeHistoryNote",
    "geographicPlaceName": "scopeNote",
    "specificRecordsType": "scopeNote",
    "topicalSubject": "scopeNote",
}


def change_records(data_dir: Path, share: float, seed: int = 7) -> dict[str, Any]:
    """Edit the body text of `share` of the records, picked at random across all files (the
    unfavourable case for file-level skipping: most files get touched)."""
    # The export's files sit below its top folders; questions and labels sit beside them.
    files = sorted(p for p in data_dir.rglob("*.jsonl") if p.parent != data_dir)
    lines_of = {path: path.read_text(encoding="utf-8").splitlines() for path in files}
    positions = [(path, i) for path in files for i in range(len(lines_of[path]))]
    rng = random.Random(seed)
    count = max(1, round(len(positions) * share))
    chosen = rng.sample(positions, count)
    for number, (path, index) in enumerate(chosen):
        payload = json.loads(lines_of[path][index])
        record = payload["record"]
        body = _BODY_FIELD.get(record.get("authorityType", ""), "scopeAndContentNote")
        addition = f"Revised in benchmark update {number}: the description was re-examined."
        record[body] = f"{record.get(body) or ''}\n\n{addition}".strip()
        lines_of[path][index] = json.dumps(payload, ensure_ascii=False)
    touched = sorted({path for path, _ in chosen})
    for path in touched:
        path.write_text("\n".join(lines_of[path]) + "\n", encoding="utf-8")
    return {
        "records_changed": count,
        "records_total": len(positions),
        "share": share,
        "files_touched": len(touched),
        "files_total": len(files),
    }
