"""Verification before timing, over real HTTP against tiny servers (examples/burn/server.py and
answers_server.py): what is wrong with one arm's answer on its own (its status, its fields, the
cheap check the load applies, a write read back), then where the arms' answers differ once
normalised."""

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harness_tests.runner import REPOSITORY_ROOT, free_port
from loadtest.load.plan import PairedPlan, Request, Scenario
from loadtest.modes.compare.normalise import NORMALISATIONS
from loadtest.modes.compare.verify import Answer, ask, differing_fields

BURN_SERVER = REPOSITORY_ROOT / "examples" / "burn" / "server.py"
ANSWERS_SERVER = Path(__file__).with_name("answers_server.py")
SERVERS = {
    "burn": (BURN_SERVER, "--ms", "1"),
    "zulu": (ANSWERS_SERVER, "--variant", "zulu"),
    "offset": (ANSWERS_SERVER, "--variant", "offset"),
    "altered": (ANSWERS_SERVER, "--alter"),
    "guarded": (ANSWERS_SERVER, "--token", "secret"),
}
ALL = tuple(NORMALISATIONS)
WRITE_BODY = '{"title": "post {n} by {arm}"}'
START_TIMEOUT_S = 10


def wait_for_health(name: str, base_url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, f"{name} exited with {process.returncode}"
        try:
            if httpx.get(f"{base_url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)
    raise AssertionError(f"{name} did not answer /health in {START_TIMEOUT_S}s")


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, str]]:
    """Every server of SERVERS, started on a free port: its base URL by name."""
    processes: list[subprocess.Popen[bytes]] = []
    urls = {}
    try:
        for name, (script, *arguments) in SERVERS.items():
            port = free_port()
            process = subprocess.Popen(
                [sys.executable, str(script), "--port", str(port), *arguments],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            processes.append(process)
            urls[name] = f"http://127.0.0.1:{port}"
            wait_for_health(name, urls[name], process)
        yield urls
    finally:
        for process in processes:
            process.kill()
            process.wait(timeout=10)


def scenario(
    path: str,
    *,
    method: str = "GET",
    body: str | None = None,
    status: int = 200,
    prefix: str = "",
    headers: tuple[tuple[str, str], ...] = (),
    fields: tuple[str, ...] = (),
    vary: tuple[str, ...] = (),
    read_back: str | None = None,
) -> Scenario:
    request = Request(method, path, body, status, prefix=prefix, headers=headers)
    return Scenario("s", "S", request, fields, vary, read_back)


def plan_of(*arms: str, asked: Scenario) -> PairedPlan:
    """A plan of `arms`, the first the baseline."""
    return PairedPlan(arms, (asked,), arms[0], tuple((arm, arms[0]) for arm in arms[1:]))


def answers(servers: dict[str, str], asked: Scenario, *arms: str) -> dict[str, Answer]:
    return {arm: ask(servers[arm], asked, arm) for arm in arms}


BURN = scenario("/burn", fields=("burned_ms",), prefix='{"burned_ms":')


def test_a_right_answer_has_no_problems(servers: dict[str, str]) -> None:
    answer = ask(servers["burn"], BURN, "burn")
    assert (answer.status, answer.content_type, answer.problems) == (200, "application/json", [])
    assert answer.body["burned_ms"] == 1.0


def test_another_status_than_the_files_is_the_problem(servers: dict[str, str]) -> None:
    asked = scenario("/burn", status=201, fields=("burned_us",), prefix='{"x":')
    # The status alone: the rest of a wrong status's answer says nothing.
    assert ask(servers["burn"], asked, "burn").problems == ["status 200, expected 201"]


def test_a_missing_field(servers: dict[str, str]) -> None:
    asked = scenario("/burn", fields=("burned_ms", "burned_us", "loops"))
    assert ask(servers["burn"], asked, "burn").problems == ["the answer lacks burned_us"]


def test_the_cheap_check_under_load_failing(servers: dict[str, str]) -> None:
    asked = scenario("/burn", fields=("burned_ms",), prefix='{"loops":')
    assert ask(servers["burn"], asked, "burn").problems == [
        'the check under load would fail it: the body does not start with {"loops":'
    ]


def test_fields_need_a_json_answer(servers: dict[str, str]) -> None:
    answer = ask(servers["zulu"], scenario("/text", fields=("greeting",)), "zulu")
    assert (answer.content_type, answer.body) == ("text/plain", "hello")
    assert answer.problems == ["content-type text/plain: fields need a JSON answer"]


def test_nothing_listening_is_a_problem_not_an_exception() -> None:
    answer = ask(f"http://127.0.0.1:{free_port()}", BURN, "burn")
    assert answer.status == 0
    [problem] = answer.problems
    assert problem.startswith("ConnectError: ")


def write(read_back: str = "/posts/{id}", headers: tuple[tuple[str, str], ...] = ()) -> Scenario:
    """POST /posts with a title of the arm's and the request's own, read back."""
    return scenario(
        "/posts",
        method="POST",
        body=WRITE_BODY,
        status=201,
        headers=headers,
        fields=("id", "title"),
        vary=("id",),
        read_back=read_back,
    )


def test_a_write_read_back_as_written(servers: dict[str, str]) -> None:
    answer = ask(servers["zulu"], write(), "zulu")
    assert answer.problems == []
    title = answer.body["title"]
    number = title.removeprefix("post ").removesuffix(" by zulu")
    assert number.isdigit()  # {n}: a number of this request's own
    # The filled-in title goes back to the template, for the arms' answers to compare equal.
    [(sent, template)] = answer.sent.items()
    assert (sent, template) == (title, "post {n} by {arm}")
    stored = httpx.get(f"{servers['zulu']}/posts/{answer.body['id']}").json()
    assert stored == answer.body


def test_a_write_read_back_changed(servers: dict[str, str]) -> None:
    answer = ask(servers["altered"], write(), "altered")
    assert answer.problems == [
        f"read back on /posts/{answer.body['id']}: title differ from the write's answer"
    ]


def test_a_write_not_found_where_read_back_looks(servers: dict[str, str]) -> None:
    answer = ask(servers["zulu"], write(read_back="/posts/{id}0000"), "zulu")
    assert answer.problems == [f"read back on /posts/{answer.body['id']}0000: status 404"]


def test_a_read_back_path_naming_a_field_the_answer_lacks(servers: dict[str, str]) -> None:
    answer = ask(servers["zulu"], write(read_back="/posts/{slug}"), "zulu")
    assert answer.problems == ["read_back names slug, which the answer lacks"]


def test_a_read_back_carries_the_scenarios_headers(servers: dict[str, str]) -> None:
    """A service that wants a key on every request gets it on the read back too."""
    assert ask(servers["guarded"], write(), "guarded").problems == ["status 401, expected 201"]
    keyed = write(headers=(("X-Token", "secret"),))
    assert ask(servers["guarded"], keyed, "guarded").problems == []


WHEN = scenario("/when", fields=("when", "n"))


def test_answers_that_agree_once_normalised(servers: dict[str, str]) -> None:
    asked = scenario("/when", fields=("when", "n"), vary=("n",))
    found = answers(servers, asked, "zulu", "offset")
    assert found["zulu"].body != found["offset"].body
    assert differing_fields(plan_of("zulu", "offset", asked=asked), asked, found, ALL) == {}


def test_a_differing_field_names_the_arm_and_the_path(servers: dict[str, str]) -> None:
    found = answers(servers, WHEN, "zulu", "offset")
    plan = plan_of("zulu", "offset", asked=WHEN)
    assert differing_fields(plan, WHEN, found, ALL) == {"offset": ["n: 1 vs 2"]}
    assert differing_fields(plan, WHEN, found, ()) == {
        "offset": ["when: '2024-01-01T00:00:00Z' vs '2024-01-01T00:00:00+00:00'", "n: 1 vs 2"]
    }


def test_the_arms_own_filled_in_values_compare_as_their_template(
    servers: dict[str, str],
) -> None:
    found = answers(servers, write(), "zulu", "offset")
    assert found["zulu"].body["title"] != found["offset"].body["title"]
    plan = plan_of("zulu", "offset", asked=write())
    assert differing_fields(plan, write(), found, ALL) == {}


def test_arms_with_problems_are_left_out_and_the_first_that_passed_is_the_reference(
    servers: dict[str, str],
) -> None:
    arms = ("burn", "zulu", "offset")  # burn has no /when: 404
    found = answers(servers, WHEN, *arms)
    assert found["burn"].problems == ["status 404, expected 200"]
    assert differing_fields(plan_of(*arms, asked=WHEN), WHEN, found, ALL) == {
        "offset": ["n: 1 vs 2"]
    }
    alone = {arm: found[arm] for arm in ("burn", "zulu")}
    assert differing_fields(plan_of("burn", "zulu", asked=WHEN), WHEN, alone, ALL) == {}
