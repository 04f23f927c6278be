"""The ladder's harness (modes/ladder/: runner.py, results.py): its timetable pairs each rung
with its own app's response_model, its figures come from the paired windows, a rung answering
other posts is refused before timing, and a real run writes every figure the README promises."""

import json
from collections import Counter
from statistics import median

import httpx
import pytest

from commons.ladder import BASE_RUNG, LADDER_PREFIX, RUNG_NAMES
from commons.plain_json import native_orjson, posts_payload
from commons.synthetic import build_ladder_posts
from harness_tests.pairing import slot_of
from harness_tests.runner import only_run, port_options, run_in_process, run_runner
from loadtest.lab.errors import LabError
from loadtest.load.locust_runs import LocustRun
from loadtest.load.slots import Slot
from loadtest.load.windows import WindowRecord
from loadtest.modes.ladder.results import (
    add_floor_shares,
    comparison_figures,
    ladder_flags,
    rung_figures,
    rung_slot,
)
from loadtest.modes.ladder.runner import check_rungs, ladder_groups
from loadtest.modes.ladder.verify import verify_ladder

UPPER = [rung for rung in RUNG_NAMES if rung != BASE_RUNG]


def test_every_group_holds_each_apps_rung_next_to_its_response_model() -> None:
    groups = ladder_groups(("v1", "v2"), RUNG_NAMES, rounds=4)
    assert len(groups) == 4 * len(UPPER)
    base_first = Counter()
    for group in groups:
        assert len(group) == 4 and len(set(group)) == 4
        [rung] = {Slot.parse(slot).variant for slot in group} - {BASE_RUNG}
        for app in ("v1", "v2"):
            base, own = group.index(rung_slot(app, BASE_RUNG)), group.index(rung_slot(app, rung))
            assert abs(base - own) == 1, group  # adjacent windows
            base_first[(app, rung)] += base < own
    # Over four rounds each app takes response_model first in exactly half of each rung's groups.
    assert set(base_first.values()) == {2}


def test_every_rung_comes_once_a_round_in_a_rotating_place() -> None:
    groups = ladder_groups(("v2",), RUNG_NAMES, rounds=3)
    rounds = [groups[index : index + len(UPPER)] for index in range(0, len(groups), len(UPPER))]
    firsts = []
    for round_groups in rounds:
        rungs = [
            Slot.parse(next(s for s in g if not s.endswith(BASE_RUNG))).variant
            for g in round_groups
        ]
        assert sorted(rungs) == sorted(UPPER)
        firsts.append(rungs[0])
    assert len(set(firsts)) == 3


def window(
    slot: str, group: int, requests: int, app_cpu_s: float, failures: int = 0
) -> WindowRecord:
    return WindowRecord(
        repeat=1,
        scenario="ladder",
        slot=slot,
        window=0,
        round=group,
        started_at=0.0,
        duration_s=1.0,
        requests=requests,
        failures=failures,
        histogram={},
        app_cpu_s=app_cpu_s,
        cpu_span_s=1.0,
    )


def test_speed_ups_are_paired_within_groups_and_get_an_interval() -> None:
    records = []
    for group in range(8):
        drift = 1 + group / 10  # the machine's speed moves between groups, not within one
        records += [
            window("v2/response_model", group, round(100 * drift), 0.9),
            window("v2/floor", group, round(400 * drift), 0.9 / 4 / 2),
        ]
    figures = rung_figures(records, "v2", "floor", groups_per_round=1)
    assert figures["speedup"]["estimate"] == pytest.approx(4.0, rel=0.01)
    assert figures["speedup"]["pairs"] == 8
    assert figures["speedup"]["ci95_low"] is not None
    # CPU per request: 900 ms / (100 x drift) on response_model, 112.5 ms / (400 x drift) here.
    assert figures["cpu_speedup"]["estimate"] == pytest.approx(32.0, rel=0.02)
    assert figures["windows"] == 8
    assert figures["load_bound"] is True  # 0.1125 s of CPU in a 1 s span: far from saturated
    base = rung_figures(records, "v2", BASE_RUNG, groups_per_round=1)
    assert "speedup" not in base and base["load_bound"] is False  # the reference itself


def test_the_share_of_the_floor_is_paired_through_each_rungs_response_model() -> None:
    # Two groups a round: "plain_json" next to response_model, then "floor" next to it. The
    # floor's groups always run on a faster machine (x1.5): unpaired medians would say the
    # rung has a third of the floor's speed; per round, through response_model, it has half.
    records = []
    for round_ in range(8):
        records += [
            window("v2/response_model", 2 * round_, 100, 0.95),
            window("v2/plain_json", 2 * round_, 200, 0.95),
            window("v2/response_model", 2 * round_ + 1, 150, 0.95),
            window("v2/floor", 2 * round_ + 1, 600, 0.95),
        ]
    rungs = ("response_model", "plain_json", "floor")
    figures = {rung: rung_figures(records, "v2", rung, 2) for rung in rungs}
    add_floor_shares(records, "v2", figures, groups_per_round=2)
    assert figures["plain_json"]["share_of_floor"]["estimate"] == pytest.approx(0.5)
    assert figures["plain_json"]["share_of_floor"]["pairs"] == 8
    assert figures["response_model"]["share_of_floor"]["estimate"] == pytest.approx(0.25)
    assert figures["floor"]["share_of_floor"]["estimate"] == 1.0
    # CPU per request scales the same way here: 0.95 s over each window's requests.
    assert figures["plain_json"]["share_of_floor_by_cpu"]["estimate"] == pytest.approx(0.5)


def test_each_app_is_compared_with_v1_rung_by_rung_within_its_groups() -> None:
    """v2 over v1 per rung, paired by group (the two apps' windows of a rung share one): twice
    as fast on floor, as fast on response_model, whatever the machine's speed between groups."""
    records = []
    for group in range(6):
        drift = 1 + group / 5
        for app, floor_rps in (("v1", 300), ("v2", 600)):
            records += [
                window(f"{app}/response_model", group, round(100 * drift), 0.9),
                window(f"{app}/floor", group, round(floor_rps * drift), 0.9),
            ]
    comparisons = comparison_figures(records, ("v1", "v2"), ("response_model", "floor"))
    assert list(comparisons) == ["v2_over_v1"]
    floor, base = comparisons["v2_over_v1"]["floor"], comparisons["v2_over_v1"]["response_model"]
    assert (floor["estimate"], floor["pairs"]) == (pytest.approx(2.0, rel=0.01), 6)
    assert (base["estimate"], base["pairs"]) == (1.0, 6)
    assert comparison_figures(records, ("v2",), ("floor",)) == {}  # no v1, nothing to compare


def test_flags_name_failures_load_bound_rungs_and_wide_intervals() -> None:
    records = []
    for group in range(6):
        records += [
            window("v1/response_model", group, 100, 0.95),
            window("v1/floor", group, 300 + 150 * (group % 2), 0.5, failures=1),
        ]
    ladder = {
        "v1": {rung: rung_figures(records, "v1", rung, 1) for rung in ("response_model", "floor")}
    }
    locust = LocustRun(
        requests=1, failures=0, elapsed_s=1.0, histogram={}, cpu_warnings=2, cpu_percent=95.0
    )
    flags = ladder_flags(ladder, {}, records, locust, 1, {"rps": 7000.0})
    text = "\n".join(flags)
    assert "v1: failed requests (not counted as throughput): floor 6" in text
    assert "† the app kept under 90% of its CPU busy on floor" in text
    assert "locust reached 7,000 r/s" in text
    assert "load generator CPU-bound (2 locust warnings)" in text
    # The floor's CPU ratio swings 1.5x; its r/s ratio is load-bound, so not counted.
    assert "95% CI wider than ±5%: v1 floor (CPU) ±" in text


def serve(bodies: dict[str, bytes]) -> httpx.Client:
    def answer(request: httpx.Request) -> httpx.Response:
        rung = request.url.path.removeprefix(f"{LADDER_PREFIX}/")
        return httpx.Response(
            200, content=bodies[rung], headers={"content-type": "application/json"}
        )

    return httpx.Client(transport=httpx.MockTransport(answer), base_url="http://app")


def test_verification_rejects_a_rung_that_answers_different_posts() -> None:
    reference = native_orjson(posts_payload(build_ladder_posts()))
    short = json.loads(reference)
    short["posts"] = short["posts"][:-1]
    bodies = dict.fromkeys(RUNG_NAMES, reference) | {"construct": json.dumps(short).encode()}
    with serve(bodies) as client:
        problems = verify_ladder(client, RUNG_NAMES)
        assert problems["construct"] == ["99 posts, expected 100"]
        assert all(not found for rung, found in problems.items() if rung != "construct")
        with pytest.raises(LabError, match="/ladder/construct failed verification"):
            check_rungs("v1", client, RUNG_NAMES)


def test_verification_passes_the_same_posts_written_differently() -> None:
    posts = posts_payload(build_ladder_posts())
    reference = native_orjson(posts)
    as_z = reference.replace(b"+00:00", b"Z")
    with serve(dict.fromkeys(RUNG_NAMES, reference) | {"pydantic_json": as_z}) as client:
        assert all(not found for found in verify_ladder(client, RUNG_NAMES).values())
        check_rungs("v2", client, RUNG_NAMES)


def test_a_real_ladder_run_writes_every_rung(tmp_path) -> None:
    """One arm: the second only adds windows of the same rungs (its answers are checked by
    tests/api/test_ladder.py, its comparison with v1 above)."""
    done = run_runner(
        "ladder",
        "--apps",
        "v2",
        "--pairs",
        "6",  # the fewest it takes
        "--window",
        "0.4",
        "--users",
        "1",
        "--no-calibration",
        "--results-dir",
        str(tmp_path),
        *port_options(),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    run_dir = only_run(tmp_path)
    assert run_dir.name.endswith("-ladder")
    results = json.loads((run_dir / "results.json").read_text())
    assert results["kind"] == "ladder"
    assert set(results["ladder"]) == {"v2"}
    for app, rungs in results["ladder"].items():
        assert list(rungs) == list(RUNG_NAMES), app
        for rung, figures in rungs.items():
            # The median of the rung's windows, one stalled empty by the machine included.
            own = [w["rps"] for w in results["windows"] if slot_of(w) == f"{app}/{rung}"]
            # response_model's beside every other rung's, in each round
            assert len(own) == figures["windows"] == 6 * (len(UPPER) if rung == BASE_RUNG else 1)
            assert figures["rps"] == pytest.approx(median(own), abs=0.1), (app, rung)
            assert figures["app_cpu_us_per_request"] is not None, (app, rung)
            if rung != BASE_RUNG:
                assert figures["speedup"]["pairs"] >= 1, (app, rung)
            assert figures["failures"] == 0, (app, rung)
    assert results["comparisons"] == {}
    report = (run_dir / "report.md").read_text()
    assert "floor" in report and "serialisation ladder" in done.stdout
    # Its report rebuilds from results.json alone, as every mode's does.
    (run_dir / "report.md").unlink()
    rebuilt = run_in_process("report", str(run_dir))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert (run_dir / "report.md").read_text() == report
