"""`./test.sh versions`: the options, settings and entry point of the lab's v2 app across the
Pydantic 2 minors."""

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.lab.arms import (
    FASTAPI_LINES,
    FASTAPI_SERIES,
    LAB_V2_PYDANTIC,
    PYENV_PYTHONS,
    PYTHON_SERIES,
    VERSION_PORTS_FROM,
)
from loadtest.lab.errors import LabError
from loadtest.load.scenarios import READ_PER_PAGE, SCENARIO_NAMES
from loadtest.modes.options import (
    add_dataset_size,
    add_no_calibration,
    add_no_pin,
    add_results_dir,
    add_users,
    add_window,
    add_workers,
    choice_list,
    enough_for_an_interval,
    port_number,
    sample_count,
    seconds_between,
)
from loadtest.modes.versions.settings import (
    MINORS,
    QUICK,
    QUICK_FASTAPI,
    QUICK_MINORS,
    VersionsSettings,
    with_chains,
)

MAX_PORT = 65535
MAX_MODELS = 2000
SUMMARY = (
    "which Pydantic 2 to land on: the lab's v2 app on every minor from 2.7 to 2.14, each "
    "paired with the one before and with v1 (~13 min; --quick ~5 min)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = VersionsSettings()
    parser.description = (
        "Measure the lab's v2 app (app_v2's code, unchanged) on each Pydantic 2 minor, from "
        f"{min(MINORS, key=_minor_key)} to {max(MINORS, key=_minor_key)} (the latest patch of "
        "each when the list was made: commons/arms.py), with Pydantic 1 (v1) as the baseline. "
        "Each minor runs in paired windows with the minor before it and with v1, so "
        "every step's cost is a measured ratio; READ, READ synthetic and WRITE, app CPU per "
        "request, idle memory and start-up, and those of a generated app of 500 models. Each "
        "minor's environment is app_v2's with Pydantic and pydantic-core moved, built by uv "
        "under .tools/environments/ the first time (a second or two each from uv's cache) and "
        "reused. About 13 minutes with the defaults, 5 with --quick, 6 with --fastapi or "
        "--python. Results go to results/<UTC timestamp>-versions/ "
        "(docs/versions.md)."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a first look in about 5 minutes: Pydantic {', '.join(QUICK_MINORS)}, and FastAPI "
        f"from app_v2's 0.125 straight to v2-latest's ({QUICK.pairs} pairs, "
        f"{QUICK.startup_samples} start-ups per arm)",
    )
    parser.add_argument(
        "--minors",
        type=minor_list,
        help=f"the minors to walk, oldest first, of {','.join(MINORS)} (default all; --quick "
        f"{','.join(QUICK_MINORS)}); each step pairs a minor with the one before it here",
    )
    lines = ", ".join(fastapi for fastapi, _ in FASTAPI_LINES)
    parser.add_argument(
        "--fastapi",
        action="store_true",
        help=f"walk FastAPI's lines instead, on Pydantic {LAB_V2_PYDANTIC}: app_v2's 0.125 (the "
        "last with "
        f"Pydantic 1), {lines} and v2-latest's, Starlette moving with them (with --minors: "
        "both series)",
    )
    parser.add_argument(
        "--python",
        action="store_true",
        help=f"walk Python instead: v1 and v2 (Pydantic 1.10 and {LAB_V2_PYDANTIC}, their locked "
        f"packages) on pyenv's plain builds of {', '.join(PYENV_PYTHONS)}, each v2 over the v1 "
        "on its own Python, never beside Debian's optimised 3.11 (with --minors or --fastapi: "
        "their series too)",
    )
    parser.add_argument(
        "--pairs",
        type=enough_for_an_interval("pairs"),
        help=f"rounds of one window per arm, per scenario and step (default {defaults.pairs}, "
        f"--quick {QUICK.pairs}; at least {MIN_PAIRS_FOR_CI}, the fewest with a 95%% "
        "interval)",
    )
    parser.add_argument(
        "--warmup",
        type=seconds_between(1, 3600),
        help=f"discarded warm-up seconds per arm before each scenario, 1-3600 (default "
        f"{defaults.warmup_s:g})",
    )
    parser.add_argument(
        "--startup-samples",
        type=sample_count,
        help="fresh starts per minor (and v1) timed to the first /health, 0 to skip (default "
        f"{defaults.startup_samples}, --quick {QUICK.startup_samples})",
    )
    parser.add_argument(
        "--generated-models",
        type=model_count,
        help="the size of the generated app (scale's service shape) whose fresh starts and idle "
        f"memory are timed on every arm, {MAX_MODELS} at most, 0 to leave it out (default "
        f"{defaults.generated_models}; {defaults.generated_rounds} rounds of fresh starts, "
        f"--quick {QUICK.generated_rounds})",
        metavar="N",
    )
    parser.add_argument(
        "--scenarios",
        type=choice_list(SCENARIO_NAMES),
        default=defaults.scenarios,
        help=f"scenarios to measure in every step, of {','.join(SCENARIO_NAMES)} (default "
        f"{','.join(defaults.scenarios)}, as the benchmark's)",
    )
    add_dataset_size(parser, READ_PER_PAGE, defaults.dataset_size)
    add_users(parser, defaults.users)
    add_window(parser, defaults)
    add_workers(parser)
    add_no_pin(parser, "the apps and the load generator (and PostgreSQL) to separate CPUs")
    add_no_calibration(parser)
    parser.add_argument(
        "--ports-from",
        type=port_number,
        help="serve the run's arms on consecutive ports from PORT, v1 first (default: each "
        f"arm's own, v1 {defaults.ports['v1']}, the minors from {VERSION_PORTS_FROM})",
        metavar="PORT",
    )
    add_results_dir(parser)


def _minor_key(minor: str) -> tuple[int, ...]:
    return tuple(int(part) for part in minor.split("."))


def model_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = -1
    if not 0 <= count <= MAX_MODELS:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of models, 0 to {MAX_MODELS}")
    return count


def minor_list(text: str) -> tuple[str, ...]:
    """Two minors or more of MINORS, each once, oldest first."""
    minors = choice_list(tuple(MINORS))(text)  # each once
    if len(minors) < 2:
        raise argparse.ArgumentTypeError(f"{text!r}: a step needs two minors at least")
    return tuple(sorted(minors, key=_minor_key))


def settings_from(arguments: argparse.Namespace) -> VersionsSettings:
    settings = QUICK if arguments.quick else VersionsSettings()
    minors = arguments.minors or (QUICK_MINORS if arguments.quick else tuple(MINORS))
    chains = []
    if arguments.minors or not (arguments.fastapi or arguments.python):
        chains.append(tuple(MINORS[minor] for minor in minors))
    if arguments.fastapi:
        chains.append(FASTAPI_SERIES)
    elif arguments.quick and not arguments.python:
        chains.append(QUICK_FASTAPI)
    if arguments.python:
        chains.append(PYTHON_SERIES)
    settings = with_chains(settings, *chains)
    if arguments.ports_from is not None:
        last = arguments.ports_from + len(settings.apps) - 1
        if last > MAX_PORT:
            raise LabError(
                f"--ports-from {arguments.ports_from}: {len(settings.apps)} arms need ports up "
                f"to {last}, past {MAX_PORT}"
            )
        ports = {arm: arguments.ports_from + index for index, arm in enumerate(settings.apps)}
        settings = replace(settings, ports=ports)
    explicit: dict[str, Any] = {
        "pairs": arguments.pairs,
        "warmup_s": arguments.warmup,
        "startup_samples": arguments.startup_samples,
        "generated_models": arguments.generated_models,
        "users": arguments.users,
        "window_s": arguments.window,
    }
    return replace(
        settings,
        set_by_hand=tuple(
            name
            for name, given in (("users", arguments.users), ("window_s", arguments.window))
            if given is not None
        ),
        **{key: value for key, value in explicit.items() if value is not None},
        scenarios=arguments.scenarios,
        dataset_size=arguments.dataset_size,
        workers=arguments.workers,
        pin=not arguments.no_pin,
        calibrate=not arguments.no_calibration,
        results_dir=arguments.results_dir.resolve(),
    )


def run(settings: VersionsSettings, console: Console) -> Path:
    from loadtest.modes.versions.runner import run_versions

    return run_versions(settings, console)
