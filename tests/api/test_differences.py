"""Where Pydantic 1 and 2 legitimately differ, pin each app's actual behaviour.

The behaviour-differences table (docs/api.md) lists the same cases; for `published_at` a test
checks that its rows and DATE_DIFFERENCES show the same inputs. The arms that run app_v1's
code (v1 on Pydantic 1.10, v1-shim on Pydantic 2's pydantic.v1) must behave alike, and so must
the arms that run app_v2's (v2, and v2-latest on the latest FastAPI).
"""

import json
import re
from dataclasses import dataclass
from itertools import dropwhile, takewhile

import httpx
import pytest

from commons.arms import ARMS
from tests import loopback
from tests.app_processes import REPOSITORY_ROOT, RunningApp
from tests.factories import post_body

V1_ARMS = tuple(name for name, arm in ARMS.items() if arm.package == "app_v1")
V2_ARMS = tuple(name for name, arm in ARMS.items() if arm.package == "app_v2")
# FastAPI validates path and query parameters with the Pydantic that is installed, whatever the
# models import: on v1-shim (Pydantic 2 installed, app_v1's pydantic.v1 models) parameters
# follow Pydantic 2, bodies and responses Pydantic 1 (tests/api/test_v1_shim.py).
PARAMETERS_ON_PYDANTIC_1 = ("v1",)
MISSING_V1 = "value_error.missing"
PARAMETERS_ON_PYDANTIC_2 = tuple(name for name in ARMS if name not in PARAMETERS_ON_PYDANTIC_1)
API_DOC = REPOSITORY_ROOT / "docs" / "api.md"
SHOWN_DATE = re.compile(r'`"published_at": ([^`]+)`')


def post(running_apps: dict[str, RunningApp], app_name: str, body: object) -> httpx.Response:
    return loopback.post(f"{running_apps[app_name].base_url}/posts", json=body)


@dataclass(frozen=True)
class DateDifference:
    """A `published_at` that one major reads and the other refuses, and what each answers: the
    stored moment as its arms write it, or None for a 422 at published_at."""

    published_at: object
    v1: str | None
    v2: str | None

    def __str__(self) -> str:  # the test's id, and the input as docs/api.md's table shows it
        return f'"published_at": {json.dumps(self.published_at)}'


# Every row of docs/api.md's differences table about published_at, one entry per input it shows:
# test_every_date_difference_has_a_row_in_the_table holds the two together.
DATE_DIFFERENCES = [
    DateDifference("2024-01-01", v1=None, v2="2024-01-01T00:00:00Z"),
    DateDifference("2024-01-01_10:00:00Z", v1=None, v2="2024-01-01T10:00:00Z"),
    DateDifference("2024-01-01t10:00:00z", v1=None, v2="2024-01-01T10:00:00Z"),
    DateDifference("2024-01-01T10:00:00z", v1=None, v2="2024-01-01T10:00:00Z"),
    DateDifference("2024-01-01t10:00:00Z", v1=None, v2="2024-01-01T10:00:00Z"),
    DateDifference("2024-01-01T10:00:00,5Z", v1=None, v2="2024-01-01T10:00:00.500000Z"),
    DateDifference("2024-01-01T10:00:00.1234567890123Z", v1=None, v2="2024-01-01T10:00:00.123456Z"),
    DateDifference(True, v1="1970-01-01T00:00:01+00:00", v2=None),
    DateDifference(False, v1="1970-01-01T00:00:00+00:00", v2=None),
    DateDifference("2024-1-2T10:00:00Z", v1="2024-01-02T10:00:00+00:00", v2=None),
    DateDifference("2024-01-01T1:2:3Z", v1="2024-01-01T01:02:03+00:00", v2=None),
    DateDifference("2024-01-01T10:00:00+05", v1="2024-01-01T05:00:00+00:00", v2=None),
    DateDifference("2024-01-01T10:00:00+05:99", v1="2024-01-01T03:21:00+00:00", v2=None),
    DateDifference("2024-01-01T10:00:00Z\n", v1="2024-01-01T10:00:00+00:00", v2=None),
]


@pytest.mark.parametrize("difference", DATE_DIFFERENCES, ids=str)
def test_dates_that_one_major_reads(running_apps, difference: DateDifference) -> None:
    """POST and PUT read a body alike. Pydantic 1's refusals are value_error.datetime; Pydantic
    2's types vary with the input."""
    answers = {**dict.fromkeys(V1_ARMS, difference.v1), **dict.fromkeys(V2_ARMS, difference.v2)}
    body = post_body(published_at=difference.published_at)
    for arm, expected in answers.items():
        base_url = running_apps[arm].base_url
        existing = loopback.post(f"{base_url}/posts", json=post_body()).json()["id"]
        for response, success in (
            (loopback.post(f"{base_url}/posts", json=body), 201),
            (loopback.put(f"{base_url}/posts/{existing}", json=body), 200),
        ):
            if expected is None:
                assert response.status_code == 422, (arm, response.request, response.text)
                error = response.json()["detail"][0]
                assert error["loc"] == ["body", "published_at"], (arm, response.request)
                if arm in V1_ARMS:
                    assert error["type"] == "value_error.datetime", (arm, response.request)
            else:
                assert response.status_code == success, (arm, response.request, response.text)
                assert response.json()["published_at"] == expected, (arm, response.request)


def differences_table_first_cells() -> list[str]:
    """The first cell of each row of docs/api.md's behaviour-differences table."""
    section = API_DOC.read_text().split("## Pydantic v1 vs v2: behaviour differences")[1]
    lines = section.splitlines()
    table = takewhile(is_table_row, dropwhile(lambda line: not is_table_row(line), lines))
    return [row.split(" | ")[0] for row in table]


def is_table_row(line: str) -> bool:
    return line.startswith("|")


def test_every_date_difference_has_a_row_in_the_table() -> None:
    """A pinned difference missing from the table, or a row whose input is pinned nowhere, fails:
    a row about published_at shows its inputs as `"published_at": <JSON>`."""
    date_rows = [cell for cell in differences_table_first_cells() if "published_at" in cell]
    assert [cell for cell in date_rows if not SHOWN_DATE.search(cell)] == [], "rows with no input"
    shown = {
        f'"published_at": {json.dumps(json.loads(value))}'
        for cell in date_rows
        for value in SHOWN_DATE.findall(cell)
    }
    pinned = {str(difference) for difference in DATE_DIFFERENCES}
    assert sorted(pinned - shown) == [], "pinned here, but no row of docs/api.md's table shows it"
    assert sorted(shown - pinned) == [], "in docs/api.md's table, but pinned by no DateDifference"


def test_twelve_fractional_digits_are_read_by_every_arm(running_apps) -> None:
    """Pydantic 1's most (the table's 13 are one too many); both read past the 6th and round
    nothing."""
    for arm in running_apps:
        response = post(
            running_apps, arm, post_body(published_at="2024-01-01T10:00:00.123456789012Z")
        )
        assert response.status_code == 201, (arm, response.text)
        utc = "+00:00" if arm in V1_ARMS else "Z"
        assert response.json()["published_at"] == f"2024-01-01T10:00:00.123456{utc}", arm


@pytest.mark.parametrize(
    ("published_at", "moment"),
    [
        ("2024-01-01T10:00:00+0530", "2024-01-01T04:30:00"),  # an offset without its colon
        ("2024-01-01T10:00:00-00:00", "2024-01-01T10:00:00"),
        ("2024-01-01 10:00:00Z", "2024-01-01T10:00:00"),  # a space for the T
        (" 2024-01-01T10:00:00Z", None),
        ("2024-01-01T10:00:00Z ", None),
        ("2024-01-01T10:00:00Z\t", None),
        ("2024-01-01T10:00:00Z\r\n", None),  # only "\n" is a difference (DATE_DIFFERENCES)
        ("2024-01-01T10:00:00 Z", None),
    ],
)
def test_dates_next_to_the_differences_answer_alike_in_every_arm(
    running_apps, published_at: str, moment: str | None
) -> None:
    """Spellings close to DATE_DIFFERENCES' that both majors read, or both refuse (None: a 422
    at published_at), as docs/api.md says below the table."""
    for arm in running_apps:
        response = post(running_apps, arm, post_body(published_at=published_at))
        if moment is None:
            assert response.status_code == 422, (arm, response.text)
            assert response.json()["detail"][0]["loc"] == ["body", "published_at"], arm
        else:
            assert response.status_code == 201, (arm, response.text)
            stored = response.json()["published_at"]
            assert stored.removesuffix("Z").removesuffix("+00:00") == moment, arm


def test_utc_is_rendered_as_offset_by_v1_and_as_z_by_v2(running_apps) -> None:
    body = post_body(published_at="2024-05-01T10:00:00+02:00")
    for arm in V1_ARMS:
        assert post(running_apps, arm, body).json()["published_at"] == "2024-05-01T08:00:00+00:00"
    for arm in V2_ARMS:
        assert post(running_apps, arm, body).json()["published_at"] == "2024-05-01T08:00:00Z"


@pytest.mark.parametrize(
    ("app_name", "expected_error"),
    [
        *(
            (
                arm,
                {"loc": ["body", "title"], "msg": "field required", "type": "value_error.missing"},
            )
            for arm in V1_ARMS
        ),
        *(
            (arm, {"loc": ["body", "title"], "msg": "Field required", "type": "missing"})
            for arm in V2_ARMS
        ),
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
    for arm in PARAMETERS_ON_PYDANTIC_1:
        v1 = running_apps[arm].base_url
        assert loopback.get(f"{v1}/posts", params={"per_page": "10.0"}).status_code == 422, arm
        assert loopback.get(f"{v1}/posts/1.0").status_code == 422, arm
    for arm in PARAMETERS_ON_PYDANTIC_2:
        v2 = running_apps[arm].base_url
        assert loopback.get(f"{v2}/posts", params={"per_page": "10.0"}).status_code == 200, arm
        assert loopback.get(f"{v2}/posts/1.0").status_code in (200, 404), arm  # read as id 1


@pytest.mark.parametrize(
    "raw_value", ['"infinity"', '"-infinity"', "Infinity", "-Infinity", "1e400"]
)
def test_infinite_dates_are_refused_by_every_arm(running_apps, raw_value: str) -> None:
    """Pydantic 1 read these as 9999-12-31 or 0001-01-01; commons.input_rules refuses them."""
    raw = f'{{"title": "t", "content": "c", "published_at": {raw_value}}}'
    for arm, app in running_apps.items():
        response = loopback.post(
            f"{app.base_url}/posts", content=raw, headers={"content-type": "application/json"}
        )
        assert response.status_code == 422, (arm, response.text)
        assert response.json()["detail"][0]["loc"] == ["body", "published_at"]


def test_zero_as_a_date_is_the_epoch_for_every_arm(running_apps) -> None:
    """A number is Unix time in both majors; 0 is 1970-01-01, as documented."""
    for arm in running_apps:
        response = post(running_apps, arm, post_body(published_at=0))
        assert response.status_code == 201, arm
        assert response.json()["published_at"].startswith("1970-01-01T00:00:00")


@pytest.mark.parametrize(
    ("published_at", "moment"),
    [
        (253402300799, "9999-12-31T23:59:59"),  # was 1978-01-11: read as milliseconds
        (-62135596800, "0001-01-01T00:00:00"),  # was 1968-01-12
        (20000000001, "2603-10-11T11:33:21"),  # just past Pydantic's 2e10 watershed
        (-20000000001, "1336-03-23T12:26:39"),
        (253402300799.5, "9999-12-31T23:59:59.500000"),
        ("253402300799", "9999-12-31T23:59:59"),  # plain numeric text reads the same
        ("-62135596800", "0001-01-01T00:00:00"),
        ("1700000000.25", "2023-11-14T22:13:20.250000"),
        (1.5, "1970-01-01T00:00:01.500000"),
    ],
)
def test_numbers_as_dates_are_unix_seconds_in_every_arm(running_apps, published_at, moment) -> None:
    """One unit, seconds, over the whole datetime range: never milliseconds (both majors used to
    read a number above 2e10 as milliseconds)."""
    for arm in running_apps:
        response = post(running_apps, arm, post_body(published_at=published_at))
        assert response.status_code == 201, (arm, response.text)
        stored = response.json()["published_at"]
        assert stored.removesuffix("Z").removesuffix("+00:00") == moment, arm


@pytest.mark.parametrize(
    "published_at",
    [
        253402300800,
        -62135596801,
        10**20,
        -(10**20),
        "253402300800",
        253402300799.9999999,
        "1e3",
        " 12",
        "1_000",
        "nan",
        "inf",
        "0x10",
    ],
)
def test_numbers_beyond_the_datetime_range_or_oddly_spelled_are_refused_by_every_arm(
    running_apps, published_at
) -> None:
    """Past 9999-12-31T23:59:59.999999 or before 0001-01-01 in seconds, and numeric text that is
    not plain digits (Pydantic 1 read "1e3" as 1000 s), are a 422 at published_at."""
    for arm in running_apps:
        response = post(running_apps, arm, post_body(published_at=published_at))
        assert response.status_code == 422, (arm, response.text)
        assert response.json()["detail"][0]["loc"] == ["body", "published_at"], arm


@pytest.mark.parametrize("raw_value", ["NaN", "1e400", "true", "false", "123", "1.5", "-0"])
@pytest.mark.parametrize("field", ["title", "content"])
def test_text_fields_refuse_other_json_in_every_arm(running_apps, raw_value, field) -> None:
    """Pydantic 1 stored JSON NaN, 1e400 and true as the text "nan", "inf" and "True"; its
    StrictStr (Pydantic 2's str) refuses anything but a JSON string."""
    body = post_body(**{field: "PLACEHOLDER"})
    raw = json.dumps(body).replace('"PLACEHOLDER"', raw_value)
    for arm, app in running_apps.items():
        response = loopback.post(
            f"{app.base_url}/posts", content=raw, headers={"content-type": "application/json"}
        )
        assert response.status_code == 422, (arm, response.text)
        [error] = response.json()["detail"]
        assert error["loc"] == ["body", field], arm
        assert error["type"] == ("type_error.str" if arm in V1_ARMS else "string_type"), arm


def test_underscores_in_an_id_are_read_as_digits_by_every_arm(running_apps) -> None:
    """Python's int() reads '2_0_2_9_0' as 20290, in both majors: documented, not refused."""
    for arm, app in running_apps.items():
        assert loopback.get(f"{app.base_url}/posts/2_0_2_9_0").json() == {
            "detail": "Post not found"
        }, arm


def test_ascii_spaces_around_an_integer_are_read_by_every_arm(running_apps) -> None:
    """Both majors strip ASCII white space around an integer; other spaces are a 422 (below)."""
    for arm, app in running_apps.items():
        response = loopback.get(f"{app.base_url}/posts_synthetic", params={"per_page": " 3\t"})
        assert len(response.json()["posts"]) == 3, arm


@pytest.mark.parametrize(
    ("path", "params", "location"),
    [
        ("/posts/%D9%A1", {}, ["path", "post_id"]),  # Arabic-Indic 1: v1 deleted post 1
        ("/posts/１２", {}, ["path", "post_id"]),  # full-width 12
        ("/posts/1%C2%A0", {}, ["path", "post_id"]),  # a no-break space after the 1
        ("/posts", {"per_page": "١٠"}, ["query", "per_page"]),
        ("/posts", {"per_page": "１０"}, ["query", "per_page"]),
        ("/posts", {"page": "٣"}, ["query", "page"]),
        ("/posts_synthetic", {"per_page": "５"}, ["query", "per_page"]),
    ],
)
def test_integers_in_other_digits_are_refused_by_every_arm(
    running_apps, path: str, params: dict[str, str], location: list[str]
) -> None:
    """Pydantic 1 reads integers with int(), which takes any Unicode digit; every arm now reads
    ASCII digits only (commons.routes.AsciiIntegersRoute), as Pydantic 2 does."""
    for arm, app in running_apps.items():
        created = loopback.post(f"{app.base_url}/posts", json=post_body()).json()["id"]
        for method in ("GET", "DELETE") if path.startswith("/posts/") else ("GET",):
            response = loopback.request(method, f"{app.base_url}{path}", params=params)
            assert response.status_code == 422, (arm, method, response.text)
            assert response.json()["detail"][0]["loc"] == location, arm
        assert loopback.get(f"{app.base_url}/posts/{created}").status_code == 200, arm


@pytest.mark.parametrize(
    "published_at", ["١٧٠٠٠٠٠٠٠٠", "٢٠٢٤-٠١-٠١T٠٠:٠٠:٠٠Z", "２０２４-01-01T00:00:00Z"]
)
def test_dates_in_other_digits_are_refused_by_every_arm(running_apps, published_at: str) -> None:
    """Pydantic 1 read Arabic-Indic digits in a date (and as Unix time); commons.input_rules
    refuses any non-ASCII date, as Pydantic 2 does."""
    for arm in running_apps:
        response = post(running_apps, arm, post_body(published_at=published_at))
        assert response.status_code == 422, (arm, response.text)
        assert response.json()["detail"][0]["loc"] == ["body", "published_at"], arm
