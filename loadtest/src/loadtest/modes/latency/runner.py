"""`./test.sh latency`: latency at steady, open-loop rates, every arm offered the same requests
at the same due times. In order: the load generator's own limit on a near-free endpoint; the
arms (each inside the collection probe), verified; per scenario, each arm's capacity (closed
loop, paired rounds), then the paired rates from low to high (rounds of one window per arm,
alternating which goes first, the same seeded arrivals for every arm of a round), then the
overload rates, whose queues are drained before the next window starts."""

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from statistics import median
from typing import Any

from rich.console import Console

from loadtest.lab.apps import RunningApp
from loadtest.lab.arms import baseline_of, rotations
from loadtest.lab.dataset import load_dataset, needs_related_rows
from loadtest.lab.errors import LabError
from loadtest.lab.packages import ensure_package
from loadtest.lab.progress import ProgressDisplay
from loadtest.load.calibration import trivial_server
from loadtest.load.open_loop.client import DRAIN_S, ClosedWindow, OpenLoopGenerator, OpenWindow
from loadtest.load.plan import Request
from loadtest.load.verify import verify_scenario
from loadtest.modes.latency.arms import ArmReader, collections_between, start_probed_arm
from loadtest.modes.latency.httperf import HTTPERF_ELSEWHERE, HTTPERF_SCENARIO, run_httperf
from loadtest.modes.latency.mixed import BESIDE, LATENCY_SCENARIOS, beside_for
from loadtest.modes.latency.rates import (
    PlannedRate,
    ceiling_seconds,
    measure_generator,
    plan_rates,
    refusal,
    refuse_asked_rates,
)
from loadtest.modes.latency.results import build_latency_results, commonest
from loadtest.modes.latency.settings import LatencySettings
from loadtest.modes.session import check_local_arms, open_session

KIND = "latency"
LOAD_SIDE = ("the open-loop generator", "PostgreSQL", "the runner")
# Seconds a run spends that are not windows: starting the database and the arms, verifying.
START_S = 15.0
HTTPERF_S = 20.0  # per arm and tool: enough requests for a p99 (2,000 at 100 r/s)
# Turns of HTTPERF_S / HTTPERF_ROUNDS each: enough to resample for each tool's interval.
HTTPERF_ROUNDS = 8


def planned_seconds(settings: LatencySettings) -> float:
    """A rough duration, for the progress line and --help (overload windows drain, so they
    count double)."""
    arms = len(settings.apps)
    rates = len(settings.rates or settings.fractions)
    per_scenario = arms * (
        settings.warmup_s
        + settings.capacity_rounds * settings.capacity_window_s
        + settings.pairs * rates * settings.window_s
        + (2 * settings.overload_rounds * 2 * settings.window_s if settings.overload else 0)
    )
    return START_S + ceiling_seconds() + len(settings.scenarios) * per_scenario


def baseline_arm(settings: LatencySettings) -> str:
    return baseline_of(settings.apps) or settings.apps[0]


def run_latency(settings: LatencySettings, console: Console) -> Path:
    check_local_arms(settings)
    if settings.httperf:
        ensure_package("httperf", "httperf", "--httperf")
    with open_session(KIND, settings.results_dir, console) as session:
        pinning = session.pin(settings.pin, load_side=LOAD_SIDE)
        progress = session.show_progress(planned_seconds(settings))
        generator = session.stack.enter_context(
            OpenLoopGenerator(
                session.run_dir / "generator.log",
                cpus=pinning.load_cpus if pinning.enabled else None,
            )
        )
        progress.begin("the load generator's limit (near-free endpoint)", ceiling_seconds())
        with trivial_server(pinning, session.run_dir, session.environment) as url:
            limits = measure_generator(generator, url, settings)
        limits["priority"] = generator.priority
        refuse_asked_rates(settings.rates, limits)
        progress.note(generator_line(limits))
        database = session.start_database()
        paths = (LATENCY_SCENARIOS[name].path for name in settings.scenarios)
        load_dataset(database.url, settings.dataset_size, related_rows=needs_related_rows(paths))
        pinning = session.pinning  # as the database left it
        apps = {
            arm: start_probed_arm(
                settings, arm, database, pinning, session.run_dir, session.environment
            )
            for arm in settings.apps
        }
        for app in apps.values():
            session.stack.callback(app.stop)
        session.begin_measuring()
        readers = {arm: ArmReader(app) for arm, app in apps.items()}
        for reader in readers.values():
            session.stack.callback(reader.close)
        # Every scenario first: one that fails is refused before any other was measured.
        for name in settings.scenarios:
            verify(apps, name, database.url)
        scenarios = {}
        for name in settings.scenarios:
            scenarios[name] = measure_scenario(
                settings,
                name,
                generator,
                apps,
                readers,
                limits,
                progress,
                pinning.load_cpus if pinning.enabled else None,
            )
        versions = {arm: app.versions for arm, app in apps.items()}
    session.finish(build_latency_results(settings, pinning, versions, limits, scenarios))
    return session.run_dir


def generator_line(limits: dict[str, Any]) -> str:
    first = limits["steps"][0]
    ceiling = limits["ceiling_rps"]
    held = (
        "no rate"
        if ceiling is None
        else f"{'at least ' if limits['ceiling_is_a_floor'] else ''}{ceiling} r/s"
    )
    return (
        f"Load generator: holds {held} on a near-free endpoint; at {first['rate']} r/s its "
        f"requests started {first['lateness_ms']['p50']:.3f} ms late at the median, "
        f"{first['lateness_ms']['p99']:.3f} ms at p99"
    )


def verify(apps: dict[str, RunningApp], name: str, database_url: str) -> None:
    """Every arm answers the scenario, and what its windows ask beside it, right and in full."""
    scenario = LATENCY_SCENARIOS[name]
    beside = BESIDE.get(name)
    checked = [(scenario, scenario.label)]
    if beside is not None:
        checked.append((beside.scenario, f"{beside.scenario.label}, asked beside {scenario.label}"))
    for arm, app in apps.items():
        for asked, label in checked:
            problems = verify_scenario(app.base_url, asked, database_url, arm)
            if problems:
                raise LabError(f"{arm}: {label} failed verification: {problems[0]}")


def request_of(name: str, arm: str) -> Request:
    return LATENCY_SCENARIOS[name].request_for(arm)


def measure_scenario(
    settings: LatencySettings,
    name: str,
    generator: OpenLoopGenerator,
    apps: dict[str, RunningApp],
    readers: dict[str, ArmReader],
    limits: dict[str, Any],
    progress: ProgressDisplay,
    load_cpus: tuple[int, ...] | None,
) -> dict[str, Any]:
    """One scenario: each arm's capacity (closed loop), the rates planned from it (those the
    generator cannot hold refused), then every rate's windows in rotating rounds, with
    httperf's check where asked."""
    label = LATENCY_SCENARIOS[name].label
    capacity_windows, capacities = measure_capacities(settings, name, generator, apps, progress)
    planned = plan_rates(settings, capacities, baseline_arm(settings))
    rates, refused = [], []
    for rate in planned:
        reason = refusal(rate.rps, limits)
        if reason is None:
            rates.append(rate)
        else:
            refused.append({**rate.as_dict(), "reason": reason})
            progress.note(f"{label}: refused {rate.label} ({rate.rps:,.0f} r/s): {reason}")
    windows: list[dict[str, Any]] = []
    if rates:
        warm_up(settings, name, generator, apps, rates[0], progress)
    httperf = None
    for index, rate in enumerate(rates):
        if rate.stage == "overload" and settings.httperf and httperf is None:
            httperf = httperf_check(
                settings, name, apps, rates, capacities, progress, load_cpus, generator
            )
        windows += rate_windows(settings, name, index, rate, generator, apps, readers, progress)
    if settings.httperf and httperf is None:
        httperf = httperf_check(
            settings, name, apps, rates, capacities, progress, load_cpus, generator
        )
    beside = BESIDE.get(name)
    return {
        "label": label,
        **({"beside": beside.as_dict()} if beside else {}),
        "httperf": httperf,
        "capacity_windows": capacity_windows,
        "capacities": {arm: round(rps, 1) for arm, rps in capacities.items()},
        "rates": [rate.as_dict() for rate in rates],
        "refused": refused,
        "windows": windows,
    }


def measure_capacities(
    settings: LatencySettings,
    name: str,
    generator: OpenLoopGenerator,
    apps: dict[str, RunningApp],
    progress: ProgressDisplay,
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Each arm's capacity: closed-loop windows in rotating rounds, the median of its served
    r/s; a failed request or an arm that answered nothing stops the run in one line."""
    label = LATENCY_SCENARIOS[name].label
    arms = tuple(apps)
    capacity_windows = []
    progress.begin(
        f"{label}: capacity (closed loop, {settings.users} in flight)",
        len(arms) * settings.capacity_rounds * settings.capacity_window_s,
    )
    for round_, order in enumerate(rotations(arms, settings.capacity_rounds)):
        for arm in order:
            answer = generator.run(
                ClosedWindow(
                    apps[arm].base_url + request_of(name, arm).path,
                    request_of(name, arm),
                    settings.capacity_window_s,
                    settings.users,
                    settings.settle_s,
                    beside=beside_for(name, apps[arm].base_url, settings.seed + round_),
                )
            )
            progress.tick()
            answer.pop("latency_us")
            if "beside" in answer:
                answer["beside"].pop("latency_us")
            capacity_windows.append({"arm": arm, "round": round_, **answer})
    for measured in capacity_windows:
        refuse_failed_beside(label, measured)
        if measured["failures"]:
            raise LabError(
                f"{label}: {sum(measured['failures'].values())} requests to {measured['arm']} "
                f"failed while its capacity was measured ({commonest(measured['failures'])}); "
                "see its log in the run folder"
            )
    capacities = {
        arm: median(
            window["served_rps"] or 0 for window in capacity_windows if window["arm"] == arm
        )
        for arm in arms
    }
    if not all(capacities.values()):
        raise LabError(f"{label}: an arm answered nothing while its capacity was measured")
    progress.note(
        f"{label}: capacity "
        + ", ".join(f"{arm} {rps:,.0f} r/s" for arm, rps in capacities.items())
    )
    return capacity_windows, capacities


def rate_windows(
    settings: LatencySettings,
    name: str,
    index: int,
    rate: PlannedRate,
    generator: OpenLoopGenerator,
    apps: dict[str, RunningApp],
    readers: dict[str, ArmReader],
    progress: ProgressDisplay,
) -> list[dict[str, Any]]:
    """One rate's open-loop windows, every arm in rotating rounds, each round on its own seed,
    each arm read around its window."""
    label = LATENCY_SCENARIOS[name].label
    arms = tuple(apps)
    rounds = settings.pairs if rate.stage == "paired" else settings.overload_rounds
    progress.begin(
        f"{label}: {rate.label} ({rate.rps:,.0f} r/s, {rate.stage}), {rounds} rounds",
        rounds * len(arms) * settings.window_s,
    )
    windows = []
    for round_, order in enumerate(rotations(arms, rounds)):
        seed = settings.seed + 1000 * index + round_
        for position, arm in enumerate(order):
            window = OpenWindow(
                apps[arm].base_url + request_of(name, arm).path,
                request_of(name, arm),
                rate.rps,
                settings.window_s,
                seed=seed,
                process=settings.process,
                settle_s=settings.settle_s,
                connections=settings.connections,
                beside=beside_for(name, apps[arm].base_url, seed),
            )
            with read_around(readers[arm]) as readings:
                answer = generator.run(window)
            progress.tick()
            windows.append(
                {
                    "rate": rate.label,
                    "stage": rate.stage,
                    "offered_rps": rate.rps,
                    "round": round_,
                    "position": position,
                    "arm": arm,
                    "seed": seed,
                    **answer,
                    **readings,
                }
            )
    return windows


def refuse_failed_beside(label: str, window: dict[str, Any]) -> None:
    """A large answer asked beside the capacity windows that failed stops the run in one line:
    the small requests' figures would not say what ran beside them."""
    failures = window.get("beside", {}).get("failures")
    if failures:
        raise LabError(
            f"{label}: {sum(failures.values())} large answers asked of {window['arm']} beside "
            f"its capacity windows failed ({commonest(failures)}); see its log in the run folder"
        )


def httperf_check(
    settings: LatencySettings,
    name: str,
    apps: dict[str, RunningApp],
    rates: list[PlannedRate],
    capacities: dict[str, float],
    progress: ProgressDisplay,
    load_cpus: tuple[int, ...] | None,
    generator: OpenLoopGenerator,
) -> dict[str, Any]:
    """At the paired rate nearest half the baseline's capacity, after the paired rates (before
    the overload rates, which leave queues behind), per arm: the lab's generator with a
    connection per request, then httperf (which opens one per request) for as long: the same
    load on the server from two tools that share no code."""
    request = LATENCY_SCENARIOS[name].request
    paired = [rate for rate in rates if rate.stage == "paired"]
    skipped = httperf_skipped(name, paired)
    if skipped is not None:
        return {"skipped": skipped}
    half = capacities[baseline_arm(settings)] / 2
    rate = min(paired, key=lambda rate: abs(rate.rps - half))
    progress.begin(
        f"{LATENCY_SCENARIOS[name].label}: httperf at {rate.label} ({rate.rps:,.0f} r/s)",
        2 * len(apps) * HTTPERF_S,
    )
    window_s = HTTPERF_S / HTTPERF_ROUNDS
    figures: dict[str, list[dict[str, Any]]] = {arm: [] for arm in apps}
    lab: dict[str, list[dict[str, Any]]] = {arm: [] for arm in apps}
    # Short turns, alternating which tool goes first: the arm's full collections (a few in 20 s,
    # each setting a p99) fall on both tools alike, as they would not on 20 s each.
    for round_ in range(HTTPERF_ROUNDS):
        for index, (arm, app) in enumerate(apps.items()):
            for tool in ("lab", "httperf") if round_ % 2 == 0 else ("httperf", "lab"):
                if tool == "lab":
                    seed = settings.seed + 999_000 + 10 * round_ + index
                    lab[arm].append(
                        generator.run(
                            a_connection_per_request(settings, app, name, rate, window_s, seed)
                        )
                    )
                else:
                    figures[arm].append(
                        run_httperf(
                            app.base_url,
                            request.path,
                            rate.rps,
                            window_s,
                            cpus=load_cpus,
                            poisson=settings.process == "poisson",
                        ).as_dict()
                    )
                progress.tick()
    return {
        "rate": rate.label,
        "rps": rate.rps,
        "duration_s": HTTPERF_S,
        "rounds": HTTPERF_ROUNDS,
        "arms": figures,
        "lab_windows": lab,
    }


def httperf_skipped(name: str, paired: list[PlannedRate]) -> str | None:
    """Why the httperf check does not run for this scenario, or None."""
    request = LATENCY_SCENARIOS[name].request
    if name != HTTPERF_SCENARIO:
        return HTTPERF_ELSEWHERE
    if not paired:
        return "no paired rate was measured"
    if request.method != "GET":
        return f"httperf sends GETs here; {LATENCY_SCENARIOS[name].label} is a {request.method}"
    return None


def a_connection_per_request(
    settings: LatencySettings,
    app: RunningApp,
    name: str,
    rate: PlannedRate,
    window_s: float,
    seed: int,
) -> OpenWindow:
    """The lab generator's window beside httperf's: a connection per request, as httperf."""
    request = LATENCY_SCENARIOS[name].request
    return OpenWindow(
        app.base_url + request.path,
        request,
        rate.rps,
        window_s,
        seed=seed,
        process=settings.process,
        settle_s=settings.settle_s,
        connections=settings.connections,
        close_each=True,
    )


@contextmanager
def read_around(reader: ArmReader) -> Iterator[dict[str, Any]]:
    """The arm's collections and CPU seconds over the block (a window), read just outside it."""
    readings: dict[str, Any] = {}
    collections, cpu_s, started = reader.collections(), reader.cpu_s(), time.monotonic()
    yield readings
    elapsed = time.monotonic() - started
    readings["gc"] = collections_between(collections, reader.collections())
    readings["app_cpu_s"] = round(reader.cpu_s() - cpu_s, 4)
    readings["elapsed_s"] = round(elapsed, 3)


def warm_up(
    settings: LatencySettings,
    name: str,
    generator: OpenLoopGenerator,
    apps: dict[str, RunningApp],
    rate: PlannedRate,
    progress: ProgressDisplay,
) -> None:
    """Each arm at the lowest rate for `warmup_s`, not counted: first requests, first
    connections."""
    progress.begin(f"{LATENCY_SCENARIOS[name].label}: warm-up", len(apps) * settings.warmup_s)
    for arm, app in apps.items():
        generator.run(
            OpenWindow(
                app.base_url + request_of(name, arm).path,
                request_of(name, arm),
                rate.rps,
                settings.warmup_s,
                seed=settings.seed - 1,
                process=settings.process,
                connections=settings.connections,
                drain_s=DRAIN_S,
                beside=beside_for(name, app.base_url, settings.seed - 1),
            )
        )
        progress.tick()
