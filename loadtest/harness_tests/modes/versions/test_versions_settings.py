"""The versions mode's series, steps and options, in-process (no run)."""

import pytest

from harness_tests.runner import run_in_process
from loadtest.cli import build_parser
from loadtest.lab.arms import (
    ARMS,
    BASELINE,
    FASTAPI_SERIES,
    PYDANTIC_2_SERIES,
    PYENV_PYTHONS,
    PYTHON_SERIES,
    VERSION_ARMS,
    arm_named,
)
from loadtest.modes.versions.command import settings_from
from loadtest.modes.versions.settings import MINORS, QUICK, VersionsSettings


def settings_for(*argv: str) -> VersionsSettings:
    return settings_from(build_parser("versions").parse_args(list(argv)))


def test_the_minors_run_from_2_7_to_the_labs_own_v2_each_on_its_own_pins() -> None:
    assert list(MINORS) == ["2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13", "2.14"]
    assert PYDANTIC_2_SERIES[-1] == "v2" and MINORS["2.14"] == "v2"
    for minor, arm in list(MINORS.items())[:-1]:
        pydantic, core = arm_named(arm).pins
        assert pydantic.startswith(f"pydantic=={minor}.") and core.startswith("pydantic-core==")
        assert arm_named(arm).environment == "app_v2"  # app_v2's code and lock, moved
    assert FASTAPI_SERIES[0] == "v2" and FASTAPI_SERIES[-1] == "v2-latest"
    assert all(arm_named(arm).pins[0].startswith("fastapi==") for arm in FASTAPI_SERIES[1:-1])


def test_every_arm_has_a_port_of_its_own() -> None:
    ports = [arm.port for arm in (*ARMS.values(), *VERSION_ARMS.values())]
    assert len(ports) == len(set(ports))


def test_each_step_pairs_a_minor_with_the_one_before_and_with_v1() -> None:
    settings = VersionsSettings()
    assert settings.steps == list(zip(PYDANTIC_2_SERIES, PYDANTIC_2_SERIES[1:], strict=False))
    first = settings.for_step(settings.steps[0])
    assert first.apps == (BASELINE, "v2@2.7", "v2@2.8")
    assert first.repeats == len(settings.steps) == 7  # a step's windows pair only with its own
    assert [service.port for service in first.plan.services] == [
        8001,
        arm_named("v2@2.7").port,
        arm_named("v2@2.8").port,
    ]


def test_quick_walks_three_minors_and_fastapi_from_its_first_line_to_the_latest() -> None:
    settings = settings_for("--quick")
    assert settings.chains == ((MINORS["2.7"], MINORS["2.11"], "v2"), ("v2", "v2-latest"))
    assert settings.apps == (BASELINE, "v2@2.7", "v2@2.11", "v2", "v2-latest")
    assert len(settings.steps) == 3 and settings.pairs == QUICK.pairs
    # --fastapi asks for every line, --quick or not.
    assert settings_for("--quick", "--fastapi").chains == (FASTAPI_SERIES,)


def test_minors_are_walked_oldest_first_whatever_the_order_given() -> None:
    settings = settings_for("--minors", "2.13,2.9,2.14")
    assert settings.chains == (("v2@2.9", "v2@2.13", "v2"),)
    both = settings_for("--minors", "2.13,2.14", "--fastapi")
    assert both.chains == (("v2@2.13", "v2"), FASTAPI_SERIES)
    assert settings_for("--fastapi").chains == (FASTAPI_SERIES,)


def test_the_generated_app_is_500_models_by_default_and_can_be_left_out() -> None:
    assert (VersionsSettings().generated_models, VersionsSettings().generated_rounds) == (500, 2)
    assert settings_for("--quick").generated_rounds == 1
    assert settings_for("--generated-models", "0").generated_models == 0


def test_python_walks_v2_over_pyenvs_pythons_each_step_with_v1_on_both() -> None:
    settings = settings_for("--python")
    assert settings.chains == (PYTHON_SERIES,)
    assert [arm_named(arm).python for arm in PYTHON_SERIES] == list(PYENV_PYTHONS)
    # Each v2 after its own v1; no arm on the lab's own interpreter (Debian's optimised 3.11).
    assert settings.apps == (
        "v1@py3.11",
        "v2@py3.11",
        "v1@py3.12",
        "v2@py3.12",
        "v1@py3.13",
        "v2@py3.13",
    )
    first = settings.for_step(settings.steps[0])
    assert first.apps == ("v1@py3.11", "v1@py3.12", "v2@py3.11", "v2@py3.12")
    # A minors step keeps its three arms.
    assert settings_for().for_step(("v2@2.7", "v2@2.8")).apps == (BASELINE, "v2@2.7", "v2@2.8")
    assert settings_for("--python", "--fastapi").chains == (FASTAPI_SERIES, PYTHON_SERIES)


def test_a_python_the_machine_lacks_is_one_line_before_anything_starts(tmp_path) -> None:
    result = run_in_process(
        "versions",
        "--python",
        # Were the check to miss, the run would be short.
        *("--scenarios", "read", "--startup-samples", "0", "--generated-models", "0"),
        *("--results-dir", str(tmp_path / "results")),
        PYENV_ROOT=str(tmp_path),
    )
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("./test.sh: error: v1@py3.11 runs on pyenv's Python 3.11.7, which")
    assert "this machine lacks" in line, result.stderr
    assert not (tmp_path / "results").exists()


def test_users_and_window_given_are_kept_as_set() -> None:
    assert settings_for("--users", "2").set_by_hand == ("users",)
    assert settings_for().set_by_hand == ()


def test_ports_from_moves_every_arm_to_consecutive_ports() -> None:
    settings = settings_for("--minors", "2.13,2.14", "--ports-from", "30000")
    assert settings.ports == {"v1": 30000, "v2@2.13": 30001, "v2": 30002}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--minors", "2.7"], "a step needs two minors at least"),
        (["--minors", "2.7,2.7"], "2.7 named twice"),
        (["--minors", "2.7,2.15"], "2.15"),
        (["--ports-from", "65530"], "need ports up to"),
        (["--generated-models", "2001"], "a number of models, 0 to 2000"),
        (["--generated-models", "many"], "a number of models"),
    ],
)
def test_a_bad_option_is_one_line_and_starts_nothing(argv: list[str], message: str) -> None:
    result = run_in_process("versions", *argv)
    assert result.returncode in (1, 2)
    [line] = result.stderr.strip().splitlines()[-1:]
    assert line.startswith("./test.sh: error:") and message in line, result.stderr
    assert result.stdout == ""
