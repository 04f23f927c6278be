"""A compare file read into the plan every paired mode runs: its schema, each of its one-line
errors (the file, the line, the field), the loopback rule, and the lab's own benchmark written as
a file building the very plan the benchmark builds."""

import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from harness_tests.runner import REPOSITORY_ROOT
from loadtest.lab.errors import LabError
from loadtest.lab.pinning import plan_pinning
from loadtest.lab.services import Service
from loadtest.load.plan import Request
from loadtest.load.scenarios import RELATED_TIMETABLE
from loadtest.modes.compare.file import (
    OPTIONS,
    CompareFile,
    FileError,
    read_compare_file,
)
from loadtest.modes.compare.results import terms_flags
from loadtest.modes.compare.settings import CompareSettings
from loadtest.pipeline.records import ArmLife
from loadtest.pipeline.settings import BenchmarkSettings

EXAMPLES = REPOSITORY_ROOT / "examples"
PYTHON = sys.executable  # an absolute program that exists
OLD = f'[arms.old]\ncommand = ["{PYTHON}", "-m", "http.server", "{{port}}"]\nport = 8001\n'
NEW = f'[arms.new]\ncommand = ["{PYTHON}", "-m", "http.server", "{{port}}"]\nport = 8002\n'
ARMS = OLD + "\n" + NEW  # new's table last: a test may add to it

SCENARIO = """
[scenarios.read]
path = "/items"
"""


def with_new(body: str) -> str:
    """A file of two arms, `new` declared by `body`, and one scenario."""
    return OLD + "\n[arms.new]\n" + body + SCENARIO


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "compare.toml"
    path.write_text(text)
    return path


def read(tmp_path: Path, text: str, *, allow_remote: bool = False) -> CompareFile:
    return read_compare_file(written(tmp_path, text), allow_remote=allow_remote)


def failure(tmp_path: Path, text: str, *, allow_remote: bool = False) -> str:
    """The one-line error the file is refused with."""
    with pytest.raises(FileError) as caught:
        read(tmp_path, text, allow_remote=allow_remote)
    message = str(caught.value)
    assert "\n" not in message
    return message


def line_of(text: str, fragment: str) -> int:
    """The number of the one line of `text` holding `fragment`."""
    [number] = [n for n, line in enumerate(text.splitlines(), 1) if fragment in line]
    return number


def test_a_file_error_is_a_lab_error() -> None:
    assert issubclass(FileError, LabError)  # one line on the console, like every refusal


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "absent.toml"
    with pytest.raises(FileError, match="absent.toml: cannot read it: No such file"):
        read_compare_file(path)


def test_a_file_not_in_utf8_is_one_line(tmp_path: Path) -> None:
    """Path.read_text decodes: before, its UnicodeDecodeError escaped as a traceback."""
    path = tmp_path / "latin1.toml"
    path.write_bytes('baseline = "caf\u00e9"\n'.encode("latin-1"))
    with pytest.raises(FileError) as caught:
        read_compare_file(path)
    assert str(caught.value) == f"{path}: not UTF-8 text"


def test_an_arm_with_a_bad_command_and_a_bad_cwd_is_told_the_command_first(
    tmp_path: Path,
) -> None:
    """The fields are checked in the order the file's reader has always checked them."""
    text = (
        'baseline = "old"\n[arms.old]\ncommand = 3\nport = 8001\ncwd = "absent"\n'
        '[arms.new]\nurl = "http://127.0.0.1:8002"\n' + SCENARIO
    )
    assert ":3: arms.old.command: expected " in failure(tmp_path, text)


def test_not_valid_toml_names_the_line_toml_found(tmp_path: Path) -> None:
    text = 'baseline = "old"\n[arms.old\nport = 8001\n'
    message = failure(tmp_path, text)
    assert message.startswith(f"{tmp_path / 'compare.toml'}:2: not valid TOML: ")
    assert "line 2" in message


def test_a_file_nested_past_the_parser_is_one_line(tmp_path: Path) -> None:
    """Issue 53: tomllib parses nested arrays by recursion; before, a RecursionError wall."""
    text = "baseline = " + "[" * 3000 + "]" * 3000 + "\n" + ARMS + SCENARIO
    assert (
        failure(tmp_path, text)
        == f"{tmp_path / 'compare.toml'}: nested too deeply for a compare file"
    )


def test_an_unknown_top_level_key(tmp_path: Path) -> None:
    text = 'baseline = "old"\nbaselines = "new"\n' + ARMS + SCENARIO
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:2: baselines: unknown field; expected one of baseline, "
        "allow_remote, options, database, verify, arms, scenarios"
    )


def test_an_unknown_arm_key_names_its_dotted_field_and_its_line(tmp_path: Path) -> None:
    text = ARMS + f'\n[arms.newest]\ncomand = ["{PYTHON}"]\nport = 8003\n' + SCENARIO
    message = failure(tmp_path, text)
    assert message.startswith(
        f"{tmp_path / 'compare.toml'}:{line_of(text, 'comand')}: arms.newest.comand: "
        "unknown field; expected one of label, command, cwd,"
    )


def test_a_table_header_with_a_comment_still_gives_the_line(tmp_path: Path) -> None:
    text = ARMS.replace("[arms.new]", "[arms.new]  # the migrated one") + SCENARIO
    text = text.replace("port = 8002", 'port = "8002"')
    assert failure(tmp_path, text).startswith(
        f"{tmp_path / 'compare.toml'}:{line_of(text, '8002')}: arms.new.port: "
    )


@pytest.mark.parametrize(
    "arms",
    ["", f'[arms.only]\ncommand = ["{PYTHON}"]\nport = 8001\n'],
    ids=["none", "one"],
)
def test_fewer_than_two_arms(tmp_path: Path, arms: str) -> None:
    message = failure(tmp_path, arms + SCENARIO)
    assert message.endswith(": arms: declare at least two arms ([arms.NAME] tables) to compare")


def test_an_arm_with_neither_command_nor_url(tmp_path: Path) -> None:
    text = ARMS + '\n[arms.newest]\nlabel = "the newest"\n' + SCENARIO
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:{line_of(text, '[arms.newest]')}: arms.newest: "
        "give a command to start it, or the url it answers on"
    )


def test_a_command_without_its_port(tmp_path: Path) -> None:
    text = ARMS.replace("port = 8002\n", "") + SCENARIO
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:{line_of(text, '[arms.new]')}: arms.new.port: "
        "an arm with a command needs the port it listens on"
    )


def test_two_arms_on_one_port(tmp_path: Path) -> None:
    text = ARMS.replace("port = 8002", "port = 8001") + SCENARIO
    lines = [n for n, line in enumerate(text.splitlines(), 1) if line == "port = 8001"]
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:{lines[1]}: arms.new.port: 8001 is old's port too"
    )


def test_a_port_that_is_not_a_whole_number_names_its_line(tmp_path: Path) -> None:
    text = ARMS.replace("port = 8002", 'port = "8002"') + SCENARIO
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:{line_of(text, '8002')}: arms.new.port: "
        'expected a whole number 1-65535, got "8002"'
    )


def test_a_baseline_that_is_not_an_arm(tmp_path: Path) -> None:
    text = 'baseline = "newest"\n' + ARMS + SCENARIO
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:1: baseline: 'newest' is not an arm; the arms: old, new"
    )


@pytest.mark.parametrize("reference", ["newest", "new"])
def test_compare_with_names_another_arm_of_the_file(tmp_path: Path, reference: str) -> None:
    text = ARMS + f'compare_with = "{reference}"\n' + SCENARIO
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:{line_of(text, 'compare_with')}: arms.new.compare_with: "
        f"{reference!r} is not another arm of the file"
    )


def test_no_scenarios(tmp_path: Path) -> None:
    assert failure(tmp_path, ARMS).endswith(
        ": scenarios: declare at least one scenario ([scenarios.NAME])"
    )


def test_a_get_with_a_body(tmp_path: Path) -> None:
    text = ARMS + SCENARIO + 'body = { title = "x" }\n'
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:{line_of(text, 'body')}: scenarios.read.body: "
        "a GET sends no body; set method"
    )


def test_a_body_that_is_not_json_once_filled_in(tmp_path: Path) -> None:
    # {n} stands where a number goes (fine); {arm} outside a string does not make JSON.
    text = ARMS + SCENARIO + 'method = "POST"\nbody = \'{"n": {n}, "by": {arm}}\'\n'
    message = failure(tmp_path, text)
    assert message.startswith(
        f"{tmp_path / 'compare.toml'}:{line_of(text, 'body')}: scenarios.read.body: "
        "not JSON once {arm} and {n} are filled in: "
    )


def test_a_path_not_starting_with_a_slash(tmp_path: Path) -> None:
    text = ARMS + SCENARIO.replace('"/items"', '"items"')
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:{line_of(text, 'items')}: scenarios.read.path: "
        "expected the request's path, starting with /"
    )


def test_fewer_pairs_than_an_interval_needs(tmp_path: Path) -> None:
    text = "[options]\npairs = 5\n" + ARMS + SCENARIO
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:2: options.pairs: expected a whole number 6-10000, got 5"
    )
    assert read(tmp_path, text.replace("= 5", "= 6")).options == {"pairs": 6}


def test_a_window_shorter_than_twice_its_settling(tmp_path: Path) -> None:
    text = "[options]\nwindow_s = 1\nsettle_s = 0.6\n" + ARMS + SCENARIO
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:2: options.window_s: 1s leaves too little after 0.6s of "
        "settling (at least twice settle_s)"
    )
    assert read(tmp_path, text.replace("0.6", "0.5")).options == {
        "window_s": 1.0,
        "settle_s": 0.5,
    }


def test_settling_alone_is_weighed_against_the_default_window(tmp_path: Path) -> None:
    text = "[options]\nsettle_s = 0.4\n" + ARMS + SCENARIO
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:1: options.window_s: 0.6s leaves too little after 0.4s "
        "of settling (at least twice settle_s)"
    )


def test_an_unknown_normalisation(tmp_path: Path) -> None:
    text = '[verify]\nnormalise = ["timestamps", "case"]\n' + ARMS + SCENARIO
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:2: verify.normalise: 'case' is none of timestamps, "
        "validation_details"
    )


def test_a_program_not_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    text = with_new('command = "python3 server.py --port {port}"\nport = 8002\n')
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:{line_of(text, 'python3')}: arms.new.command: "
        "python3 is not on PATH"
    )


def test_a_program_path_that_does_not_exist(tmp_path: Path) -> None:
    text = ARMS.replace(PYTHON, "bin/serve", 1) + SCENARIO
    assert failure(tmp_path, text) == (
        f"{tmp_path / 'compare.toml'}:{line_of(text, 'bin/serve')}: arms.old.command: "
        f"{tmp_path / 'bin' / 'serve'} does not exist"
    )


def test_a_cwd_that_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    for cwd in ("missing", "a-file"):
        text = ARMS + f'cwd = "{cwd}"\n' + SCENARIO
        assert failure(tmp_path, text) == (
            f"{tmp_path / 'compare.toml'}:{line_of(text, 'cwd')}: arms.new.cwd: "
            f"{tmp_path / cwd} is not a folder"
        )


def test_port_is_filled_into_the_command_and_the_environment(tmp_path: Path) -> None:
    text = ARMS + 'env = { LISTEN = "127.0.0.1:{port}", MODE = "fast" }\n' + SCENARIO
    new = read(tmp_path, text).plan.service("new")
    assert new == Service(
        name="new",
        label="new",
        command=(PYTHON, "-m", "http.server", "8002"),
        port=8002,
        base_url="http://127.0.0.1:8002",
        health_path="/health",
        cwd=tmp_path,
        environment=(("LISTEN", "127.0.0.1:8002"), ("MODE", "fast")),
    )


def test_a_relative_cwd_and_program_are_found_from_the_files_folder(tmp_path: Path) -> None:
    service_folder = tmp_path / "services" / "new"
    (service_folder / "bin").mkdir(parents=True)
    (service_folder / "bin" / "serve").write_text("")
    (tmp_path / "config").mkdir()
    path = tmp_path / "config" / "compare.toml"
    path.write_text(
        with_new('command = ["bin/serve", "{port}"]\nport = 8002\ncwd = "../services/new"\n')
    )
    new = read_compare_file(path).plan.service("new")
    assert new.cwd == service_folder
    assert new.command == (str(service_folder / "bin" / "serve"), "8002")


def test_a_bare_program_is_found_on_path_and_a_string_is_split_like_a_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = tmp_path / "bin" / "serve-it"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    text = with_new("command = \"serve-it --title 'two words' --port={port}\"\nport = 8002\n")
    command = read(tmp_path, text).plan.service("new").command
    assert command == (str(program), "--title", "two words", "--port=8002")


def test_the_baseline_comes_first_then_its_ratios_then_compare_with(tmp_path: Path) -> None:
    text = (
        'baseline = "c"\n'
        + "".join(
            f'[arms.{name}]\ncommand = ["{PYTHON}"]\nport = {port}\n{extra}\n'
            for name, port, extra in [
                ("a", 8001, ""),
                ("b", 8002, 'compare_with = "a"'),
                ("c", 8003, ""),
                ("d", 8004, 'compare_with = "c"'),  # the ratio it already has: once
            ]
        )
        + SCENARIO
    )
    plan = read(tmp_path, text).plan
    assert plan.baseline == "c"
    assert plan.arms == ("c", "a", "b", "d")
    assert [service.name for service in plan.services] == ["c", "a", "b", "d"]
    assert plan.comparisons == (("a", "c"), ("b", "c"), ("d", "c"), ("b", "a"))


def test_without_a_baseline_the_first_arm_is(tmp_path: Path) -> None:
    plan = read(tmp_path, ARMS + SCENARIO).plan
    assert (plan.baseline, plan.arms, plan.comparisons) == (
        "old",
        ("old", "new"),
        (("new", "old"),),
    )


def test_an_arm_by_url_and_its_defaults(tmp_path: Path) -> None:
    text = ARMS + '\n[arms.running]\nurl = "http://localhost:9000/"\nhealth = "/ready"\n' + SCENARIO
    file = read(tmp_path, text)
    assert file.plan.service("running") == Service(
        "running", "running", None, None, "http://localhost:9000", "/ready"
    )
    assert file.allow_remote is False
    assert file.dataset_size is None  # no [database]: services with their own data
    assert file.normalisations == ("timestamps", "validation_details")
    assert file.options == {}


def test_the_database_holds_10000_posts_unless_told(tmp_path: Path) -> None:
    assert read(tmp_path, "[database]\n" + ARMS + SCENARIO).dataset_size == 10_000
    assert read(tmp_path, "[database]\nposts = 300\n" + ARMS + SCENARIO).dataset_size == 300


def test_options_set_the_benchmark_settings_of_their_name(tmp_path: Path) -> None:
    text = (
        "[options]\npairs = 8\nrepeats = 3\nwindow_s = 1.5\nsettle_s = 0.25\nwarmup_s = 1\n"
        "users = 4\npin = false\nstartup_samples = 0\nload_processes = 2\ncalibrate = false\n"
        + ARMS
        + SCENARIO
    )
    options = read(tmp_path, text).options
    assert options == {
        "pairs": 8,
        "repeats": 3,
        "window_s": 1.5,
        "settle_s": 0.25,
        "warmup_s": 1.0,
        "users": 4,
        "pin": False,
        "startup_samples": 0,
        "load_processes": 2,
        "calibrate": False,
    }
    assert set(options) == set(OPTIONS)  # every option the file may set
    settings = replace(CompareSettings(), **options)  # a name that is no setting: TypeError
    assert {name: getattr(settings, name) for name in options} == options


def test_a_scenario_becomes_the_request_and_checks_it_declares(tmp_path: Path) -> None:
    text = (
        ARMS
        + '\n[scenarios.write]\nlabel = "WRITE"\nmethod = "post"\npath = "/posts"\nstatus = 201\n'
        'headers = { X-Token = "secret" }\nbody = { title = "by {arm}", n = 1 }\n'
        'fields = ["id", "title"]\nvary = ["id"]\nread_back = "/posts/{id}"\n'
        'check = { prefix = \'{"id":\', marker = \'"title"\', count = 1, item = "post" }\n'
    )
    [scenario] = read(tmp_path, text).plan.scenarios
    assert (scenario.name, scenario.label) == ("write", "WRITE")
    assert scenario.request == Request(
        method="POST",
        path="/posts",
        body='{"title": "by {arm}", "n": 1}',
        status=201,
        prefix='{"id":',
        marker='"title"',
        count=1,
        item="post",
        headers=(("X-Token", "secret"),),
    )
    assert (scenario.fields, scenario.vary, scenario.read_back) == (
        ("id", "title"),
        ("id",),
        "/posts/{id}",
    )


def test_the_lab_file_builds_the_benchmarks_own_plan() -> None:
    """The benchmark and `compare examples/lab.toml` take one path: the same arms, started the
    same way, the same scenarios and checks, the same ratios."""
    file = read_compare_file(EXAMPLES / "lab.toml")
    assert file.plan == BenchmarkSettings().plan
    assert file.dataset_size == BenchmarkSettings().dataset_size
    # The benchmark's timetable, which the fit would otherwise choose per scenario.
    defaults = BenchmarkSettings()
    assert file.options == {
        "users": defaults.users,
        "window_s": defaults.window_s,
        "settle_s": defaults.settle_s,
    }


def test_the_related_rows_file_builds_the_benchmarks_plan_for_its_scenarios() -> None:
    """`compare examples/lab-related.toml` is `./test.sh --scenarios read-eager,read-lazy`."""
    file = read_compare_file(EXAMPLES / "lab-related.toml")
    settings = replace(BenchmarkSettings(), scenarios=("read-eager", "read-lazy"))
    assert file.plan == settings.plan
    assert file.plan.reads_related_rows and not BenchmarkSettings().plan.reads_related_rows
    assert file.dataset_size == settings.dataset_size
    # The timetable the benchmark gives these scenarios (a scenario's own is not compared).
    assert file.options == {
        "users": RELATED_TIMETABLE.users,
        "window_s": RELATED_TIMETABLE.window_s,
        "settle_s": RELATED_TIMETABLE.settle_s,
    }


def test_the_burn_example_reads() -> None:
    file = read_compare_file(EXAMPLES / "burn.toml")
    plan = file.plan
    assert (plan.arms, plan.baseline, plan.comparisons) == (
        ("fast", "slow"),
        "fast",
        (("slow", "fast"),),
    )
    fast = plan.service("fast")
    assert fast.cwd == EXAMPLES
    assert fast.command is not None
    assert Path(fast.command[0]).is_absolute()  # python3, found on PATH
    assert fast.command[1:] == (
        "burn/server.py",
        "--port",
        "8101",
        "--ms",
        "10",
    )
    assert (EXAMPLES / fast.command[1]).is_file()
    assert [scenario.path for scenario in plan.scenarios] == ["/burn"]
    assert file.dataset_size is None


REMOTE = ARMS + '\n[arms.remote]\nurl = "http://10.1.2.3:8000"\n' + SCENARIO
FILE_ALLOWS = "set allow_remote = true at the top of the file"
FLAG_ALLOWS = "pass --allow-remote"


@pytest.mark.parametrize(
    ("in_file", "flag", "remedy"),
    [
        (False, False, f"{FILE_ALLOWS} and {FLAG_ALLOWS}"),
        (True, False, FLAG_ALLOWS),
        (False, True, FILE_ALLOWS),
    ],
)
def test_an_arm_on_another_host_needs_both_the_file_and_the_flag(
    tmp_path: Path, in_file: bool, flag: bool, remedy: str
) -> None:
    text = ("allow_remote = true\n" if in_file else "") + REMOTE
    assert failure(tmp_path, text, allow_remote=flag) == (
        f"{tmp_path / 'compare.toml'}:{line_of(text, '10.1.2.3')}: arms.remote.url: "
        "http://10.1.2.3:8000 is not on this machine (loopback); a load test aimed at another "
        f"host must be meant: {remedy}"
    )


def test_with_both_an_arm_on_another_host_is_read(tmp_path: Path) -> None:
    file = read(tmp_path, "allow_remote = true\n" + REMOTE, allow_remote=True)
    assert file.allow_remote is True
    assert file.plan.service("remote").base_url == "http://10.1.2.3:8000"


@pytest.mark.parametrize("url", ["http://localhost:9", "http://127.0.0.2:9", "http://[::1]:9"])
def test_this_machine_needs_neither(tmp_path: Path, url: str) -> None:
    file = read(tmp_path, REMOTE.replace("http://10.1.2.3:8000", url))
    assert file.plan.service("remote").base_url == url


def test_a_launched_arm_may_name_its_container(tmp_path: Path) -> None:
    body = (
        'command = "docker run --rm --name shop-new shop:new"\nport = 8002\n'
        'own_process = false\ncontainer = "shop-new"\n'
    )
    found = read(tmp_path, with_new(body))
    assert found.arm_options["new"].container == "shop-new"
    assert found.arm_options["old"].container is None


@pytest.mark.parametrize(
    "body",
    [
        'command = "docker run shop:new"\nport = 8002\ncontainer = "shop-new"\n',
        'url = "http://127.0.0.1:8002"\ncontainer = "shop-new"\n',
    ],
    ids=["its-own-process", "a-url"],
)
def test_only_a_launcher_names_a_container(tmp_path: Path, body: str) -> None:
    text = with_new(body)
    message = failure(tmp_path, text)
    assert "arms.new.container" in message


def test_a_launched_arm_on_the_app_cpus_alone_runs_on_the_same_terms(tmp_path: Path) -> None:
    """Started by a launcher, its container's processes read: its own CPUs say whether it ran
    where the started arms did (docker run --cpuset-cpus), not the launcher's."""
    body = (
        f'command = ["{PYTHON}", "-c", "pass"]\nport = 8002\n'
        'own_process = false\ncontainer = "shop-new"\n'
    )
    settings = replace(CompareSettings(), file=read(tmp_path, with_new(body)))
    pinning = plan_pinning(True, {0, 1})
    lives = [ArmLife("old", 1, cpus=(1,)), ArmLife("new", 1, cpus=(1,))]
    assert terms_flags(settings, pinning, lives) == []
    lives[1].cpus = (0, 1)  # a container that may also run beside the load generator
    [flag] = terms_flags(settings, pinning, lives)
    assert flag.startswith("the arms ran on different terms: old on the app CPUs [1], new ")
    assert terms_flags(settings, pinning) == [flag]  # nothing read of it: not on the same terms


# An arm derived from `old` (`from`, `with`): old's command in an environment of its own.
DERIVED = 'from = "old"\nwith = ["fastapi==0.165.0", "starlette==1.10.0"]\nport = 8002\n'


def test_a_derived_arm_runs_its_bases_command_on_its_own_port(tmp_path: Path) -> None:
    text = (
        f'[arms.old]\ncommand = ["{PYTHON}", "-m", "http.server", "{{port}}"]\nport = 8001\n'
        'env = { MODE = "bench" }\nhealth = "/up"\n'
        f'\n[arms.new]\nlabel = "on FastAPI 0.165"\n{DERIVED}' + SCENARIO
    )
    file = read(tmp_path, text)
    old, new = file.plan.service("old"), file.plan.service("new")
    assert new.command == (PYTHON, "-m", "http.server", "8002")  # {port}: its own
    assert (new.port, new.label) == (8002, "on FastAPI 0.165")
    assert (new.environment, new.health_path, new.cwd) == (
        old.environment,
        old.health_path,
        old.cwd,
    )
    assert file.arm_options["new"].derive_from == "old"
    assert file.arm_options["new"].pins == ("fastapi==0.165.0", "starlette==1.10.0")
    assert file.arm_options["old"].derive_from is None
    assert file.environments == {}  # built when the run starts, not when the file is read


def test_the_versions_example_reads() -> None:
    file = read_compare_file(EXAMPLES / "lab-versions.toml")
    assert file.plan.arms == ("v1", "v2-on-2-11", "v2")
    derived = file.plan.service("v2-on-2-11")
    assert derived.command == (
        *file.plan.service("v2").command[:7],
        "8005",
        *file.plan.service("v2").command[8:],
    )
    assert file.arm_options["v2-on-2-11"].pins == ("pydantic==2.11.10", "pydantic-core==2.33.2")
    assert file.plan.comparisons == (("v2-on-2-11", "v1"), ("v2", "v1"), ("v2", "v2-on-2-11"))


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        (
            'with = ["pydantic==2.11.10"]\nurl = "http://127.0.0.1:8002"\n',
            "with",
            "an environment derived from another arm's: name that arm with `from`",
        ),
        (
            'requirements = "r.txt"\nurl = "http://127.0.0.1:8002"\n',
            "requirements",
            "an environment derived from another arm's: name that arm with `from`",
        ),
        (
            'from = "newest"\nwith = ["a==1"]\nport = 8002\n',
            "from",
            "'newest' is not another arm of the file",
        ),
        (
            'from = "new"\nwith = ["a==1"]\nport = 8002\n',
            "from",
            "'new' is not another arm of the file",
        ),
        ('from = "old"\nport = 8002\n', "with", "expected the packages to pin over the base"),
        (
            'from = "old"\nwith = []\nport = 8002\n',
            "with",
            "expected the packages to pin over the base",
        ),
        (
            'from = "old"\nwith = ["pydantic"]\nport = 8002\n',
            "with",
            "'pydantic' is not a requirement such as pydantic==2.11.10",
        ),
        (
            'from = "old"\nwith = ["a==1"]\n',
            "port",
            "an arm with a command needs the port it listens on",
        ),
        (
            f'from = "old"\nwith = ["a==1"]\ncommand = ["{PYTHON}"]\nport = 8002\n',
            "command",
            "a derived arm runs old's command in an environment of its own: leave command out",
        ),
    ],
    ids=[
        "with-alone",
        "requirements-alone",
        "unknown",
        "itself",
        "no-with",
        "empty-with",
        "bare-name",
        "no-port",
        "own-command",
    ],
)
def test_a_derived_arm_is_refused_in_one_line(
    tmp_path: Path, body: str, field: str, message: str
) -> None:
    assert f"arms.new.{field}: {message}" in failure(tmp_path, with_new(body))


def test_an_arm_is_derived_only_from_an_environment_it_can_read(tmp_path: Path) -> None:
    by_url = '[arms.old]\nurl = "http://127.0.0.1:8001"\n'
    assert failure(tmp_path, by_url + f"\n[arms.new]\n{DERIVED}" + SCENARIO).endswith(
        "arms.new.from: old has no command (it is reached by its url): there is no environment "
        "to derive from"
    )
    shell = '[arms.old]\ncommand = ["/bin/sh", "-c", "exit 1"]\nport = 8001\n'
    assert failure(tmp_path, shell + f"\n[arms.new]\n{DERIVED}" + SCENARIO).endswith(
        "arms.new.from: old's command starts with /bin/sh, not a virtual environment's python (a "
        "folder with pyvenv.cfg): there is no environment to derive from"
    )
    chained = (
        OLD
        + f"\n[arms.new]\n{DERIVED}\n[arms.newer]\n"
        + DERIVED.replace('"old"', '"new"').replace("8002", "8003")
    )
    assert failure(tmp_path, chained + SCENARIO).endswith(
        "arms.newer.from: new is derived itself: derive from the arm it comes from"
    )


def test_a_derived_arm_may_list_its_packages_in_a_requirements_file(tmp_path: Path) -> None:
    (tmp_path / "pinned.txt").write_text("starlette==1.10.0\n")
    body = 'from = "old"\nrequirements = "pinned.txt"\nport = 8002\n'
    file = read(tmp_path, with_new(body))
    options = file.arm_options["new"]
    assert (options.requirements, options.pins) == (tmp_path / "pinned.txt", ())
    missing = body.replace("pinned.txt", "absent.txt")
    assert failure(tmp_path, with_new(missing)).endswith(
        f"arms.new.requirements: {tmp_path / 'absent.txt'} is not a file"
    )


def test_a_pin_is_one_requirement_and_nothing_else(tmp_path: Path) -> None:
    for pin in ("pydantic==2.11.10\\n-e /x", "pydantic=2.11", "pydantic == 2.11", "-e ."):
        body = f'from = "old"\nwith = ["{pin}"]\nport = 8002\n'
        assert "is not a requirement such as pydantic==2.11.10" in failure(
            tmp_path, with_new(body)
        ), pin
    body = 'from = "old"\nwith = ["uvicorn[standard]>=0.30,<1", "pydantic_core===2.33.2"]\n'
    assert read(tmp_path, with_new(body + "port = 8002\n")).arm_options["new"].pins == (
        "uvicorn[standard]>=0.30,<1",
        "pydantic_core===2.33.2",
    )
