"""Cells and locust runs made by hand, for testing results and the report without load."""

from loadtest.benchmark import Cell
from loadtest.locust_runs import LocustRun
from loadtest.memory import MemoryReading

VERSIONS = {
    "v1": {"python": "3.11.7", "fastapi": "0.125.0", "pydantic": "1.10.27",
           "pydantic_compiled": True, "sqlalchemy": "2.1.9", "psycopg": "3.3.9"},
    "v2": {"python": "3.11.7", "fastapi": "0.125.0", "pydantic": "2.14.3",
           "pydantic_compiled": True, "sqlalchemy": "2.1.9", "psycopg": "3.3.9"},
}  # fmt: skip


def locust_run(
    rps: float, *, failures: int = 0, seconds: float = 10.0, cpu_warnings: int = 0,
    cpu_percent: float = 30.0, load_cpus_busy_percent: float | None = 50.0,
):  # fmt: skip
    requests = round(rps * seconds)
    return LocustRun(
        requests=requests,
        failures=failures,
        elapsed_s=seconds,
        histogram={10: requests // 2, 20: requests - requests // 2},
        cpu_warnings=cpu_warnings,
        cpu_percent=cpu_percent,
        load_cpus_busy_percent=load_cpus_busy_percent,
        files={"json": "read.json"},
    )


def make_cell(app: str, repeat: int, rps: dict[str, float], **run_options) -> Cell:
    cell = Cell(app=app, repeat=repeat, versions=VERSIONS[app])
    cell.idle = MemoryReading(70.0 + repeat, 60.0)
    cell.peak = MemoryReading(90.0 + repeat, 80.0)
    cell.after = MemoryReading(85.0 + repeat, 75.0)
    for name, value in rps.items():
        cell.problems[name] = []
        cell.runs[name] = locust_run(value, **run_options)
        if name == "write":
            cell.writes[name] = cell.runs[name].acknowledged
    return cell
