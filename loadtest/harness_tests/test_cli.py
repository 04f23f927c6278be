"""The command line: each mode's options, presets and one-line errors."""

from typing import Any

import pytest

from harness_tests.runner import run_in_process
from loadtest.cli import MODES, build_parser, parse, top_help
from loadtest.lab.errors import LabError
from loadtest.lab.pinning import plan_pinning


def settings_for(*argv: str) -> Any:
    command, arguments = parse(list(argv))
    return command.settings_from(arguments)


def test_defaults_match_the_documented_run() -> None:
    settings = settings_for()
    # Five repeats: every ratio's interval is over repeats (docs/methodology.md).
    assert (settings.repeats, settings.pairs, settings.window_s, settings.users) == (5, 8, 0.6, 10)
    assert settings.dataset_size == 10_000 and settings.apps == ("v1", "v2", "v2-latest")
    assert settings.startup_samples == 5
    assert settings.ports == {"v1": 8001, "v1-shim": 8004, "v2": 8002, "v2-latest": 8003}
    assert settings.comparisons == [("v2", "v1"), ("v2-latest", "v1"), ("v2-latest", "v2")]
    assert settings.pin and settings.calibrate
    assert settings_for("benchmark") == settings  # the default mode has a name too
    assert settings_for("run") == settings  # and its old one still works


def test_quick_preset_yields_to_explicit_options() -> None:
    assert settings_for("--quick").repeats == 1
    quick = settings_for("--quick", "--repeats", "2", "--scenarios", "write,read")
    assert (quick.repeats, quick.pairs, quick.startup_samples) == (2, 10, 3)
    assert quick.scenarios == ("read", "write")  # canonical order
    assert settings_for("--quick", "--startup-samples", "0").startup_samples == 0


def test_dataset_size_keeps_its_old_name_and_the_ui_port_is_an_option_of_up() -> None:
    assert settings_for("--dataset-size", "150").dataset_size == 150
    assert settings_for("--dataset", "150").dataset_size == 150  # the first name still works
    assert settings_for("up").ui_port == 8089
    assert settings_for("up", "--ui-port", "9189").ui_port == 9189


def test_same_port_for_two_apps_is_refused() -> None:
    with pytest.raises(LabError, match="--port-v2 and --port-v2-latest are both 9000"):
        settings_for("--port-v2-latest", "9000", "--port-v2", "9000")
    # An app that does not run does not need a port of its own.
    assert settings_for("--apps", "v1,v2", "--port-v2-latest", "8002").ports["v2-latest"] == 8002


def test_conflicting_options_are_refused() -> None:
    with pytest.raises(LabError, match="--ui-port and --port-v1 are both 8001"):
        settings_for("up", "--ui-port", "8001")
    with pytest.raises(LabError, match="--cross-check compares each app with v1"):
        settings_for("--cross-check", "--apps", "v2,v2-latest")


def test_where_the_time_goes_modes_compare_v1_and_v2_with_their_own_rounds() -> None:
    assert settings_for("ladder").apps == ("v1", "v2")
    assert settings_for("micro", "--apps", "v2,v2-latest").apps == ("v2", "v2-latest")
    assert (settings_for("ladder").pairs, settings_for("ladder", "--quick").pairs) == (20, 6)
    assert settings_for("ladder", "--quick", "--pairs", "9").pairs == 9
    assert settings_for("--quick").pairs == 10  # the benchmark's own preset is untouched
    # Every preset has enough pairs for an interval; scale's --quick times 1 process on purpose.
    assert settings_for("sweep", "--quick").pairs == 6
    assert settings_for("scale", "--quick").plan.processes == 1
    assert settings_for("ladder", "--pairs", "6").pairs == 6
    assert (settings_for("profile").requests, settings_for("profile", "--quick").requests) == (
        2000,
        500,
    )
    assert settings_for("profile", "--quick", "--requests", "7").requests == 7
    assert settings_for("micro", "--quick").plan.processes == 2


def test_the_halfway_arm_joins_on_request_in_the_migration_paths_order() -> None:
    settings = settings_for("--quick", "--apps", "v2,v1-shim,v1")
    assert settings.apps == ("v1", "v1-shim", "v2")
    assert settings.comparisons == [("v1-shim", "v1"), ("v2", "v1")]
    assert "v1-shim" not in settings_for().apps  # four arms would not fit a default run


def test_comparisons_follow_the_arms_that_run() -> None:
    assert settings_for("--apps", "v2,v2-latest").comparisons == [("v2-latest", "v2")]
    assert settings_for("--apps", "v1,v2-latest").comparisons == [("v2-latest", "v1")]
    assert settings_for("--apps", "v2").comparisons == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--repeats", "0"], "0 must be at least 1"),
        (["--users", "many"], "'many' is not a whole number"),
        (["--apps", "v3"], "choose from v1, v1-shim, v2, v2-latest"),
        (
            ["--scenarios", ""],
            "choose from read, synthetic, write, read-eager, read-lazy, async-read, "
            "async-synthetic, async-write",
        ),
        (["--warmup", "0.5"], "between 1 and 3600 seconds"),
        (["--window", "0.3"], "must be between 0.4 and 600 seconds"),
        (["--pairs", "5"], "5 is below 6, the fewest pairs that give a ratio its 95% interval"),
        (["ladder", "--pairs", "-3"], "-3 is below 6, the fewest pairs that give a ratio its"),
        (["sweep", "--quick", "--pairs", "1"], "1 is below 6, the fewest pairs that give a"),
        (["scale", "--processes", "2"], "2 is below 6, the fewest processes that give a ratio"),
        (["--dataset", "99"], "99 is below 100, the READ page size"),
        (["--port-v1", "70000"], "70000 is not a TCP port (1-65535)"),
        (["--apps", "v1,v1"], "'v1,v1': v1 named twice"),
        (["--startup-samples", "-1"], "-1 must be between 0 and 100"),
        (["--port-v2-latest", "0"], "0 must be at least 1"),
        (["--bogus"], "unrecognized arguments: --bogus (see ./test.sh benchmark --help)"),
        (["--duration", "5"], "--duration was replaced by --pairs and --window"),
        (["down"], "unknown mode 'down': choose from benchmark, ladder, micro"),
        (["micro", "--scenarios", "read"], "--scenarios does not apply to the micro mode"),
        (["ladder", "--dataset-size", "500"], "--dataset-size does not apply to the ladder mode"),
        (
            ["profile", "--pairs", "3", "--no-calibration"],
            "--pairs, --no-calibration do not apply to the profile mode",
        ),
        (["run", "--requests", "3"], "--requests does not apply to the benchmark mode"),
        (["ladder", "--docker"], "--docker does not apply to the ladder mode"),
        (["up", "--quick"], "--quick does not apply to the up mode"),
        (["dataset", "--apps", "v1"], "--apps does not apply to the dataset mode"),
        (["report"], "the following arguments are required: RUN_DIR"),
    ],
)
def test_bad_options_exit_2_with_one_line(argv: list[str], message: str) -> None:
    result = run_in_process(*argv)
    assert result.returncode == 2
    assert result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("./test.sh: error:") and message in line


def test_every_mode_has_its_own_help_with_its_duration() -> None:
    benchmark_only = ("--cross-check", "--docker", "--repeats", "--scenarios")
    for name in MODES:
        help_text = build_parser(name).format_help()
        assert f"usage: ./test.sh {name}" in help_text
        assert "minute" in help_text or "second" in help_text, name
        # The latency and versions modes load the benchmark's scenarios, and name them alike.
        shared = ("--scenarios",) if name in ("latency", "versions") else ()
        # compare runs the benchmark's protocol on a file's arms, repeats and all.
        shared += ("--repeats",) if name == "compare" else ()
        if name != "benchmark":
            assert not [
                option for option in benchmark_only if option in help_text and option not in shared
            ], name
    ladder = build_parser("ladder").format_help()
    for option in ("--quick", "--pairs", "--window", "--users", "--apps", "--port-v1"):
        assert option in ladder
    # --no-pin says what each mode pins: only the paired modes have a load generator.
    no_pin = {name: help_of(name, "--no-pin") for name in MODES if "--no-pin" in options(name)}
    assert no_pin == {
        "benchmark": "do not pin the apps and the load generator (and PostgreSQL) to separate CPUs",
        "ladder": no_pin["benchmark"],
        "sweep": no_pin["benchmark"],
        "shapes": "do not pin the apps and the load generator to separate CPUs",
        "micro": "do not pin the micro-benchmark processes to one CPU",
        "profile": "do not pin the profiled app and PostgreSQL to separate CPUs",
        "scale": "do not pin the timed app processes to the apps' half of the CPUs",
        "workers": "do not pin the servers to the apps' half of the CPUs and the runner, which "
        "calls them, to the other",
        "latency": "do not pin the apps, and the generator with PostgreSQL, to separate CPUs",
        "compare": "do not pin the arms the run starts, and the load generator with PostgreSQL, "
        "to separate CPUs",
        "versions": no_pin["benchmark"],
    }


def options(mode: str) -> set[str]:
    return {option for action in build_parser(mode)._actions for option in action.option_strings}


def help_of(mode: str, option: str) -> str | None:
    [action] = [action for action in build_parser(mode)._actions if option in action.option_strings]
    return action.help


def test_top_help_lists_the_modes_and_the_benchmarks_options() -> None:
    result = run_in_process("--help")
    assert result.returncode == 0
    for name in MODES:
        assert f"\n  {name} " in result.stdout
    for option in (
        "--quick",
        "--repeats",
        "--pairs",
        "--window",
        "--warmup",
        "--users",
        "--dataset-size",
        "--apps",
        "--scenarios",
        "--workers",
        "--no-pin",
        "--load-processes",
        "--cross-check",
        "--startup-samples",
        "--port-v1",
        "--port-v2",
        "--port-v2-latest",
    ):
        assert option in result.stdout
    prose = " ".join(result.stdout.split())
    assert "every mode but report and losses (and --help) holds a machine-wide lock" in prose
    assert result.stdout == top_help()


def test_pinning_splits_cores_and_says_so() -> None:
    plan = plan_pinning(True, {0, 1})
    assert (plan.app_cpus, plan.load_cpus) == ((1,), (0,))
    assert plan_pinning(True, {3}).enabled is False
    assert plan_pinning(False, {0, 1}).note == "pinning turned off (--no-pin)"
    four = plan_pinning(True, {0, 1, 2, 3})
    assert (four.app_cpus, four.load_cpus) == ((2, 3), (0, 1))
