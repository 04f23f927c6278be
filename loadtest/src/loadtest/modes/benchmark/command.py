"""`./test.sh [run]`: the benchmark's options, settings and entry point."""

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console

from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.lab.arms import BASELINE
from loadtest.lab.errors import LabError
from loadtest.load.scenarios import READ_PER_PAGE, SCENARIO_NAMES
from loadtest.modes.options import (
    add_apps,
    add_dataset_size,
    add_paired_load,
    choice_list,
    enough_for_an_interval,
    paired_load_values,
    positive_int,
    sample_count,
    seconds_between,
)
from loadtest.pipeline.settings import QUICK, BenchmarkSettings

SUMMARY = (
    "the benchmark (the default mode): every arm in paired, alternating windows, READ, READ "
    "synthetic and WRITE, ratios with 95% CIs, start-up and memory (~7.5 min; --quick ~2 min)"
)


class RemovedOption(argparse.Action):
    """An option that no longer exists: say what replaced it, instead of argparse's guess."""

    def __init__(self, *args: object, replacement: str, **kwargs: object) -> None:
        self.replacement = replacement
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> NoReturn:
        parser.error(f"{option_string} was replaced by {self.replacement}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults, quick = BenchmarkSettings(), QUICK
    parser.description = (
        "Benchmark the arms with locust in paired, alternating windows and print their ratios "
        "with 95% confidence intervals, start-up and memory; results go to "
        "results/<UTC timestamp>/ (results/latest is the newest run of every default arm and "
        "scenario). About 7.5 minutes with the defaults, 2 with --quick."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a first look in about 2 minutes: {quick.pairs} pairs, {quick.repeats} repeat, "
        f"{quick.warmup_s:g}s warm-up, {quick.startup_samples} start-ups per arm",
    )
    parser.add_argument(
        "--pairs",
        type=enough_for_an_interval("pairs"),
        help=f"rounds of one window per arm, per scenario and repeat: the ratios' pairs "
        f"(default {defaults.pairs}, --quick {quick.pairs}; at least {MIN_PAIRS_FOR_CI}, the "
        "fewest with a 95%% interval)",
    )
    parser.add_argument(
        "--repeats",
        type=positive_int,
        help=f"repeats, each with fresh app processes and a fresh dataset (default "
        f"{defaults.repeats})",
    )
    parser.add_argument(
        "--warmup",
        type=seconds_between(1, 3600),
        help=f"discarded warm-up seconds per arm before each scenario, 1-3600 (default "
        f"{defaults.warmup_s:g})",
    )
    add_apps(parser)
    parser.add_argument(
        "--scenarios",
        type=choice_list(SCENARIO_NAMES),
        default=defaults.scenarios,
        help=f"scenarios to measure, of {','.join(SCENARIO_NAMES)} (default "
        f"{','.join(defaults.scenarios)}; read-eager and read-lazy read a page of posts with "
        "their comments and tags: docs/related-rows.md; async-read, async-synthetic and "
        "async-write are the first three on async def routes: docs/async.md)",
    )
    add_dataset_size(parser, READ_PER_PAGE, defaults.dataset_size)
    parser.add_argument(
        "--startup-samples",
        type=sample_count,
        help="fresh starts per arm timed to the first /health, 0 to skip (default "
        f"{defaults.startup_samples})",
    )
    add_paired_load(parser, defaults)
    parser.add_argument(
        "--docker",
        action="store_true",
        help="run the same benchmark against docker-compose.yml (needs a Docker engine), its "
        "containers pinned as the local run pins its apps (with --no-pin: compose's own "
        "terms, cpus: 1 on any CPU)",
    )
    parser.add_argument(
        "--cross-check",
        action="store_true",
        help="measure READ and READ synthetic again with wrk in the same paired protocol and "
        "compare both tools' ratios (installs Debian's wrk if missing and possible)",
    )
    parser.add_argument(
        "--fit",
        action="store_true",
        help="before timing, probe every scenario at 1 to 32 users and fit its users, window and "
        "settle to the arms, as compare does (--users and --window given are kept; "
        "docs/compare.md); the default is the fixed timetable every published run uses",
    )
    parser.add_argument(
        "--duration",
        action=RemovedOption,
        nargs="?",
        help=argparse.SUPPRESS,
        replacement="--pairs and --window (measuring is in paired windows now)",
    )


def settings_from(arguments: argparse.Namespace) -> BenchmarkSettings:
    settings = QUICK if arguments.quick else BenchmarkSettings()
    explicit: dict[str, Any] = {
        "repeats": arguments.repeats,
        "pairs": arguments.pairs,
        "warmup_s": arguments.warmup,
        "startup_samples": arguments.startup_samples,
    }
    settings = replace(
        settings,
        **{key: value for key, value in explicit.items() if value is not None},
        **paired_load_values(arguments),
        scenarios=arguments.scenarios,
        dataset_size=arguments.dataset_size,
        docker=arguments.docker,
        cross_check=arguments.cross_check,
        fit=arguments.fit,
        set_by_hand=tuple(
            name
            for name, given in (("users", arguments.users), ("window_s", arguments.window))
            if given is not None
        ),
    )
    if settings.cross_check and BASELINE not in settings.apps:
        raise LabError(f"--cross-check compares each app with {BASELINE}; add {BASELINE} to --apps")
    return settings


def run(settings: BenchmarkSettings, console: Console) -> Path:
    from loadtest.modes.benchmark.runner import run_benchmark

    return run_benchmark(settings, console)
