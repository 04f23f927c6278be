"""The latency mode's arms: each served inside the garbage-collection probe
(commons/probes/gc_pauses.py), and read between windows (its collections, its CPU)."""

from pathlib import Path
from typing import Any

import httpx
import psutil

from commons.probes.gc_pauses import PAUSES_PATH
from loadtest.lab.apps import RunningApp, start_app, uvicorn_arguments
from loadtest.lab.arms import ARMS, arm_python
from loadtest.lab.database import LabDatabase
from loadtest.lab.errors import LabError
from loadtest.lab.http import http_client
from loadtest.lab.pinning import PinningPlan
from loadtest.modes.latency.settings import LatencySettings

GC_PROBE = "commons.probes.gc_pauses:app"


def start_probed_arm(
    settings: LatencySettings,
    arm: str,
    database: LabDatabase,
    pinning: PinningPlan,
    log_dir: Path,
    environment: dict[str, str],
) -> RunningApp:
    """A fresh process of the arm, its app served through the probe, answering /health."""
    port = settings.ports[arm]
    arguments = uvicorn_arguments(arm, port, settings.workers)
    command = [str(arm_python(arm)), "-m", "uvicorn", GC_PROBE, *arguments[1:]]
    return start_app(
        arm,
        port=port,
        workers=settings.workers,
        database_url=database.url,
        cpus=pinning.app_cpus if pinning.enabled else None,
        log_path=log_dir / f"{ARMS[arm].environment}.log",
        environment={**environment, "LAB_GC_APP": ARMS[arm].module},
        command=command,
    )


class ArmReader:
    """What is read of a running arm around each window: its collections so far (through the
    probe's loopback route) and its CPU seconds."""

    def __init__(self, app: RunningApp) -> None:
        self.app = app
        self.client = http_client(base_url=app.base_url, timeout=10)
        assert app.pid is not None, "the latency mode runs local arms"
        self.process = psutil.Process(app.pid)

    def close(self) -> None:
        self.client.close()

    def collections(self) -> list[dict[str, Any]]:
        try:
            response = self.client.get(PAUSES_PATH)
            response.raise_for_status()
            generations: list[dict[str, Any]] = response.json()["generations"]
        except (httpx.HTTPError, ValueError, KeyError) as error:
            raise LabError(f"{self.app.name}'s collection counts did not answer: {error}") from None
        return generations

    def cpu_s(self) -> float:
        times = self.process.cpu_times()
        return times.user + times.system


def collections_between(
    before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> dict[str, list[float]]:
    """Per generation, the collections that ran between two readings, their pauses and the
    longest of them (ms; the probe counts the longest from one reading to the next)."""
    return {
        "collections": [
            late["collections"] - early["collections"]
            for early, late in zip(before, after, strict=True)
        ],
        "pause_ms": [
            round((late["pause_s"] - early["pause_s"]) * 1000, 3)
            for early, late in zip(before, after, strict=True)
        ],
        "longest_ms": [round(late["longest_s"] * 1000, 3) for late in after],
    }
