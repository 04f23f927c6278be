"""The arm registry (commons/arms.py) is the only list of arms: every consumer sees the same."""

import subprocess
from pathlib import Path

import yaml

from commons import arms as registry
from loadtest.cli import build_parser
from loadtest.lab.arms import ARMS, arm_python, comparisons, rotations
from loadtest.lab.paths import REPOSITORY_ROOT
from loadtest.output.charts import colour


def test_every_arm_has_its_environment_code_and_a_port_of_its_own() -> None:
    assert ARMS is registry.ARMS and registry.BASELINE in ARMS
    assert len({arm.port for arm in ARMS.values()}) == len(ARMS)
    for arm in ARMS.values():
        environment = REPOSITORY_ROOT / arm.environment
        assert (environment / "pyproject.toml").is_file() and (environment / "uv.lock").is_file()
        assert list(REPOSITORY_ROOT.glob(f"*/src/{arm.package}/main.py")), arm.name
        assert arm_python(arm.name) == environment / ".venv" / "bin" / "python"
        assert arm.compare_with in (None, *ARMS)


def test_the_scripts_sync_every_arms_environment() -> None:
    listed = subprocess.run(
        [REPOSITORY_ROOT / "scripts" / "lab_projects.sh"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert listed[0] == "commons"
    assert set(listed) == {"commons", "loadtest", *(arm.environment for arm in ARMS.values())}


def test_the_command_line_charts_and_compose_know_every_arm() -> None:
    parser = build_parser("benchmark")
    options = {option for action in parser._actions for option in action.option_strings}
    assert {f"--port-{name}" for name in ARMS} <= options
    apps = next(action for action in parser._actions if "--apps" in action.option_strings)
    assert set(apps.default) == {name for name, arm in ARMS.items() if arm.default}
    for name, arm in ARMS.items():
        assert colour(name) == arm.colour
    compose = yaml.safe_load(Path(REPOSITORY_ROOT / "docker-compose.yml").read_text())
    assert {arm.environment for arm in ARMS.values()} <= set(compose["services"])


def test_comparisons_are_over_the_baseline_then_the_declared_references() -> None:
    assert comparisons(("v1", "v2", "v2-latest")) == [
        ("v2", "v1"),
        ("v2-latest", "v1"),
        ("v2-latest", "v2"),
    ]
    assert comparisons(("v2",)) == []


def test_two_arms_alternate_abba_and_three_rotate() -> None:
    assert rotations(("v1", "v2"), 4) == [["v1", "v2"], ["v2", "v1"], ["v1", "v2"], ["v2", "v1"]]
    orders = rotations(("a", "b", "c"), 6)
    assert orders[:3] == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    for position in range(3):
        assert sorted(order[position] for order in orders) == ["a", "a", "b", "b", "c", "c"]
