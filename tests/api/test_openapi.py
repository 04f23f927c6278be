"""Every arm publishes the same API: paths, methods, parameters and status codes."""

from typing import Any

from commons.ladder import LADDER_PREFIX, RUNG_NAMES
from tests import loopback
from tests.app_processes import RunningApp


def describe_operations(openapi: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """What a client relies on, leaving out JSON Schema details that differ by Pydantic major."""
    operations = {}
    for path, methods in openapi["paths"].items():
        for method, operation in methods.items():
            operations[(method.upper(), path)] = {
                "parameters": sorted(
                    (parameter["name"], parameter["in"], parameter.get("required", False))
                    for parameter in operation.get("parameters", [])
                ),
                "has_body": "requestBody" in operation,
                "status_codes": sorted(operation["responses"]),
                "summary": operation.get("summary"),
            }
    return operations


def test_openapi_documents_describe_the_same_api(running_apps: dict[str, RunningApp]) -> None:
    documents = {
        name: loopback.get(f"{app.base_url}/openapi.json").json()
        for name, app in running_apps.items()
    }
    v1_operations = describe_operations(documents["v1"])
    for name, document in documents.items():
        assert describe_operations(document) == v1_operations, name
    assert set(v1_operations) == {
        ("GET", "/posts"),
        ("POST", "/posts"),
        ("GET", "/posts_synthetic"),
        ("GET", "/posts/{post_id}"),
        ("PUT", "/posts/{post_id}"),
        ("DELETE", "/posts/{post_id}"),
        ("GET", "/health"),
        ("POST", "/posts_bulk"),
        ("GET", "/payloads/flat"),
        ("GET", "/payloads/nested"),
        ("POST", "/payloads/validate"),
        ("GET", "/posts_related/eager"),
        ("GET", "/posts_related/lazy"),
        ("GET", "/statements"),
        ("GET", "/async/posts"),
        ("POST", "/async/posts"),
        ("GET", "/async/posts/{post_id}"),
        ("GET", "/async/posts_synthetic"),
        ("GET", "/async/posts_related/eager"),
    } | {("GET", f"{LADDER_PREFIX}/{rung}") for rung in RUNG_NAMES}
    # 503: every operation that uses the database answers it after DATABASE_TIMEOUT_SECONDS.
    assert v1_operations[("GET", "/posts")]["status_codes"] == ["200", "422", "503"]
    assert v1_operations[("GET", "/posts_synthetic")]["status_codes"] == ["200", "422"]
    for loading in ("eager", "lazy"):
        assert v1_operations[("GET", f"/posts_related/{loading}")]["status_codes"] == [
            "200",
            "422",
            "503",
        ]
    assert v1_operations[("GET", "/posts/{post_id}")]["status_codes"] == [
        "200",
        "404",
        "422",
        "503",
    ]
    assert v1_operations[("POST", "/posts")]["status_codes"] == ["201", "413", "422", "503"]
    assert v1_operations[("PUT", "/posts/{post_id}")]["status_codes"] == [
        "200",
        "404",
        "413",
        "422",
        "503",
    ]
    assert v1_operations[("DELETE", "/posts/{post_id}")]["status_codes"] == [
        "204",
        "404",
        "422",
        "503",
    ]
    assert v1_operations[("GET", "/health")]["status_codes"] == ["200", "503"]
    assert v1_operations[("POST", "/posts_bulk")]["status_codes"] == ["201", "413", "422", "503"]
    assert v1_operations[("POST", "/payloads/validate")]["status_codes"] == ["200", "413", "422"]
    for shape in ("flat", "nested"):  # no database: no 503
        assert v1_operations[("GET", f"/payloads/{shape}")]["status_codes"] == ["200", "422"]
    for rung in RUNG_NAMES:  # no parameters, no database: nothing else to answer
        assert v1_operations[("GET", f"{LADDER_PREFIX}/{rung}")]["status_codes"] == ["200"]


def test_every_ladder_rung_documents_the_post_list(running_apps: dict[str, RunningApp]) -> None:
    for name, app in running_apps.items():
        document = loopback.get(f"{app.base_url}/openapi.json").json()
        for rung in RUNG_NAMES:
            operation = document["paths"][f"{LADDER_PREFIX}/{rung}"]["get"]
            assert operation["tags"] == ["ladder"], (name, rung)
            content = operation["responses"]["200"]["content"]
            assert content["application/json"]["schema"] == {
                "$ref": "#/components/schemas/PostsOut"
            }, (name, rung)


def test_openapi_bounds_match_the_contract(running_apps: dict[str, RunningApp]) -> None:
    for app in running_apps.values():
        operation = loopback.get(f"{app.base_url}/openapi.json").json()["paths"]["/posts"]["get"]
        schemas = {parameter["name"]: parameter["schema"] for parameter in operation["parameters"]}
        assert (schemas["per_page"]["minimum"], schemas["per_page"]["maximum"]) == (1, 1000)
        assert (schemas["page"]["minimum"], schemas["page"]["maximum"]) == (0, 1_000_000)


def test_405_names_every_method_the_path_has(running_apps: dict[str, RunningApp]) -> None:
    for arm, app in running_apps.items():
        listing = loopback.request("OPTIONS", f"{app.base_url}/posts")
        assert listing.status_code == 405, arm
        assert listing.headers["allow"] == "GET, POST", arm
        one = loopback.request("PATCH", f"{app.base_url}/posts/1")
        assert (one.status_code, one.headers["allow"]) == (405, "DELETE, GET, PUT"), arm


def test_openapi_says_what_text_is_refused(running_apps: dict[str, RunningApp]) -> None:
    for arm, app in running_apps.items():
        schemas = loopback.get(f"{app.base_url}/openapi.json").json()["components"]["schemas"]
        for field in ("title", "content"):
            description = schemas["PostIn"]["properties"][field]["description"]
            assert "no NUL (\\u0000) characters and no lone surrogates" in description, arm
