"""How the figures of a generated app's process are shown (Metric), and the phases a process
measures them in (PHASES): scale reports them, workers shows its own the same way, and losses
reads a scale run's by phase."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    label: str
    unit: str  # "s" or "MiB"
    digits: int


# What a process measures, phase by phase (process.py); each phase has the bound
# to itself, and a phase that does not finish leaves out the phases after it.
PHASES = {
    "start": ("import_s", "to_health_s", "rss_idle_mib", "uss_idle_mib"),
    "routes": ("routes_s", "rss_routes_mib", "uss_routes_mib"),
    "openapi": ("openapi_s", "rss_openapi_mib"),
}

# Every figure of a process, as the reports show it.
METRICS: dict[str, Metric] = {
    "import_s": Metric("import of the app module", "s", 2),
    "to_health_s": Metric("start-up to first /health", "s", 2),
    "rss_idle_mib": Metric("memory idle, RSS", "MiB", 1),
    "uss_idle_mib": Metric("memory idle, USS", "MiB", 1),
    "routes_s": Metric("first request to every route, in all", "s", 2),
    "rss_routes_mib": Metric("memory after every route once, RSS", "MiB", 1),
    "uss_routes_mib": Metric("memory after every route once, USS", "MiB", 1),
    "openapi_s": Metric("first /openapi.json", "s", 2),
    "rss_openapi_mib": Metric("memory after /openapi.json, RSS", "MiB", 1),
}
