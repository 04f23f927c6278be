"""Where Pydantic 1 and 2 legitimately differ, pin each app's actual behaviour.

README.md's "Pydantic v1 vs v2: behaviour differences" table lists the same cases. Both
Pydantic 2 arms (v2 on FastAPI 0.125, v2-latest on the latest FastAPI) must behave alike.
"""

import httpx
import pytest

from tests.app_processes import RunningApp
from tests.factories import post_body

V2_ARMS = ("v2", "v2-latest")


def post(running_apps: dict[str, RunningApp], app_name: str, body: object) -> httpx.Response:
    return httpx.post(f"{running_apps[app_name].base_url}/posts", json=body)


def test_integer_title_is_coerced_by_v1_and_refused_by_v2(running_apps) -> None:
    v1 = post(running_apps, "v1", post_body(title=123))
    assert v1.status_code == 201 and v1.json()["title"] == "123"
    for arm in V2_ARMS:
        v2 = post(running_apps, arm, post_body(title=123))
        assert v2.status_code == 422, arm
        assert v2.json()["detail"][0]["type"] == "string_type"


def test_date_without_time_is_refused_by_v1_and_accepted_by_v2(running_apps) -> None:
    v1 = post(running_apps, "v1", post_body(published_at="2024-01-01"))
    assert v1.status_code == 422
    assert v1.json()["detail"][0]["type"] == "value_error.datetime"
    for arm in V2_ARMS:
        v2 = post(running_apps, arm, post_body(published_at="2024-01-01"))
        assert v2.status_code == 201, arm
        assert v2.json()["published_at"] == "2024-01-01T00:00:00Z"


def test_boolean_datetime_is_read_as_a_timestamp_by_v1_only(running_apps) -> None:
    v1 = post(running_apps, "v1", post_body(published_at=True))
    assert v1.status_code == 201
    assert v1.json()["published_at"] == "1970-01-01T00:00:01+00:00"
    for arm in V2_ARMS:
        assert post(running_apps, arm, post_body(published_at=True)).status_code == 422, arm


def test_huge_unix_timestamp_is_scaled_down_by_v1_and_refused_by_v2(running_apps) -> None:
    huge = 10**20
    v1 = post(running_apps, "v1", post_body(published_at=huge))
    assert v1.status_code == 201
    assert v1.json()["published_at"].startswith("1973-03-03")  # divided by 1000 until it fits
    for arm in V2_ARMS:
        v2 = post(running_apps, arm, post_body(published_at=huge))
        assert v2.status_code == 422, arm
        assert v2.json()["detail"][0]["type"] == "datetime_parsing"


def test_utc_is_rendered_as_offset_by_v1_and_as_z_by_v2(running_apps) -> None:
    body = post_body(published_at="2024-05-01T10:00:00+02:00")
    assert post(running_apps, "v1", body).json()["published_at"] == "2024-05-01T08:00:00+00:00"
    for arm in V2_ARMS:
        assert post(running_apps, arm, body).json()["published_at"] == "2024-05-01T08:00:00Z"


@pytest.mark.parametrize(
    ("app_name", "expected_error"),
    [
        ("v1", {"loc": ["body", "title"], "msg": "field required", "type": "value_error.missing"}),
        ("v2", {"loc": ["body", "title"], "msg": "Field required", "type": "missing"}),
        ("v2-latest", {"loc": ["body", "title"], "msg": "Field required", "type": "missing"}),
    ],
)
def test_missing_field_error_text_differs(running_apps, app_name: str, expected_error) -> None:
    body = post_body()
    del body["title"]
    response = post(running_apps, app_name, body)
    assert response.status_code == 422
    error = response.json()["detail"][0]
    assert {key: error[key] for key in ("loc", "msg", "type")} == expected_error


def test_integer_valued_float_strings_are_ints_for_v2_only(running_apps) -> None:
    """`10.0` is a valid int for Pydantic 2, not for Pydantic 1 (queries and path ids alike)."""
    v1 = running_apps["v1"].base_url
    assert httpx.get(f"{v1}/posts", params={"per_page": "10.0"}).status_code == 422
    assert httpx.get(f"{v1}/posts/1.0").status_code == 422
    for arm in V2_ARMS:
        v2 = running_apps[arm].base_url
        assert httpx.get(f"{v2}/posts", params={"per_page": "10.0"}).status_code == 200
        assert httpx.get(f"{v2}/posts/1.0").status_code in (200, 404)  # read as id 1


@pytest.mark.parametrize(
    "raw_value", ['"infinity"', '"-infinity"', "Infinity", "-Infinity", "1e400"]
)
def test_infinite_dates_are_refused_by_every_arm(running_apps, raw_value: str) -> None:
    """Pydantic 1 reads these as 9999-12-31 or 0001-01-01; commons.input_rules refuses them."""
    raw = f'{{"title": "t", "content": "c", "published_at": {raw_value}}}'
    for arm, app in running_apps.items():
        response = httpx.post(f"{app.base_url}/posts", content=raw,
                              headers={"content-type": "application/json"})  # fmt: skip
        assert response.status_code == 422, (arm, response.text)
        assert response.json()["detail"][0]["loc"] == ["body", "published_at"]


def test_false_as_a_date_is_the_epoch_for_v1_only(running_apps) -> None:
    v1 = post(running_apps, "v1", post_body(published_at=False))
    assert v1.status_code == 201 and v1.json()["published_at"] == "1970-01-01T00:00:00+00:00"
    for arm in V2_ARMS:
        assert post(running_apps, arm, post_body(published_at=False)).status_code == 422, arm


def test_zero_as_a_date_is_the_epoch_for_every_arm(running_apps) -> None:
    """A number is Unix time in both majors; 0 is 1970-01-01, as documented."""
    for arm in running_apps:
        response = post(running_apps, arm, post_body(published_at=0))
        assert response.status_code == 201, arm
        assert response.json()["published_at"].startswith("1970-01-01T00:00:00")


def test_underscores_in_an_id_are_read_as_digits_by_every_arm(running_apps) -> None:
    """Python's int() reads '2_0_2_9_0' as 20290, in both majors: documented, not refused."""
    for arm, app in running_apps.items():
        assert httpx.get(f"{app.base_url}/posts/2_0_2_9_0").json() == {
            "detail": "Post not found"}, arm  # fmt: skip


def test_full_width_digits_are_numbers_for_v1_only(running_apps) -> None:
    v1 = running_apps["v1"].base_url
    assert httpx.get(f"{v1}/posts", params={"per_page": "１０"}).status_code == 200
    assert httpx.get(f"{v1}/posts/１２").status_code == 404  # read as id 12, not found
    for arm in V2_ARMS:
        v2 = running_apps[arm].base_url
        assert httpx.get(f"{v2}/posts", params={"per_page": "１０"}).status_code == 422, arm
        assert httpx.get(f"{v2}/posts/１２").status_code == 422, arm
