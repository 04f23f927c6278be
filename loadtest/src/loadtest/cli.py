"""Command line of ./test.sh: parse options, run the benchmark or `up`, fail in one line."""

import argparse
import shutil
import signal
import sys
import tempfile
from dataclasses import replace
from itertools import combinations
from pathlib import Path
from typing import NoReturn

from rich.console import Console

from loadtest.processes import BenchmarkError
from loadtest.scenarios import READ_PER_PAGE, SCENARIO_NAMES
from loadtest.settings import (
    APP_NAMES,
    ARMS,
    BASELINE,
    LADDER_PAIRS,
    LADDER_QUICK_PAIRS,
    LOCUST_WEB_PORT,
    PROFILE_REQUESTS,
    QUICK_OVERRIDES,
    QUICK_PROFILE_REQUESTS,
    WHERE_TIME_GOES_APPS,
    WHERE_TIME_GOES_MODES,
    BenchmarkSettings,
)

PROGRAM = "./test.sh"


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad option is one line (not usage + error) and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{PROGRAM}: error: {message} (see {PROGRAM} --help)\n")


class RemovedOption(argparse.Action):
    """An option that no longer exists: say what replaced it, instead of argparse's guess."""

    def __init__(self, *args: object, replacement: str, **kwargs: object) -> None:
        self.replacement = replacement
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def __call__(self, parser, namespace, values, option_string=None) -> None:  # noqa: ANN001
        parser.error(f"{option_string} was replaced by {self.replacement}")


def whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def positive_int(text: str) -> int:
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def dataset_size(text: str) -> int:
    value = positive_int(text)
    if value < READ_PER_PAGE:
        # READ asks for a full page of READ_PER_PAGE posts; fewer can never pass verification.
        raise argparse.ArgumentTypeError(f"{value} is below {READ_PER_PAGE}, the READ page size")
    return value


def port_number(text: str) -> int:
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a TCP port (1-65535)")
    return value


def sample_count(text: str) -> int:
    value = whole_number(text)
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{value} must be between 0 and 100")
    return value


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 1 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"{value:g} must be between 1 and 3600 seconds")
    return value


def window_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    minimum = 2 * BenchmarkSettings().settle_s
    if not minimum <= value <= 600:
        raise argparse.ArgumentTypeError(f"{value:g} must be between {minimum:g} and 600 seconds")
    return value


def choice_list(allowed: tuple[str, ...]):  # noqa: ANN201 - an argparse type factory
    def parse(text: str) -> tuple[str, ...]:
        parts = [part.strip() for part in text.split(",") if part.strip()]
        chosen = tuple(dict.fromkeys(parts))
        unknown = [part for part in chosen if part not in allowed]
        if unknown or not chosen or len(chosen) != len(parts):
            raise argparse.ArgumentTypeError(
                f"{text!r}: choose from {', '.join(allowed)} (comma-separated)"
            )
        return tuple(name for name in allowed if name in chosen)  # canonical order

    return parse


def build_parser() -> argparse.ArgumentParser:
    defaults = BenchmarkSettings()
    parser = OneLineParser(
        prog=PROGRAM,
        description="Benchmark the apps (v1: Pydantic 1; v2: Pydantic 2; v2-latest: Pydantic 2 "
        "on the latest FastAPI) with locust in paired, alternating windows and print their "
        "ratios with 95% confidence intervals; results go to results/<UTC timestamp>/ "
        "(results/latest is the newest run of every app and scenario).",
    )
    parser.add_argument(
        "mode",
        nargs="?",
        choices=("run", "up", "dataset", "report", "ladder", "micro", "profile"),
        default="run",
        help="run: the benchmark; up: PostgreSQL + the apps + the locust web UI until Ctrl-C; "
        "dataset: empty the posts table of the database in DATABASE_URL, load the dataset, exit; "
        "report RUN_DIR [RUN_DIR]: rebuild a run's report.md and report.html from its "
        "results.json, or compare two runs; "
        "where the time goes (README): ladder: the serialisation ladder's eight rungs in "
        "both apps, paired; micro: in-process micro-benchmarks in each app's environment; "
        "profile: READ synthetic and READ under cProfile in each app",
    )
    parser.add_argument("run_dirs", nargs="*", type=Path, metavar="RUN_DIR", help=argparse.SUPPRESS)
    quick = BenchmarkSettings(**QUICK_OVERRIDES)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a first look: {quick.pairs} pairs, {quick.repeats} repeat, "
        f"{quick.warmup_s:g}s warm-up, {quick.startup_samples} start-ups per app; ladder, micro "
        "and profile have quick presets of their own (README)",
    )
    parser.add_argument(
        "--pairs",
        type=positive_int,
        help="rounds of one window per app, per scenario and repeat; the ratios' pairs "
        f"(default {defaults.pairs}); ladder mode: rounds of four windows per rung (default "
        f"{LADDER_PAIRS}, --quick {LADDER_QUICK_PAIRS})",
    )
    parser.add_argument(
        "--window",
        type=window_seconds,
        help=f"seconds of one app's window, {2 * defaults.settle_s:g}-600 (default "
        f"{defaults.window_s:g}; the first {defaults.settle_s:g}s of each are not counted)",
    )
    parser.add_argument(
        "--repeats",
        type=positive_int,
        help=f"repeats, each with fresh app processes and a fresh dataset (default "
        f"{defaults.repeats})",
    )
    parser.add_argument(
        "--warmup",
        type=positive_seconds,
        help=f"discarded warm-up seconds per app before each scenario, 1-3600 (default "
        f"{defaults.warmup_s:g})",
    )
    parser.add_argument(
        "--users", type=positive_int, help=f"concurrent locust users (default {defaults.users})"
    )
    parser.add_argument(
        "--dataset-size",
        "--dataset",  # its first name, kept working
        dest="dataset_size",
        type=dataset_size,
        help=f"posts in the database (default {defaults.dataset_size})",
    )
    parser.add_argument(
        "--apps",
        type=choice_list(APP_NAMES),
        help=f"apps to run, comma-separated (default {','.join(defaults.apps)})",
    )
    parser.add_argument(
        "--startup-samples",
        type=sample_count,
        help="fresh starts per app timed to the first /health, 0 to skip (default "
        f"{defaults.startup_samples})",
    )
    parser.add_argument(
        "--scenarios",
        type=choice_list(SCENARIO_NAMES),
        help="scenarios to measure (default read,synthetic,write)",
    )
    parser.add_argument("--workers", type=positive_int, help="uvicorn workers per app (default 1)")
    parser.add_argument(
        "--load-processes",
        type=positive_int,
        help="locust processes (a master and N workers when N > 1; default 1)",
    )
    parser.add_argument(
        "--no-pin",
        action="store_true",
        help="do not pin the app and the load generator to separate CPUs",
    )
    parser.add_argument(
        "--no-calibration",
        action="store_true",
        help="skip measuring locust against a trivial endpoint",
    )
    for arm in ARMS.values():
        parser.add_argument(
            f"--port-{arm.name}",
            type=port_number,
            default=arm.port,
            help=f"port of {arm.name} ({arm.project}; default {arm.port})",
        )
    parser.add_argument(
        "--ui-port",
        type=port_number,
        default=LOCUST_WEB_PORT,
        help=f"port of the locust web UI in the up mode (default {LOCUST_WEB_PORT})",
    )
    parser.add_argument(
        "--docker",
        action="store_true",
        help="run the same benchmark against docker-compose.yml (needs a Docker engine)",
    )
    parser.add_argument(
        "--cross-check",
        action="store_true",
        help="measure READ and READ synthetic again with wrk in the same paired protocol and "
        "compare both tools' ratios (installs Debian's wrk if missing and possible)",
    )
    parser.add_argument(
        "--duration", action=RemovedOption, nargs="?", help=argparse.SUPPRESS,
        replacement="--pairs and --window (measuring is in paired windows now)",
    )  # fmt: skip
    parser.add_argument(
        "--requests",
        type=positive_int,
        help="profile mode: requests profiled per app and scenario (default "
        f"{PROFILE_REQUESTS}, --quick {QUICK_PROFILE_REQUESTS})",
    )
    parser.add_argument(
        "--results-dir", type=Path, help="where runs are written (default results/)"
    )
    return parser


# What each "where the time goes" mode reads; any other option is refused, not ignored.
MODE_OPTIONS = {
    "ladder": {"quick", "pairs", "window", "users", "apps", "workers", "load_processes",
               "no_pin", "no_calibration", "results_dir", *(f"port_{arm.replace('-', '_')}"
                                                            for arm in ARMS)},
    "micro": {"quick", "apps", "no_pin", "results_dir"},
    "profile": {"quick", "requests", "apps", "dataset_size", "no_pin", "results_dir"},
}  # fmt: skip


def check_mode_options(arguments: argparse.Namespace) -> None:
    allowed = MODE_OPTIONS.get(arguments.mode)
    if allowed is None:
        return
    defaults = vars(build_parser().parse_intermixed_args([]))
    given = [name for name, value in vars(arguments).items()
             if name not in ("mode", "run_dirs") and value != defaults.get(name)]  # fmt: skip
    refused = [f"--{name.replace('_', '-')}" for name in given if name not in allowed]
    if refused:
        verb = "does" if len(refused) == 1 else "do"
        raise BenchmarkError(f"{', '.join(refused)} {verb} not apply to the {arguments.mode} "
                             f"mode (see {PROGRAM} --help)")  # fmt: skip


def settings_from_arguments(arguments: argparse.Namespace) -> BenchmarkSettings:
    check_mode_options(arguments)
    settings = BenchmarkSettings()
    if arguments.quick:
        settings = replace(settings, **QUICK_OVERRIDES)
    explicit = {
        "repeats": arguments.repeats,
        "pairs": arguments.pairs,
        "window_s": arguments.window,
        "warmup_s": arguments.warmup,
        "users": arguments.users,
        "startup_samples": arguments.startup_samples,
        "dataset_size": arguments.dataset_size,
        "apps": arguments.apps,
        "scenarios": arguments.scenarios,
        "workers": arguments.workers,
        "load_processes": arguments.load_processes,
        "results_dir": arguments.results_dir,
    }
    if arguments.mode in WHERE_TIME_GOES_MODES and arguments.apps is None:
        explicit["apps"] = WHERE_TIME_GOES_APPS
    if arguments.mode == "ladder" and arguments.pairs is None:
        explicit["pairs"] = LADDER_QUICK_PAIRS if arguments.quick else LADDER_PAIRS
    settings = replace(
        settings, **{key: value for key, value in explicit.items() if value is not None}
    )
    if arguments.requests is not None and arguments.mode != "profile":
        raise BenchmarkError("--requests is an option of the profile mode only")
    ports = {arm: getattr(arguments, f"port_{arm.replace('-', '_')}") for arm in ARMS}
    for arm, other in combinations(settings.apps, 2):
        if ports[arm] == ports[other]:
            raise BenchmarkError(f"--port-{arm} and --port-{other} are both {ports[arm]}")
    if arguments.mode == "up":
        for arm in settings.apps:
            if ports[arm] == arguments.ui_port:
                raise BenchmarkError(f"--ui-port and --port-{arm} are both {ports[arm]}")
    if arguments.cross_check and BASELINE not in settings.apps:
        raise BenchmarkError(f"--cross-check compares each app with {BASELINE}; add {BASELINE} "
                             "to --apps")  # fmt: skip
    return replace(
        settings,
        pin=not arguments.no_pin,
        calibrate=not arguments.no_calibration,
        docker=arguments.docker,
        cross_check=arguments.cross_check,
        ports=ports,
        ui_port=arguments.ui_port,
        results_dir=settings.results_dir.resolve(),
    )


def load_dataset_into_configured_database(settings: BenchmarkSettings, console: Console) -> None:
    """`./test.sh dataset`: what compose's `dataset` service runs, same rows as the harness."""
    import os

    import psycopg

    from commons.config import ConfigurationError, libpq_url, parse_database_url
    from loadtest.database import prepare_schema
    from loadtest.dataset import load_dataset

    raw_url = os.environ.get("DATABASE_URL", "").strip()
    if not raw_url:
        raise BenchmarkError("the dataset mode loads into DATABASE_URL, which is not set")
    try:
        database_url = libpq_url(parse_database_url(raw_url))
    except ConfigurationError as error:
        raise BenchmarkError(str(error)) from None
    prepare_schema(database_url)
    try:
        load_dataset(database_url, settings.dataset_size)
    except psycopg.Error as error:
        raise BenchmarkError(f"loading the dataset failed: {error}".splitlines()[0]) from None
    console.print(f"Loaded {settings.dataset_size:,} posts.")


def check_run_dirs(arguments: argparse.Namespace) -> None:
    if arguments.mode == "report":
        if not 1 <= len(arguments.run_dirs) <= 2:
            raise BenchmarkError(
                "report takes one run directory (rebuild its reports) or two (compare them), "
                "e.g. ./test.sh report results/latest"
            )
        for run_dir in arguments.run_dirs:
            if not run_dir.is_dir():
                raise BenchmarkError(f"{run_dir} is not a directory")
    elif arguments.run_dirs:
        words = " ".join(str(run_dir) for run_dir in arguments.run_dirs)
        raise BenchmarkError(f"unexpected argument(s) {words!r}: only the report mode takes run "
                             "directories")  # fmt: skip


def start_teardown(*_: object) -> NoReturn:
    """First Ctrl-C, SIGTERM or SIGHUP: tear down. Further ones are ignored so teardown can
    finish."""
    for signal_number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signal_number, signal.SIG_IGN)
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    # Intermixed: `report --results-dir D RUN_A RUN_B` puts options among the run directories.
    arguments = build_parser().parse_intermixed_args(argv)
    console = Console()
    if not console.is_terminal:
        console = Console(width=132)  # logs and CI: wide enough that three arms never wrap
    # SIGTERM tears down like Ctrl-C does: every `with`/`finally` below runs. SIGINT is set
    # explicitly too: a shell starts background jobs with it ignored, and Ctrl-C must still work.
    for signal_number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # HUP: terminal closed
        signal.signal(signal_number, start_teardown)
    try:
        settings = settings_from_arguments(arguments)
        check_run_dirs(arguments)
        if arguments.mode == "report":
            from loadtest.report_mode import rebuild_reports

            rebuild_reports(arguments.run_dirs, settings.results_dir, console)
        elif arguments.mode == "dataset":
            load_dataset_into_configured_database(settings, console)
        elif arguments.mode == "ladder":
            from loadtest.ladder import run_ladder

            run_ladder(settings, console)
        elif arguments.mode == "micro":
            from loadtest.micro import run_micro

            run_micro(settings, console, quick=arguments.quick)
        elif arguments.mode == "profile":
            from loadtest.profiling import run_profile

            run_profile(settings, console, quick=arguments.quick, requests=arguments.requests)
        elif arguments.mode == "up":
            from loadtest.interactive import run_interactive

            log_dir = Path(tempfile.mkdtemp(prefix="pglab-up-"))
            keep_logs = False
            try:
                run_interactive(settings, console, log_dir)
            except BenchmarkError:
                keep_logs = any(log_dir.iterdir())  # something failed: its logs say why
                raise
            finally:
                if not keep_logs:
                    shutil.rmtree(log_dir, ignore_errors=True)
        else:
            from loadtest.benchmark import run_benchmark

            run_benchmark(settings, console)
    except BenchmarkError as error:
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROGRAM}: interrupted; everything it started was stopped", file=sys.stderr)
        return 130
    return 0
