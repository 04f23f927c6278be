"""`./test.sh up`: the web UI loads the one scenario named on the command line, however it is
started, and everything stops on Ctrl-C."""

import ast
import signal
import subprocess
import time
from pathlib import Path

import httpx

from harness_tests.runner import (
    REPOSITORY_ROOT,
    free_port,
    lab_processes,
    leftover_processes,
    port_options,
    runner_command,
    runner_environment,
)
from loadtest.load.scenarios import SCENARIO_NAMES, SCENARIOS
from loadtest.modes.up.runner import WEB_UI_LOCUSTFILE
from loadtest.modes.up.settings import USER_CLASSES


def test_every_scenario_names_its_user_class_in_the_web_uis_locustfile() -> None:
    tree = ast.parse(Path(WEB_UI_LOCUSTFILE).read_text())
    scenario_of = {
        node.name: statement.value.value
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        for statement in node.body
        if isinstance(statement, ast.Assign)
        and [target.id for target in statement.targets if isinstance(target, ast.Name)]
        == ["scenario"]
        and isinstance(statement.value, ast.Constant)
        and statement.value.value
    }
    assert set(USER_CLASSES) == set(SCENARIO_NAMES)
    assert {user_class: name for name, user_class in USER_CLASSES.items()} == scenario_of


def test_the_web_ui_loads_only_the_scenario_it_was_started_with(tmp_path) -> None:
    before = lab_processes()
    ui_port = free_port()
    up = subprocess.Popen(
        runner_command("up", "--scenario", "synthetic", "--ui-port", str(ui_port), *port_options()),
        cwd=REPOSITORY_ROOT,
        env=runner_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert up.stdout is not None
        printed = []
        deadline = time.monotonic() + 120
        while not printed or not printed[-1].startswith("Press Ctrl-C"):
            assert time.monotonic() < deadline and up.poll() is None, up.communicate()
            printed.append(up.stdout.readline())
        said = " ".join(" ".join(printed).split())
        assert (
            "loading READ synthetic (SyntheticUser: GET /posts_synthetic?per_page=100) and "
            "nothing else; ./test.sh up --scenario read|write|read-eager|read-lazy|async-read|"
            "async-synthetic|async-write for another." in said
        )
        ui = f"http://127.0.0.1:{ui_port}"
        with httpx.Client(timeout=10) as client:
            # Ready means the page answers at once. No class picker: locust 2.47's would tick
            # every class and start them all.
            assert '"show_userclass_picker": false' in client.get(f"{ui}/").text
            # A start that names no user class (the UI's form, without a picker) runs the one.
            host = [line for line in printed if line.startswith("v2 ")][0].split()[1]
            host = host.removesuffix("/docs")
            started = client.post(
                f"{ui}/swarm", data={"user_count": 2, "spawn_rate": 2, "host": host}
            )
            assert started.json()["success"] is True
            deadline = time.monotonic() + 30
            while not (names := requested(client, ui)):
                assert time.monotonic() < deadline, "the web UI sent no request"
                time.sleep(0.5)
            assert names == {("GET", SCENARIOS["synthetic"].path)}
    finally:
        up.send_signal(signal.SIGINT)
        _, stderr = up.communicate(timeout=60)
    assert up.returncode == 130, stderr
    assert leftover_processes(before) == {}


def requested(client: httpx.Client, ui: str) -> set[tuple[str, str]]:
    """The (method, name) of every request the web UI's users sent so far."""
    stats = client.get(f"{ui}/stats/requests").json()["stats"]
    return {(row["method"], row["name"]) for row in stats if row["name"] != "Aggregated"}
