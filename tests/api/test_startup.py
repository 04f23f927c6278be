"""Starting an app with the command docs/operations.md gives: a missing, unreachable or
malformed database URL is one line, in every arm's own process. Each start costs a second and
a half of CPU (the app's imports), so each arm is started once per way out: no URL, a server
that does not answer, a URL that does not parse. Every other shape of URL, issue 20's '@' in
a password among them, goes through the same start-up path (commons.application.open_database),
which tests/test_config.py calls in-process with each of them."""

import os
import subprocess

import pytest

from tests.app_processes import APP_NAMES, REPOSITORY_ROOT, app_command, find_free_port


def run_app_until_exit(app_name: str, database_url: str | None) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    environment.pop("DATABASE_URL", None)
    if database_url is not None:
        environment["DATABASE_URL"] = database_url
    return subprocess.run(
        app_command(app_name, find_free_port()),
        cwd=REPOSITORY_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def app_error_lines(stderr: str) -> list[str]:
    """The app's own output, without uv's progress lines."""
    return [line for line in stderr.splitlines() if line.startswith("Pydantic v")]


@pytest.mark.parametrize("app_name", APP_NAMES)
def test_start_without_database_url_names_the_variable(app_name: str) -> None:
    result = run_app_until_exit(app_name, None)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    [line] = app_error_lines(result.stderr)
    assert "DATABASE_URL is not set" in line


@pytest.mark.parametrize("app_name", APP_NAMES)
def test_start_with_unreachable_database_names_the_host(app_name: str) -> None:
    result = run_app_until_exit(app_name, "postgresql://lab:secret@127.0.0.1:1/lab")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    [line] = app_error_lines(result.stderr)
    assert "127.0.0.1:1/lab" in line
    assert "secret" not in result.stderr


@pytest.mark.parametrize("app_name", APP_NAMES)
def test_a_malformed_url_is_one_line_without_the_password(app_name: str) -> None:
    result = run_app_until_exit(app_name, "postgresql://lab:S3CRETPW@127.0.0.1:abc/lab")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "S3CRETPW" not in result.stderr
    [line] = app_error_lines(result.stderr)
    assert "check the host and port" in line
