"""Statements per request (commons/statement_count.py): an arm's GET /statements read before
and after a scenario, while the arm is idle, so no request is counted by halves; what it sent
over the requests that opened a database session in between. Reading at the windows' edges
instead would put requests of the harness's own into the measured windows.

An arm without the route (a compare file's service) has no count, and neither has one whose
two readings came from different processes (uvicorn workers count apart)."""

from dataclasses import dataclass

import httpx

from loadtest.lab.http import http_get

STATEMENTS_PATH = "/statements"
TIMEOUT_S = 5.0


@dataclass(frozen=True)
class StatementReading:
    statements: int
    sessions: int
    pid: int


@dataclass(frozen=True)
class StatementCount:
    """What an arm sent between two readings: statements, over sessions opened."""

    statements: int
    sessions: int


def read_statements(base_url: str) -> StatementReading | None:
    try:
        response = http_get(base_url + STATEMENTS_PATH, timeout=TIMEOUT_S)
        body = response.json() if response.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return None
    try:
        return StatementReading(int(body["statements"]), int(body["sessions"]), int(body["pid"]))
    except (TypeError, KeyError, ValueError):
        return None


def statements_between(
    before: StatementReading | None, after: StatementReading | None
) -> StatementCount | None:
    if before is None or after is None or before.pid != after.pid:
        return None
    return StatementCount(after.statements - before.statements, after.sessions - before.sessions)


def per_request(counts: list[StatementCount]) -> float | None:
    """Statements per request that opened a session, over every count; None without one."""
    sessions = sum(count.sessions for count in counts)
    if sessions <= 0:
        return None
    return sum(count.statements for count in counts) / sessions
