"""The AM helper's records read back: clones launched, clones that won, losers killed, and the map
outputs reduce clones read from their own copy within ω; and the demo's table of them."""

from __future__ import annotations

from pathlib import Path

from pyscheduler.deploy import amrecords, demo

HEADER = "task_id\tphase\tattempt_id\tis_clone\tcontainer_id\tnode_id\tstate\tlaunch_ms\tfinish_ms\twinner"
APP = "application_1_0001"


def _row(task: str, k: int, clone: bool, state: str, launch: int, finish: int, won: bool) -> str:
    attempt = task.replace("task_", "attempt_") + f"_{k}"
    phase = "map" if "_m_" in task else "reduce"
    cells = [
        task,
        phase,
        attempt,
        str(clone).lower(),
        f"container_{k}",
        "n1:1",
        state,
        str(launch),
        str(finish),
    ]
    return "\t".join([*cells, str(won).lower()])


def _write(records: Path) -> None:
    m0, r0 = "task_1_0001_m_000000", "task_1_0001_r_000000"
    rows = [
        _row(m0, 0, False, "KILLED", 1000, 9000, False),  # the original straggles, its clone wins
        _row(m0, 1, True, "SUCCEEDED", 1500, 4000, True),
        _row(m0, 2, True, "KILLED", 0, 0, False),  # asked for, never launched: not counted
        _row(r0, 0, False, "SUCCEEDED", 9500, 12000, True),
        _row(r0, 1, True, "KILLED", 9600, 12100, False),
    ]
    records.mkdir(parents=True)
    (records / f"{APP}.tsv").write_text("# job_state=SUCCEEDED\n" + HEADER + "\n" + "\n".join(rows) + "\n")
    fetch = records / "fetch"
    fetch.mkdir()
    head = "map_index\tcopy\treason\twaited_ms\n"
    (fetch / "attempt_1_0001_r_000000_1.tsv").write_text(
        head
        + "0\tattempt_1_0001_m_000000_1\town copy 1\t0\n1\tattempt_1_0001_m_000001_0\tomega elapsed\t900\n"
    )
    # The original reduce's own reads are not a clone's: not counted.
    (fetch / "attempt_1_0001_r_000000_0.tsv").write_text(
        head + "0\tattempt_1_0001_m_000000_1\town copy 0\t0\n"
    )


def test_read_app_counts_launched_clones_winners_and_kills(tmp_path: Path) -> None:
    _write(tmp_path / "rec")
    m = amrecords.read_app(tmp_path / "rec", APP)
    assert (m.attempts, m.clones, m.clones_won, m.losers_killed) == (4, 2, 1, 2)
    assert (m.reduce_clone_reads, m.own_copy_reads, m.omega_elapsed) == (2, 1, 1)
    assert m.clone_s == 2.5 + 2.5 and m.attempt_s == 8.0 + 2.5 + 2.5 + 2.5
    assert amrecords.read_app(tmp_path / "rec", "application_1_0002") == amrecords.Mission()
    assert amrecords.read_all(tmp_path / "rec") == m


def test_demo_summary_shows_the_mission(tmp_path: Path) -> None:
    _write(tmp_path / "rec")
    run = demo.Run("dollymp", records=tmp_path / "rec")
    run.missions["wordcount"] = amrecords.read_app(tmp_path / "rec", APP)
    lines = demo.summary([run]).splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("job") and "clones" in line)
    assert lines[head + 1].split() == ["wordcount", "2", "1", "2", "2", "1", "1"]
    assert lines[head + 2].split() == ["all", "2", "1", "2", "2", "1", "1"]
    assert any("clones took 5 of 16 container-seconds (32%)" in line for line in lines)
