"""The runner's own HTTP requests (health polls, verification, statement counts): clients that
share one TLS context, made once per process. httpx makes a context per client, loading the CA
bundle each time: 25-80 ms of CPU, on the load generator's CPU, a few dozen times a run."""

import functools
import ssl
from typing import Any

import httpx


@functools.cache
def tls_context() -> ssl.SSLContext:
    """What httpx would make for each client (certifi's bundle, or SSL_CERT_FILE/_DIR)."""
    return httpx.create_ssl_context()


def http_client(**options: Any) -> httpx.Client:
    """httpx.Client(**options) on the shared TLS context."""
    return httpx.Client(verify=tls_context(), **options)


def http_get(url: str, timeout: float = 5.0) -> httpx.Response:
    """httpx.get(url, timeout=timeout) on the shared TLS context."""
    with http_client(timeout=timeout) as client:
        return client.get(url)
