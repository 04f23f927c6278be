"""Test-only HTTP to the apps on 127.0.0.1, as httpx's functions and Client, on one TLS context.

httpx makes a TLS context for every client (and for every httpx.get), reading and parsing the
CA bundle each time: 25 to 80 ms of CPU on these machines, and the suite makes one a test."""

from typing import Any

import httpx

TLS_CONTEXT = httpx.create_ssl_context()
DEFAULT_TIMEOUT_S = 5.0  # httpx's own


def client(**options: Any) -> httpx.Client:
    return httpx.Client(verify=TLS_CONTEXT, **options)


def request(method: str, url: str, **options: Any) -> httpx.Response:
    with client(timeout=options.pop("timeout", DEFAULT_TIMEOUT_S)) as session:
        return session.request(method, url, **options)


def get(url: str, **options: Any) -> httpx.Response:
    return request("GET", url, **options)


def post(url: str, **options: Any) -> httpx.Response:
    return request("POST", url, **options)


def put(url: str, **options: Any) -> httpx.Response:
    return request("PUT", url, **options)
