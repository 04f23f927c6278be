"""The halfway step (v1-shim: app_v1's code on Pydantic 2's pydantic.v1) against the step
before (v1) and the step after (v2): bodies and responses stay Pydantic 1's, while FastAPI
validates path and query parameters with the Pydantic that is installed, Pydantic 2. Each
difference pinned here is in the behaviour-differences table (docs/api.md)."""

from typing import Any

import pytest

from tests import loopback
from tests.app_processes import RunningApp
from tests.factories import post_body


def answer(app: RunningApp, method: str, path: str, **options: Any) -> tuple[int, Any]:
    response = loopback.request(method, f"{app.base_url}{path}", **options)
    return response.status_code, response.json()


def without_moments(body: Any) -> Any:
    """A created post without its id and timestamps' values: their spelling stays."""
    if isinstance(body, dict) and "id" in body:
        return {
            **body,
            "id": "…",
            "updated_at": body["updated_at"][-6:],  # "+00:00" (Pydantic 1) or "…Z" (Pydantic 2)
        }
    return body


@pytest.mark.parametrize(
    "body",
    [
        post_body(),
        post_body(published_at="2024-01-01"),  # a date without a time
        post_body(published_at=True),
        post_body(published_at="2024-05-01T10:00:00+02:00"),
        post_body(title=123),
        post_body(title="x" * 301),
        {"title": "no date", "content": "c"},
        [],
    ],
    ids=[
        "valid",
        "date-only",
        "boolean-date",
        "offset",
        "number-title",
        "long-title",
        "missing-field",
        "not-an-object",
    ],
)
def test_bodies_and_responses_are_pydantic_1s(running_apps, body: Any) -> None:
    v1 = answer(running_apps["v1"], "POST", "/posts", json=body)
    shim = answer(running_apps["v1-shim"], "POST", "/posts", json=body)
    assert (shim[0], without_moments(shim[1])) == (v1[0], without_moments(v1[1]))


def test_responses_are_written_as_pydantic_1_writes_them(running_apps) -> None:
    for path in ("/posts_synthetic?per_page=5", "/ladder/response_model"):
        v1 = answer(running_apps["v1"], "GET", path)[1]["posts"][0]
        shim = answer(running_apps["v1-shim"], "GET", path)[1]["posts"][0]
        assert set(shim) == set(v1)
        assert shim["published_at"].endswith("+00:00"), path  # Pydantic 2 writes "Z"


@pytest.mark.parametrize(
    ("path", "parameters"),
    [
        ("/posts", {"per_page": "0"}),
        ("/posts", {"per_page": "abc"}),
        ("/posts", {"order": "sideways"}),
        ("/posts", {"page": "-1"}),
        ("/posts/abc", {}),
    ],
)
def test_a_bad_parameter_is_refused_in_pydantic_2s_words(
    running_apps, path: str, parameters: dict[str, str]
) -> None:
    v2 = answer(running_apps["v2"], "GET", path, params=parameters)
    shim = answer(running_apps["v1-shim"], "GET", path, params=parameters)
    v1 = answer(running_apps["v1"], "GET", path, params=parameters)
    assert shim[0] == v2[0] == v1[0] == 422
    assert shim[1] == v2[1]
    assert shim[1] != v1[1]  # so the difference from v1 is real, and pinned here


@pytest.mark.parametrize(
    ("path", "parameters"), [("/posts", {"per_page": "10.0"}), ("/posts/1.0", {})]
)
def test_integer_valued_float_parameters_are_read_as_pydantic_2_reads_them(
    running_apps, path: str, parameters: dict[str, str]
) -> None:
    """`10.0` is an integer for Pydantic 2 (200, or 404 for a post that is not there), not for 1."""
    assert answer(running_apps["v1"], "GET", path, params=parameters)[0] == 422
    for arm in ("v1-shim", "v2"):
        assert answer(running_apps[arm], "GET", path, params=parameters)[0] in (200, 404), arm
