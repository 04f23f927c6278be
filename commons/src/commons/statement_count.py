"""Statements per request, counted rather than inferred: every SQL statement the app's engines
send (SQLAlchemy's `before_cursor_execute` event, on the sync engine and the async one's) and
every database session a request opens (commons/database.py's `get_db`, commons/
async_database.py's `get_async_db`), read together at GET /statements. The harness reads them
before and after a scenario, while the arm is idle, and divides (docs/related-rows.md); the
embedded PostgreSQL has no pg_stat_statements to ask instead.

/health's own probe is left out (it runs with UNCOUNTED), and so is what the pool does by
itself: its ping and the rollback on return go to the driver, not through a cursor event."""

import os
import threading
from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy import Engine, event

# Execution options of a connection whose statements are not a request's (/health's probe).
UNCOUNTED = {"lab_uncounted": True}


class StatementCount:
    """Totals since the process started; a lock, because requests run on the thread pool (a
    bare `+=` can lose a count there)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.statements = 0
        self.sessions = 0

    def count_statement(self, connection: Any, *_cursor_statement_and_parameters: Any) -> None:
        if connection.get_execution_options().get("lab_uncounted"):
            return
        with self.lock:
            self.statements += 1

    def count_session(self) -> None:
        with self.lock:
            self.sessions += 1

    def reading(self) -> dict[str, int]:
        with self.lock:
            return {"statements": self.statements, "sessions": self.sessions, "pid": os.getpid()}


def count_statements(*engines: Engine) -> StatementCount:
    """One count over the engines (the sync one, and the async one's sync_engine)."""
    count = StatementCount()
    for engine in engines:
        event.listen(engine, "before_cursor_execute", count.count_statement)
    return count


def build_statements_router() -> APIRouter:
    router = APIRouter(tags=["health"])

    @router.get("/statements")
    async def read_statement_count(request: Request) -> dict[str, int]:
        """SQL statements this process has sent to the database and database sessions its
        requests opened, since it started (and its pid: each uvicorn worker counts its own).
        Statements per request is the difference of two readings over the difference of
        sessions. /health's own probe is not counted."""
        reading: dict[str, int] = request.app.state.statement_count.reading()
        return reading

    return router
