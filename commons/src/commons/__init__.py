"""Shared, Pydantic-free parts of the Pydantic v1 vs v2 lab."""

# What every arm is served with (`uvicorn ... --http HTTP_PROTOCOL`): uvicorn's httptools
# protocol with bounded request heads (commons/hardening/http_protocol.py). Named here, where the
# test suite's environment (which has no uvicorn) can read it too.
HTTP_PROTOCOL = "commons.hardening.http_protocol:BoundedHttpToolsProtocol"
