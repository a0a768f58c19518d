"""`nara-kg bench --scale N --incremental`: the 0.1% edit, the measurements' arithmetic, the
report and its section in BENCHMARKS.md / SCALING.md; one tiny run end to end against Neo4j."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.incremental import (
    MODES,
    change_one_file,
    covered_seconds,
    edit_lines,
    edit_positions,
    incremental_growth,
    pick_file,
    records_to_edit,
    relink_lines,
    relink_one_file,
    step_peak_rss_mb,
)
from benchmarks.incremental_report import (
    INCREMENTAL_END,
    INCREMENTAL_START,
    SECTION_TITLE,
    markdown_incremental_report,
    replace_section,
    update_incremental_section,
)


def _line(na_id: int, **record: Any) -> str:
    return json.dumps({"record": {"naId": na_id, "title": f"t{na_id}", **record}})


def test_records_to_edit_is_the_share_at_least_one_at_most_the_file() -> None:
    assert records_to_edit(100_000, 200) == 100
    assert records_to_edit(2_000, 200) == 2
    assert records_to_edit(300, 200) == 1
    assert records_to_edit(1_000_000, 200) == 200


def test_edit_positions_are_spread_and_deterministic() -> None:
    assert edit_positions(200, 4) == [0, 50, 100, 150]
    assert edit_positions(3, 10) == [0, 1, 2]
    assert edit_positions(5, 0) == []


def test_edit_lines_changes_the_chunked_body_of_those_records_only() -> None:
    lines = [
        _line(1, scopeAndContentNote="Letters."),
        _line(2, authorityType="person", biographicalNote="Born 1900."),
        _line(3),
        _line(4, authorityType="person", biographicalNote="Born 1901."),
    ]
    edited, positions = edit_lines(lines, 2, tag="x")
    assert positions == [0, 2]
    assert edited[1] == lines[1] and edited[3] == lines[3]
    first = json.loads(edited[0])["record"]
    assert first["scopeAndContentNote"].startswith("Letters.\n\nRevised")
    third = json.loads(edited[2])["record"]
    assert "Revised in incremental benchmark edit x.1" in third["scopeAndContentNote"]
    assert edit_lines(lines, 2, tag="x") == (edited, positions)  # deterministic


def test_change_one_file_edits_the_share_in_the_largest_file(tmp_path: Path) -> None:
    big, small = tmp_path / "a" / "big.jsonl", tmp_path / "b" / "small.jsonl"
    for path, count in ((big, 1500), (small, 500)):
        path.parent.mkdir()
        path.write_text("\n".join(_line(i) for i in range(count)) + "\n")
    (tmp_path / "questions.jsonl").write_text("{}\n")  # beside the export: not a record file
    before = small.read_text()
    change = change_one_file(tmp_path)
    assert change["file"] == "a/big.jsonl" and change["records_changed"] == 2
    assert change["records_total"] == 2000 and change["share"] == 0.001
    assert small.read_text() == before
    assert big.read_text().count("Revised in incremental benchmark edit") == 2
    assert pick_file({Path("y"): 3, Path("x"): 3, Path("z"): 1}) == Path("x")


def test_relink_lines_gives_each_record_a_subject_it_does_not_name_yet() -> None:
    known = {"naId": 7, "heading": "Floods", "authorityType": "topicalSubject"}
    other = {"naId": 8, "heading": "Dams", "authorityType": "topicalSubject"}
    lines = [_line(1, subjects=[known]), _line(2), _line(3), _line(4, subjects=[known, other])]
    relinked, positions = relink_lines(lines, [known, other], 4)
    # Record 1 names the first subject already, so it gets the next; record 4 names both.
    assert positions == [0, 1, 2]
    assert [s["naId"] for s in json.loads(relinked[0])["record"]["subjects"]] == [7, 8]
    assert json.loads(relinked[1])["record"]["subjects"] == [known]
    assert json.loads(relinked[2])["record"]["subjects"] == [other]
    assert relinked[3] == lines[3]
    assert relink_lines(lines, [], 4) == (lines, [])


def test_relink_one_file_takes_subjects_from_other_description_files(tmp_path: Path) -> None:
    subject = {"naId": 9, "heading": "Dams", "authorityType": "topicalSubject"}
    big = tmp_path / "descriptions" / "a" / "big.jsonl"
    donor = tmp_path / "descriptions" / "b" / "donor.jsonl"
    authorities = tmp_path / "authority-records" / "person" / "people.jsonl"
    for path, lines in (
        (big, [_line(i) for i in range(1500)]),
        (donor, [_line(2000, subjects=[subject])]),
        (authorities, [_line(3000 + i, authorityType="person") for i in range(2000)]),
    ):
        path.parent.mkdir(parents=True)
        path.write_text("\n".join(lines) + "\n")
    # The authority file is the largest, but only a description file is relinked.
    relink = relink_one_file(tmp_path)
    assert relink["file"] == "descriptions/a/big.jsonl" and relink["records_changed"] == 4
    assert big.read_text().count('"heading": "Dams"') == 4
    assert relink["records_total"] == 3501


def test_covered_seconds_counts_overlapping_steps_once() -> None:
    assert covered_seconds([]) == 0.0
    assert covered_seconds([(0, 2), (1, 3), (5, 6)]) == 4.0
    assert covered_seconds([(5, 6), (0, 10)]) == 10.0


def _build(wall: float, steps: dict[str, float], rss: float, touched: int | None) -> dict:
    covered = sum(steps.values())
    return {
        "wall_seconds": wall,
        "steps": steps,
        "steps_seconds": covered,
        "steps_covered_seconds": covered,
        "orchestration_seconds": wall - covered,
        "peak_rss_mb": rss,
        "peak_tree_rss_mb": rss * 2,
        "records_touched": {} if touched is None else {"graph_nodes": touched},
        "step_peak_rss_mb": {"graph_nodes": rss / 2} if steps else {},
    }


def _result() -> dict[str, Any]:
    runs = []
    for n, factor in ((1_000, 1.0), (10_000, 10.0)):
        runs.append(
            {
                "records": n,
                "files": n // 200,
                "change": {"file": "f.jsonl", "records_changed": 1, "share": 1 / n},
                "relink": {"file": "d.jsonl", "records_changed": 1, "share": 1 / n},
                "builds": {
                    "full": _build(20 * factor, {"graph_nodes": 10 * factor}, 100 * factor, n),
                    "no_change": _build(5.0, {"graph_nodes": 1.0}, 100.0, 0),
                    "one_file_change": _build(8.0, {"graph_nodes": 2.0}, 100.0, None),
                    "one_file_relinked": _build(9.0, {"graph_nodes": 2.0}, 100.0, None)
                    | {
                        "communities": {
                            "leiden_skipped": False,
                            "communities_changed": 3,
                            "memberships_read": n // 20,
                            "records_in_a_community": n,
                        }
                    },
                },
            }
        )
    return {
        "model": "standin-hash:384",
        "runs": runs,
        "growth": incremental_growth(runs),
        "started_at": "now",
        "environment": {"load_average_before": [1.0, 1.0, 1.0]},
    }


def test_a_step_has_the_peak_of_the_process_it_ran_in_alone() -> None:
    from types import SimpleNamespace

    def start(step: str, pid: int) -> SimpleNamespace:
        return SimpleNamespace(step_key=step, dagster_event=SimpleNamespace(pid=pid))

    logs = {
        "run-a": [start("graph_nodes", 11), start("entity_mentions", 12)],
        # A run whose steps shared one process, and a step run again in a bigger process.
        "run-b": [start("next_relationships", 13), start("includes", 13), start("graph_nodes", 14)],
    }
    instance = SimpleNamespace(all_logs=lambda run_id, of_type: logs[run_id])
    peaks = step_peak_rss_mb(instance, ["run-a", "run-b"], {11: 1024, 12: 4096, 13: 9999, 14: 2048})
    assert peaks == {"entity_mentions": 4.0, "graph_nodes": 2.0}


def test_growth_exponents_per_build() -> None:
    (pair,) = _result()["growth"]
    assert (pair["from_records"], pair["to_records"]) == (1_000, 10_000)
    assert pair["modes"]["full"]["wall_seconds"] == 1.0
    assert pair["modes"]["full"]["steps"] == {"graph_nodes": 1.0}
    assert pair["modes"]["no_change"]["wall_seconds"] == 0.0
    assert pair["modes"]["no_change"]["peak_rss_mb"] == 0.0
    assert set(pair["modes"]) == set(MODES)


def test_report_tables() -> None:
    text = markdown_incremental_report(_result())
    assert "| 10,000 | 50 | nothing changed | 5.0 | 1.0 | 4.0 | 100 | 200 | 0 |" in text
    assert "| 1,000 | 5 | 0.1% changed, one file | 8.0 | 2.0 | 6.0 | 100 | 200 | - |" in text
    assert "| graph_nodes | 10.00 (1,000) | 100.00 (10,000) |" in text
    assert "| 1,000→10,000 | full (`--full`) | 1.00 |" in text
    assert "edit of 1 records (0.010%) in `f.jsonl`" in text
    assert "added to 1 records (0.010%) in `d.jsonl`: Leiden's projection changes" in text
    assert "| 10,000 | 0.1% relinked, one file | yes | 3 | 500 | 10,000 |" in text
    # Each step's own peak, with its exponent (50 -> 500 MB over 1,000 -> 10,000 records).
    assert "| graph_nodes | 50 | 500 | 1.00 |" in text
    result = _result()
    for run in result["runs"]:
        run["builds"]["no_change"]["steps"] = {}
    assert "_no step ran: the build launched no run._" in markdown_incremental_report(result)


def test_section_is_added_once_then_replaced(tmp_path: Path) -> None:
    path = tmp_path / "SCALING.md"
    path.write_text("# Scaling\n\nProse.\n")
    update_incremental_section(path, _result())
    first = path.read_text()
    assert first.startswith("# Scaling\n\nProse.\n\n" + SECTION_TITLE)
    assert first.count(INCREMENTAL_START) == 1 and first.count(INCREMENTAL_END) == 1
    replaced = replace_section(first + "\nAfter.\n", "new block")
    assert "new block" in replaced and "After." in replaced and "Prose." in replaced
    assert replaced.count(SECTION_TITLE) == 1 and "| records |" not in replaced


@pytest.mark.integration
def test_a_tiny_incremental_run_end_to_end(
    neo4j_driver: Any, neo4j_settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The four builds of one small N through `nara-kg build`, measured (not timed: any
    figure > 0 will do)."""
    from benchmarks.common import wipe_database
    from benchmarks.incremental import run_incremental

    # The steps in one process: this checks the measurements, not the executor.
    monkeypatch.setenv("NARA_KG_EXECUTOR", "in_process")
    result = run_incremental([120], tmp_path, neo4j_settings, timeout=600, keep_last=True)
    (run,) = result["runs"]
    # --keep-last: the last N's export, work directory and graph are left for a follow-up.
    kept = tmp_path / "incremental" / "120"
    assert (kept / "data").is_dir() and (kept / "work").is_dir()
    with neo4j_driver.session(database=neo4j_settings.database) as session:
        assert session.run("MATCH (n) RETURN count(n) > 0 AS any").single()["any"]
    wipe_database(neo4j_driver, neo4j_settings.database)
    assert run["change"]["records_changed"] == 1
    full, unchanged, changed, relinked = (run["builds"][mode] for mode in MODES)
    for build in (full, unchanged, changed, relinked):
        assert build["wall_seconds"] > 0 and build["peak_rss_mb"] > 0
        assert 0 <= build["orchestration_seconds"] <= build["wall_seconds"]
    assert "graph_nodes" in full["steps"] and full["files_processed"] == run["files"]
    # Every step ran in the run's one process: none has a peak of its own.
    assert full["step_peak_rss_mb"] == {}
    # Nothing changed: no step runs at all; one file changed: only that file is processed.
    assert unchanged["steps"] == {} and unchanged["run_ids"] == []
    assert changed["files_processed"] == 1 and "graph_nodes" in changed["steps"]
    # A text edit leaves Leiden's projection as it was; a new subject changes it.
    assert changed["communities"]["leiden_skipped"] is True
    assert run["relink"]["records_changed"] >= 1
    figures = relinked["communities"]
    assert figures["leiden_skipped"] is False
    assert 0 < figures["memberships_read"] <= figures["records_in_a_community"]
    report = markdown_incremental_report(result)
    assert "| 120 |" in report and "| 0.1% relinked, one file | yes |" in report
