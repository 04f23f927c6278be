"""Debian's packages an option needs (wrk for --cross-check, httperf for --httperf): installed
when missing and this is possible (root, apt-get), or a one-line error saying how."""

import os
import shutil
import subprocess

from loadtest.lab.errors import LabError


def ensure_package(command: str, package: str, option: str) -> None:
    """`command` on the PATH, from Debian's `package` if it was missing; `option` is what needs
    it, as the user typed it."""
    if shutil.which(command) is not None:
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        raise LabError(
            f"{option} needs {command}, which is not installed; install it "
            f"(Debian/Ubuntu: apt-get install {package}) and retry"
        )
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for step in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", package]):
        try:
            done = subprocess.run(
                step, capture_output=True, text=True, timeout=600, env=environment
            )
        except subprocess.TimeoutExpired:
            raise LabError(f"{option}: `{' '.join(step)}` timed out") from None
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["?"])[-1]
            raise LabError(f"{option} needs {command} and `{' '.join(step)}` failed: {reason}")
