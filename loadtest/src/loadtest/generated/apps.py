"""What every mode that runs a generated app needs: its bytecode written, its answers in one
spelling, and its own error read from its log."""

import subprocess
import time
from pathlib import Path
from typing import Any

from loadtest.lab.errors import LabError

TRACEBACK = "Traceback (most recent call last):"


def compile_app(folder: Path, python: Path) -> None:
    """Write the app's bytecode (compileall writes it even under PYTHONDONTWRITEBYTECODE)."""
    result = subprocess.run(
        [str(python), "-m", "compileall", "-q", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        lines = (result.stdout + result.stderr).strip().splitlines() or ["no output"]
        raise LabError(f"cannot compile the generated app in {folder}: {lines[-1]}")


def normalised(value: Any) -> Any:
    """JSON with UTC written one way: Pydantic 1 writes `+00:00`, Pydantic 2 `Z`."""
    if isinstance(value, dict):
        return {key: normalised(item) for key, item in value.items()}
    if isinstance(value, list):
        return [normalised(item) for item in value]
    if isinstance(value, str) and value.endswith("Z") and "T" in value:
        return value[:-1] + "+00:00"
    return value


def exception_line(log_path: Path, wait_s: float = 0.0) -> str:
    """The app's own error, from its log: the line that ends its last traceback (e.g.
    "RecursionError: maximum recursion depth exceeded"); `wait_s` for a traceback a running app
    is still writing (uvicorn logs it after the 500 has gone out)."""
    deadline = time.monotonic() + wait_s
    while True:
        text = log_path.read_text(errors="replace") if log_path.exists() else ""
        _, marker, after = text.rpartition(TRACEBACK)
        ending = [line for line in after.splitlines()[1:] if line and not line[0].isspace()]
        if marker and ending:
            return ending[0].strip()
        if time.monotonic() >= deadline:
            lines = text.strip().splitlines()
            return lines[-1].strip() if lines else "no output"
        time.sleep(0.05)
