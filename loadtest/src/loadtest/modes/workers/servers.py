"""How each server starts an app with N workers, and what that shares.

- `uvicorn`: `uvicorn --workers N` spawns N fresh interpreters (multiprocessing's spawn); each
  imports the app again, so nothing the app builds is shared between workers (the supervisor is
  a small process of its own). Preloading has no meaning there.
- `gunicorn`: gunicorn's master forks N workers, each of which then imports the app: as
  uvicorn's, except that the interpreter and what the master imported before forking (gunicorn
  itself) are shared.
- `gunicorn-preload`: the master imports the app (`--preload`), then forks: every worker starts
  with the master's pages, shared copy-on-write until written. Reference counting and the
  garbage collector write to objects, so pages come unshared as the workers run.
- `gunicorn-preload-freeze`: the same, with the `gc.freeze()` recipe around the fork
  (commons/probes/gunicorn_config.py): the collector off from the start, every object alive at
  the fork moved to the permanent generation, the collector on again in each child.

Every server serves commons/probes/workers.py, which wraps the app unchanged: it names the
worker that answered each request and writes each worker's ready time.
"""

from dataclasses import dataclass
from pathlib import Path

WRAPPER = "commons.probes.workers:app"
GUNICORN_CONFIG = "python:commons.probes.gunicorn_config"


@dataclass(frozen=True)
class Server:
    name: str
    summary: str
    preload: bool = False
    freeze: bool = False

    @property
    def gunicorn(self) -> bool:
        return self.name != "uvicorn"


SERVERS = {
    server.name: server
    for server in (
        Server("uvicorn", "uvicorn --workers N: spawns N interpreters, each imports the app"),
        Server("gunicorn", "gunicorn, uvicorn workers: forks N workers, each imports the app"),
        Server(
            "gunicorn-preload",
            "gunicorn --preload: imports the app once, then forks N workers that share its pages",
            preload=True,
        ),
        Server(
            "gunicorn-preload-freeze",
            "gunicorn --preload with gc.freeze() before the fork",
            preload=True,
            freeze=True,
        ),
    )
}
SERVER_NAMES = tuple(SERVERS)


def server_command(
    python: Path, server: Server, workers: int, port: int, bound_s: float, http: str
) -> list[str]:
    """The command line; the supervisors' own time limits are the bound, so a slow boot (8
    workers of a big v1 app on one CPU take over 30 s) is not taken for a hung worker."""
    timeout = str(max(int(bound_s), 1))
    if not server.gunicorn:
        return [
            str(python),
            "-m",
            "uvicorn",
            WRAPPER,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--http",
            http,
            "--timeout-worker-healthcheck",
            timeout,
            "--no-access-log",
            "--log-level",
            "warning",
        ]
    return [
        str(python),
        "-m",
        "gunicorn",
        "--config",
        GUNICORN_CONFIG,
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--timeout",
        timeout,
        "--graceful-timeout",
        "5",
        # uvicorn's own keep-alive (5 s; gunicorn's is 2): both servers hold a connection alike.
        "--keep-alive",
        "5",
        "--log-level",
        "warning",
        *(["--preload"] if server.preload else []),
        WRAPPER,
    ]


def server_environment(server: Server, app: str, ready_dir: Path, http: str) -> dict[str, str]:
    """What the wrapper and gunicorn's configuration read (commons/probes/)."""
    return {
        "LAB_WORKERS_APP": app,
        "LAB_WORKERS_READY_DIR": str(ready_dir),
        "LAB_WORKERS_HTTP": http,
        "LAB_WORKERS_GC_FREEZE": "1" if server.freeze else "0",
    }
