"""Starting an app with the command docs/operations.md gives: a missing or unreachable
database is one line."""

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
def test_start_with_a_non_postgresql_url_is_refused(app_name: str) -> None:
    result = run_app_until_exit(app_name, "mysql://root@127.0.0.1/lab")
    assert result.returncode != 0
    [line] = app_error_lines(result.stderr)
    assert "must be a PostgreSQL URL" in line


@pytest.mark.parametrize("app_name", APP_NAMES)
@pytest.mark.parametrize(
    ("database_url", "message"),
    [
        ("postgresql://lab:S3CRETPW@127.0.0.1:abc/lab", "check the host and port"),
        ("postgresql://lab:S3CRETPW@[::1:5432/lab", "check the host and port"),
        ("lab:S3CRETPW@127.0.0.1:1/lab", "not a valid URL"),
        ("postgresql://", "names no database"),
    ],
)
def test_a_malformed_url_is_one_line_without_the_password(app_name, database_url, message) -> None:
    result = run_app_until_exit(app_name, database_url)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "S3CRETPW" not in result.stderr
    [line] = app_error_lines(result.stderr)
    assert message in line


@pytest.mark.parametrize("app_name", APP_NAMES)
def test_an_at_sign_in_the_password_shows_no_piece_of_it(app_name: str) -> None:
    """Issue 20's URL, with a password of no English pieces ('SecretAt@Pass' shares 'ass' with
    'password'): SQLAlchemy ends the password at its first '@', and the app printed the rest,
    'Pass@127.0.0.1:5999/lab', as the database's host (tests/test_config.py tries more)."""
    result = run_app_until_exit(app_name, "postgresql://lab:QzvAt@Wxk@127.0.0.1:5999/lab")
    assert result.returncode != 0
    [line] = app_error_lines(result.stderr)
    assert "%40" in line
    password = "QzvAt@Wxk"
    output = result.stdout + result.stderr
    assert not [
        password[i : i + 3] for i in range(len(password) - 2) if password[i : i + 3] in output
    ]
