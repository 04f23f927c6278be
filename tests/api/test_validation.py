"""Bad input: every case is a 422 with field-level detail from every app, never a 5xx."""

import gzip
import json

import httpx
import pytest

from tests.factories import post_body


def assert_422_at(response: httpx.Response, *location: object) -> None:
    assert response.status_code == 422, response.text
    details = response.json()["detail"]
    assert any(tuple(error["loc"][: len(location)]) == location for error in details), details


BAD_PER_PAGE = ["0", "-1", "abc", "", "1001", "1.5"]
BAD_LIST_PARAMETERS = [
    *({"per_page": value} for value in BAD_PER_PAGE),
    {"page": "-1"},
    {"page": "1000001"},
    {"page": "9" * 40},
    {"order": "sideways"},
    {"order": "ASC"},
]


@pytest.mark.parametrize("params", BAD_LIST_PARAMETERS, ids=repr)
def test_bad_list_parameters_are_422(client: httpx.Client, params: dict[str, str]) -> None:
    [(field, _)] = params.items()
    assert_422_at(client.get("/posts", params=params), "query", field)


@pytest.mark.parametrize("per_page", BAD_PER_PAGE)
def test_bad_synthetic_per_page_is_422(client: httpx.Client, per_page: str) -> None:
    assert_422_at(
        client.get("/posts_synthetic", params={"per_page": per_page}), "query", "per_page"
    )


@pytest.mark.parametrize("post_id", ["abc", "1.5", "0x10", "%20"])
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_non_integer_ids_are_422(client: httpx.Client, method: str, post_id: str) -> None:
    body = post_body() if method == "PUT" else None
    assert_422_at(client.request(method, f"/posts/{post_id}", json=body), "path", "post_id")


@pytest.mark.parametrize("missing", ["title", "content", "published_at"])
def test_missing_fields_are_422(client: httpx.Client, missing: str) -> None:
    body = post_body()
    del body[missing]
    assert_422_at(client.post("/posts", json=body), "body", missing)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", None),
        ("title", ["a list"]),
        ("content", {"an": "object"}),
        ("published_at", "yesterday"),
        ("published_at", "2024-13-01T00:00:00Z"),
        ("published_at", "2024-02-30T00:00:00Z"),
        ("published_at", "10000-01-01T00:00:00Z"),
        ("published_at", None),
    ],
)
def test_mistyped_fields_are_422(client: httpx.Client, field: str, value: object) -> None:
    assert_422_at(client.post("/posts", json=post_body(**{field: value})), "body", field)


@pytest.mark.parametrize("published_at", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-05:00"])
def test_instants_outside_the_utc_range_are_422(client: httpx.Client, published_at: str) -> None:
    response = client.post("/posts", json=post_body(published_at=published_at))
    assert_422_at(response, "body", "published_at")


@pytest.mark.parametrize("field", ["title", "content"])
def test_nul_characters_are_422(client: httpx.Client, field: str) -> None:
    assert_422_at(client.post("/posts", json=post_body(**{field: "a\u0000b"})), "body", field)


@pytest.mark.parametrize("raw_body", [b"{not json", b'{"title": "a",}', b"", b"\xff\xfe"], ids=repr)
def test_invalid_json_is_422(client: httpx.Client, raw_body: bytes) -> None:
    response = client.post("/posts", content=raw_body, headers={"content-type": "application/json"})
    assert_422_at(response, "body")


@pytest.mark.parametrize("json_body", [[post_body()], "a string", 42, None], ids=repr)
def test_non_object_json_is_422(client: httpx.Client, json_body: object) -> None:
    assert_422_at(client.post("/posts", json=json_body), "body")


def test_bad_put_body_is_422_and_changes_nothing(client: httpx.Client) -> None:
    created = client.post("/posts", json=post_body(title="unchanged")).json()
    response = client.put(f"/posts/{created['id']}", json=post_body(published_at="never"))
    assert_422_at(response, "body", "published_at")
    assert client.get(f"/posts/{created['id']}").json() == created


def test_rejected_writes_store_nothing(client: httpx.Client) -> None:
    for bad_body in (post_body(title="a\u0000"), post_body(published_at="nope"), [1]):
        assert client.post("/posts", json=bad_body).status_code == 422
    assert client.get("/posts").json() == {"posts": []}


@pytest.mark.parametrize("field", ["title", "content"])
def test_lone_surrogates_are_422(client: httpx.Client, field: str) -> None:
    # Valid JSON (an escaped UTF-16 half), but not encodable as UTF-8 for PostgreSQL.
    body = post_body(**{field: "PLACEHOLDER"})
    raw = json.dumps(body).replace("PLACEHOLDER", "a\\ud800b").encode()
    response = client.post("/posts", content=raw, headers={"content-type": "application/json"})
    assert_422_at(response, "body", field)


def strict_json(text: str) -> object:
    """Parse as strict JSON: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_422_for_nan_is_strict_json(client: httpx.Client, constant: str) -> None:
    raw = f'{{"title": "t", "content": "c", "published_at": {constant}}}'
    response = client.post("/posts", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 422
    details = strict_json(response.text)["detail"]
    assert details[0]["loc"] == ["body", "published_at"]


@pytest.mark.parametrize(
    "body",
    [
        {"x": "A" * 500_000},  # every missing field echoes the whole body on Pydantic 2
        {f"key{number}": number for number in range(50_000)},
        post_body(title=["A" * 1000] * 500),
    ],
    ids=["long string", "many keys", "long list"],
)
def test_a_422_stays_small_and_keeps_the_field_detail(client: httpx.Client, body) -> None:
    response = client.post("/posts", json=body)
    assert response.status_code == 422
    assert len(response.content) < 20_000, len(response.content)
    for error in strict_json(response.text)["detail"]:
        assert {"loc", "msg", "type"} <= set(error)
        assert error["loc"][0] == "body"


@pytest.mark.parametrize(
    ("raw", "headers", "reason"),
    [
        (
            b'{"title": "\xff", "content": "c", "published_at": "2024-01-01T00:00:00Z"}',
            {},
            "not valid UTF-8",
        ),
        (b"[" * 100_000, {}, "nested too deeply"),
        (
            gzip.compress(json.dumps(post_body()).encode()),
            {"content-encoding": "gzip"},
            "Content-Encoding 'gzip' is not accepted",
        ),
    ],
    ids=["invalid UTF-8", "100k-deep", "gzip"],
)
def test_an_unreadable_body_is_a_422_that_says_why(client, raw: bytes, headers, reason) -> None:
    response = client.post(
        "/posts", content=raw, headers={"content-type": "application/json", **headers}
    )
    assert response.status_code == 422, response.text
    [error] = strict_json(response.text)["detail"]
    assert error["loc"] == ["body"] and error["type"] == "body_unreadable"
    assert reason in error["msg"]
    assert client.get("/posts/999999").status_code == 404  # other HTTP errors are untouched
