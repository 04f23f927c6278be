"""Size limits: a body over MAX_BODY_BYTES is a 413 before it is read whole; titles and
contents are bounded in the schema (visible in OpenAPI) with a 422 beyond."""

import httpx

from commons.input_rules import CONTENT_MAX_LENGTH, TITLE_MAX_LENGTH
from tests.app_processes import RunningApp
from tests.factories import post_body

LIMIT = 1024 * 1024  # the default MAX_BODY_BYTES


def test_a_declared_body_over_the_limit_is_413_and_stores_nothing(client: httpx.Client) -> None:
    body = post_body(content="A" * (LIMIT + 1))
    response = client.post("/posts", json=body)
    assert response.status_code == 413
    assert "MAX_BODY_BYTES" in response.json()["detail"]
    assert client.get("/posts").json()["posts"] == []
    assert client.put("/posts/1", json=body).status_code == 413


def test_a_chunked_body_over_the_limit_is_413(client: httpx.Client) -> None:
    def chunks():
        yield b'{"title": "t", "published_at": "2024-01-01T00:00:00Z", "content": "'
        for _ in range(40):
            yield b"A" * 65_536  # 2.5 MiB in all, with no Content-Length
        yield b'"}'

    response = client.post("/posts", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert client.get("/posts").json()["posts"] == []


def test_a_body_just_under_the_limit_is_read(client: httpx.Client) -> None:
    # Under the byte limit but over the schema's: the body is read and validated (422).
    response = client.post("/posts", json=post_body(content="A" * (LIMIT - 1000)))
    assert response.status_code == 422


def test_titles_and_contents_are_bounded_by_the_schema(client: httpx.Client) -> None:
    assert client.post("/posts", json=post_body(title="T" * TITLE_MAX_LENGTH)).status_code == 201
    too_long = client.post("/posts", json=post_body(title="T" * (TITLE_MAX_LENGTH + 1)))
    assert too_long.status_code == 422
    assert too_long.json()["detail"][0]["loc"] == ["body", "title"]
    long_content = post_body(content="C" * (CONTENT_MAX_LENGTH + 1))
    assert client.post("/posts", json=long_content).json()["detail"][0]["loc"] == [
        "body",
        "content",
    ]


def test_openapi_states_the_bounds_and_the_413(app: RunningApp, client: httpx.Client) -> None:
    document = client.get("/openapi.json").json()
    post_in = document["components"]["schemas"]["PostIn"]["properties"]
    assert post_in["title"]["maxLength"] == TITLE_MAX_LENGTH
    assert post_in["content"]["maxLength"] == CONTENT_MAX_LENGTH
    assert "413" in document["paths"]["/posts"]["post"]["responses"]
    assert "413" in document["paths"]["/posts/{post_id}"]["put"]["responses"]
