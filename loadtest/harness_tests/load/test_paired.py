"""The paired runner: CPU read at window edges, charged to the window's arm."""

from types import SimpleNamespace

import pytest

from loadtest.load.paired import CpuBoundaries
from loadtest.load.schedule import build_grouped_schedule


def test_cpu_is_read_once_per_process_and_charged_to_the_windows_app() -> None:
    # Two rungs of v1 share one process; a window's "other arms" are the other processes only.
    hosts = {"v1/response_model": "", "v1/floor": "", "v2/floor": ""}
    schedule = build_grouped_schedule(
        scenario="ladder",
        hosts=hosts,
        start=0.0,
        groups=[list(hosts)],
        window_s=1.0,
        settle_s=0.5,
        warmup_s=0.0,
    )
    pids = {"v1/response_model": 11, "v1/floor": 11, "v2/floor": 22}
    apps = {arm: SimpleNamespace(pid=pid) for arm, pid in pids.items()}
    boundaries = CpuBoundaries(schedule, apps, None, (1,))  # type: ignore[arg-type]

    def spent(pid: int, moment: float) -> float:  # v1 busy in 0-2 s, v2 in 2-3 s, 0.8 CPU
        start, end = (0.0, 2.0) if pid == 11 else (2.0, 3.0)
        return 0.8 * (min(max(moment, start), end) - start)

    for moment in boundaries.moments:
        trees = {pid: {(pid, 0): (0.0, spent(pid, moment))} for pid in (11, 22)}
        busy = spent(11, moment) + spent(22, moment) + 0.1 * moment  # 10% of a CPU: others
        boundaries.readings[moment] = (moment, trees, None, busy)
    cpu = boundaries.per_window()
    for index in (0, 1):  # v1's two rungs
        assert cpu[index].app_cpu_s == pytest.approx(0.4)
        assert cpu[index].other_arms_cpu_s == pytest.approx(0.0)
        assert cpu[index].foreign_cpu_s == pytest.approx(0.05)
    assert cpu[2].app_cpu_s == pytest.approx(0.4) and cpu[2].other_arms_cpu_s == 0.0
