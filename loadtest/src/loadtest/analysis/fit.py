"""A paired run's timetable, fitted to the service (docs/compare.md): compare's default, the
benchmark's with --fit. Before the first repeat's timing, per scenario, one short locust run
loads every arm at 1, 2, 4 ... 32 users in turn
(each level a slot of its own, its other users idle), reading the arm's CPU, throughput and
latency at each level. From that probe:

- users: the fewest at which every arm kept at least 90% of its CPUs busy (an arm reached by
  URL, whose CPU is not read: the fewest whose throughput came within 5% of its best);
- settle: at least the p99 latency, so the previous arm's requests are done when a window
  starts counting;
- window: the settle plus time for about 100 requests of the slowest arm, and at least ten
  times the p99 (and at least the benchmark's 0.6 s).

Values the file or the command line set are kept, and a line says where one is too small for
what the probe measured. `choose` is the rule on a probe's figures (tested on fixed answers);
`probe` runs the locust run; `fit_scenario` does both and says the choice."""

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from loadtest.analysis.limits import SATURATION_LIMIT
from loadtest.lab.apps import RunningApp
from loadtest.lab.pinning import PinningPlan
from loadtest.lab.progress import ProgressDisplay
from loadtest.load.histograms import merge_histograms, percentile_ms
from loadtest.load.paired import locust_start_s, locust_tail_s, run_schedule
from loadtest.load.plan import PairedPlan, SlotLoad
from loadtest.load.schedule import build_schedule
from loadtest.load.settings import PairedLoadSettings
from loadtest.load.slots import Slot
from loadtest.load.windows import WindowRecord

Settings = TypeVar("Settings", bound=PairedLoadSettings)

USER_LEVELS = (1, 2, 4, 8, 16, 32)
PROBE_WINDOW_S = 1.5
PROBE_SETTLE_S = 0.5
PROBE_WARMUP_S = 0.5
REQUESTS_PER_WINDOW = 100
P99_MULTIPLE = 10
MIN_WINDOW_S = 0.6
MIN_SETTLE_S = 0.2
MAX_WINDOW_S = 30.0
BEST_THROUGHPUT_SHARE = 0.95  # an arm whose CPU is not read: users where r/s levels off
STEP_S = 0.1


@dataclass(frozen=True)
class Level:
    """One arm at one number of users, in the probe."""

    users: int
    rps: float
    busy: float | None  # share of its CPUs (None: not read)
    p99_ms: float | None


@dataclass(frozen=True)
class Timetable:
    users: int
    window_s: float
    settle_s: float
    why: tuple[str, ...]  # how each value was chosen, in words
    notes: tuple[str, ...] = ()  # a value kept as set, but too small for what was measured
    levels: dict[str, list[Level]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "users": self.users,
            "window_s": self.window_s,
            "settle_s": self.settle_s,
            "why": list(self.why),
            "notes": list(self.notes),
            "probe": {
                arm: [
                    {
                        "users": level.users,
                        "rps": round(level.rps, 2),
                        "busy": None if level.busy is None else round(level.busy, 3),
                        "p99_ms": level.p99_ms,
                    }
                    for level in levels
                ]
                for arm, levels in self.levels.items()
            },
        }


def up(value: float, step: float = STEP_S) -> float:
    """`value` rounded up to a multiple of `step` (0.1 s)."""
    return round(math.ceil(value / step - 1e-9) * step, 3)


def fewest_users(levels: list[Level]) -> tuple[int, str]:
    """The fewest users at which the arm kept 90% of its CPUs busy, and why in words."""
    read = [level for level in levels if level.busy is not None]
    if read:
        for level in read:
            if level.busy is not None and level.busy >= SATURATION_LIMIT:
                return level.users, f"{level.busy:.0%} busy at {level.users}"
        busiest = max(read, key=lambda level: level.busy or 0.0)
        return busiest.users, (
            f"never 90% busy (at most {busiest.busy:.0%}, at {busiest.users}): something "
            "else limits it"
        )
    best = max(level.rps for level in levels)
    for level in levels:
        if level.rps >= BEST_THROUGHPUT_SHARE * best:
            return level.users, (
                f"its CPU is not read; {level.rps:.0f} r/s at {level.users}, within 5% of its "
                f"best {best:.0f}"
            )
    return levels[-1].users, "its CPU is not read"  # pragma: no cover: the best is one


def choose(
    levels: Mapping[str, list[Level]], explicit: Mapping[str, float], label: str
) -> Timetable:
    """The timetable for one scenario from its probe (`levels`: per arm, by users ascending);
    `explicit`: users, window_s and settle_s where the file or the command line set them."""
    why: list[str] = []
    notes: list[str] = []
    users = choose_users(levels, explicit, label, why, notes)
    at_users = {arm: at(found, users) for arm, found in levels.items()}
    slowest = min(at_users, key=lambda arm: at_users[arm].rps)
    slowest_rps = max(at_users[slowest].rps, 1e-3)
    p99_s = max((level.p99_ms or 0.0) for level in at_users.values()) / 1000
    settle = choose_settle(p99_s, explicit, label, why, notes)
    window = choose_window(slowest, slowest_rps, p99_s, settle, explicit, label, why, notes)
    return Timetable(users, window, settle, tuple(why), tuple(notes), dict(levels))


def choose_users(
    levels: Mapping[str, list[Level]],
    explicit: Mapping[str, float],
    label: str,
    why: list[str],
    notes: list[str],
) -> int:
    """The fewest users keeping every arm busy, or the number set (noted if fewer)."""
    per_arm = {arm: fewest_users(found) for arm, found in levels.items()}
    fitted_users = max(users for users, _ in per_arm.values())
    if "users" in explicit:
        users = int(explicit["users"])
        why.append(f"users {users}: as set")
        if users < fitted_users:
            notes.append(
                f"{label}: {users} users kept as set, but the probe kept every arm's CPUs "
                f"90% busy only from {fitted_users} ("
                + "; ".join(f"{arm}: {text}" for arm, (_, text) in per_arm.items())
                + "): fewer users measure the round trip, not the service"
            )
    else:
        users = fitted_users
        why.append(
            f"users {users}: the fewest keeping every arm busy ("
            + "; ".join(f"{arm}: {text}" for arm, (_, text) in per_arm.items())
            + ")"
        )
    return users


def choose_settle(
    p99_s: float, explicit: Mapping[str, float], label: str, why: list[str], notes: list[str]
) -> float:
    """The settle: at least the p99 latency, at most half a window set by
    hand, or the settle set."""
    fitted_settle = up(max(MIN_SETTLE_S, p99_s), 0.05)
    settle = float(explicit.get("settle_s", fitted_settle))
    if "window_s" in explicit and "settle_s" not in explicit and settle > explicit["window_s"] / 2:
        # A window set by hand bounds the settle: at least half of it must be counted.
        settle = float(explicit["window_s"]) / 2
        notes.append(
            f"{label}: the p99 latency ({p99_s * 1000:.0f} ms) asks for a settle of "
            f"{fitted_settle:g} s, more than half the window set by hand "
            f"({explicit['window_s']:g} s): settling {settle:g} s, so the previous arm's "
            "requests may still run into the counted time; give a longer window"
        )
    if "settle_s" in explicit:
        why.append(f"settle {settle:g} s: as set")
        if settle < p99_s:
            notes.append(
                f"{label}: settle_s {settle:g} kept as set, under the p99 latency "
                f"({p99_s * 1000:.0f} ms): the previous arm's requests still run into the next "
                "window's counted time"
            )
    elif settle < fitted_settle:
        why.append(
            f"settle {settle:g} s: half the window set by hand (the p99 latency, "
            f"{p99_s * 1000:.0f} ms, asked for {fitted_settle:g} s)"
        )
    else:
        why.append(f"settle {settle:g} s: at least the p99 latency ({p99_s * 1000:.0f} ms)")
    return settle


def choose_window(
    slowest_arm: str,
    slowest_rps: float,
    p99_s: float,
    settle: float,
    explicit: Mapping[str, float],
    label: str,
    why: list[str],
    notes: list[str],
) -> float:
    """Enough time for REQUESTS_PER_WINDOW of the slowest arm after the settle, or the window
    set (noted if it holds fewer)."""
    needed = settle + REQUESTS_PER_WINDOW / slowest_rps
    fitted_window = up(
        min(MAX_WINDOW_S, max(MIN_WINDOW_S, needed, P99_MULTIPLE * p99_s, 2 * settle))
    )
    if "window_s" in explicit:
        window = float(explicit["window_s"])
        why.append(f"window {window:g} s: as set")
        held = (window - settle) * slowest_rps
        if held < REQUESTS_PER_WINDOW:
            notes.append(
                f"{label}: window {window:g} s kept as set; it holds about {held:.0f} requests "
                f"of {slowest_arm} (fewer than {REQUESTS_PER_WINDOW}), so one request more or less "
                f"moves a window's r/s by {1 / max(held, 1):.0%}"
            )
    else:
        window = fitted_window
        why.append(
            f"window {window:g} s: {REQUESTS_PER_WINDOW} requests of the slowest arm, "
            f"{slowest_arm} ({slowest_rps:.1f} r/s), after the settle, and at least "
            f"{P99_MULTIPLE} times the p99"
            + (f" (capped at {MAX_WINDOW_S:g} s)" if needed > MAX_WINDOW_S else "")
        )
    return window


def at(levels: list[Level], users: int) -> Level:
    """The probe's figures at `users`, or at the nearest level below (a number set by hand)."""
    below = [level for level in levels if level.users <= users]
    return below[-1] if below else levels[0]


def level_slot(arm: str, users: int) -> str:
    return Slot(arm, f"{users}users").name


def probe_seconds(arms: int) -> float:
    """One scenario's probe, planned (the progress display's estimate): locust's start, then
    a warm-up and a window for every level's slot, in one locust process (`probe`)."""
    one_process = PairedLoadSettings(load_processes=1)
    slots = arms * len(USER_LEVELS)
    return (
        locust_start_s(one_process)
        + slots * (PROBE_WARMUP_S + PROBE_WINDOW_S)
        + locust_tail_s(one_process)
    )


def fit_scenario(
    settings: PairedLoadSettings,
    plan: PairedPlan,
    name: str,
    apps: dict[str, RunningApp],
    pinning: PinningPlan,
    folder: Path,
    progress: ProgressDisplay,
    database_pid: int | None,
    set_by_hand: tuple[str, ...],
) -> Timetable:
    """The scenario's probe, its timetable chosen and said in a line or two (`set_by_hand`: of
    users, window_s and settle_s, those kept as the settings hold them)."""
    levels = probe(settings, plan, name, apps, pinning, folder, progress, database_pid)
    explicit = {key: float(getattr(settings, key)) for key in set_by_hand}
    label = plan.scenario(name).label
    if not levels:  # the probe's windows held nothing: time with the values as they are
        note = (
            f"{label}: the probe measured nothing; timed with {settings.users} users and "
            f"{settings.window_s:g} s windows, not fitted"
        )
        progress.note(f"⚠ {note}")
        return Timetable(
            settings.users,
            settings.window_s,
            settings.settle_s,
            ("the probe measured nothing",),
            (note,),
        )
    timetable = choose(levels, explicit, label)
    progress.note(f"{label} timetable: " + "; ".join(timetable.why))
    for note in timetable.notes:
        progress.note(f"⚠ {note}")
    return timetable


def probe(
    settings: PairedLoadSettings,
    plan: PairedPlan,
    scenario: str,
    apps: dict[str, RunningApp],
    pinning: PinningPlan,
    folder: Path,
    progress: ProgressDisplay,
    database_pid: int | None,
) -> dict[str, list[Level]]:
    """One locust run: every arm at every level of users, the levels rising, the arms
    alternating within a level; the figures of each slot's one counted window. It runs in one
    locust process whatever the run's --load-processes: a slot's users are counted per
    process, so N processes would run N times each level (the timed windows then split the
    fitted users among the processes as usual)."""
    request = plan.scenario(scenario).request_for
    slots = {level_slot(arm, users): (arm, users) for users in USER_LEVELS for arm in apps}
    loads = {slot: SlotLoad(request(arm), users) for slot, (arm, users) in slots.items()}
    _, records, _ = run_schedule(
        replace(settings, users=max(USER_LEVELS), load_processes=1),
        lambda start: build_schedule(
            scenario=scenario,
            hosts={slot: apps[arm].base_url for slot, (arm, _) in slots.items()},
            start=start,
            rounds=1,
            window_s=PROBE_WINDOW_S,
            settle_s=PROBE_SETTLE_S,
            warmup_s=PROBE_WARMUP_S,
        ),
        loads,
        apps,
        pinning,
        folder / f"{scenario}-fit",
        progress,
        title=f"fitting the timetable · {scenario} · {' / '.join(apps)} at "
        f"{', '.join(map(str, USER_LEVELS))} users",
        database_pid=database_pid,
        during=f"the {scenario} scenario's probe",
    )
    return levels_from(records, slots)


def levels_from(
    records: list[WindowRecord], slots: Mapping[str, tuple[str, int]]
) -> dict[str, list[Level]]:
    found: dict[str, list[Level]] = {}
    for slot, (arm, users) in slots.items():
        own = [record for record in records if record.slot == slot]
        if not own:
            continue
        busy = [record.app_cpu_busy for record in own if record.app_cpu_busy is not None]
        found.setdefault(arm, []).append(
            Level(
                users,
                statistics.median(record.rps for record in own),
                statistics.median(busy) if busy else None,
                percentile_ms(merge_histograms(record.histogram for record in own), 0.99),
            )
        )
    return {arm: sorted(levels, key=lambda level: level.users) for arm, levels in found.items()}


def timed(settings: Settings, timetable: Timetable | None) -> Settings:
    """The settings a scenario is timed with: its fitted timetable's, where it has one."""
    if timetable is None:
        return settings
    return replace(
        settings,
        users=timetable.users,
        window_s=timetable.window_s,
        settle_s=timetable.settle_s,
    )


def declared_timetables(
    settings: PairedLoadSettings, plan: PairedPlan, set_by_hand: tuple[str, ...]
) -> dict[str, Timetable]:
    """Without --fit, each scenario's timetable where one of them declares its own (load/
    scenarios.py: the related rows' slow pages), the run's for the others; empty where none
    does. Values set on the command line are kept, and a window set by hand bounds the settle
    to half of it, as the fit keeps and bounds them (with a note where it had to)."""
    if not any(scenario.timetable for scenario in plan.scenarios):
        return {}
    timetables = {}
    for scenario in plan.scenarios:
        declared = scenario.timetable
        if declared is None:
            why = f"the run's: {settings.users} users, {settings.window_s:g} s windows"
            timetables[scenario.name] = Timetable(
                settings.users, settings.window_s, settings.settle_s, why=(why,)
            )
            continue
        kept = {name: getattr(settings, name) for name in set_by_hand}
        chosen = replace(declared, **kept)
        notes: tuple[str, ...] = ()
        if "window_s" in kept and chosen.settle_s > chosen.window_s / 2:
            # As the fit does: a window set by hand bounds the settle, half of it is counted.
            chosen = replace(chosen, settle_s=chosen.window_s / 2)
            notes = (
                f"{scenario.label}: its own settle of {declared.settle_s:g} s is more than half "
                f"the window set by hand ({chosen.window_s:g} s): settling {chosen.settle_s:g} "
                "s, so the previous arm's requests may still run into the counted time; give "
                "a longer window",
            )
        timetables[scenario.name] = Timetable(
            chosen.users, chosen.window_s, chosen.settle_s, why=(declared.why,), notes=notes
        )
    return timetables
